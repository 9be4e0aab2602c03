#include "core/hash.h"

#include <openssl/evp.h>

#include <cstdint>
#include <stdexcept>

namespace ksmith {
namespace {

std::string ToHex(const unsigned char* bytes, unsigned int length) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(length * 2, '0');
  for (unsigned int i = 0; i < length; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return hex;
}

}  // namespace

struct Sha256Builder::Impl {
  EVP_MD_CTX* context = nullptr;
};

Sha256Builder::Sha256Builder() : impl_(new Impl) {
  impl_->context = EVP_MD_CTX_new();
  if (impl_->context == nullptr || EVP_DigestInit_ex(impl_->context, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL could not initialise SHA-256");
  }
}

Sha256Builder::~Sha256Builder() {
  EVP_MD_CTX_free(impl_->context);
  delete impl_;
}

Sha256Builder& Sha256Builder::Add(std::string_view part) {
  const uint64_t length = part.size();
  EVP_DigestUpdate(impl_->context, &length, sizeof(length));
  EVP_DigestUpdate(impl_->context, part.data(), part.size());
  return *this;
}

std::string Sha256Builder::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(impl_->context, digest, &length);
  return ToHex(digest, length);
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr);
  return ToHex(digest, length);
}

}  // namespace ksmith
