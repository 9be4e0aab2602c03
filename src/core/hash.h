// Content hashing for cache keys and provenance.
#pragma once

#include <string>
#include <string_view>

namespace ksmith {

/// SHA-256 of `data` as 64 lowercase hex characters.
std::string Sha256Hex(std::string_view data);

/// Incremental SHA-256 over several parts; each part is length-prefixed so that
/// ("ab", "c") and ("a", "bc") hash differently.
class Sha256Builder {
 public:
  Sha256Builder();
  ~Sha256Builder();
  Sha256Builder(const Sha256Builder&) = delete;
  Sha256Builder& operator=(const Sha256Builder&) = delete;

  Sha256Builder& Add(std::string_view part);
  std::string HexDigest();

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace ksmith
