#include "tensor/npy.h"

#include <fmt/format.h>

#include "core/files.h"

namespace ksmith {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kHeaderAlignment = 64;  // numpy pads so that the data starts aligned
constexpr size_t kPreambleBytes = 10;    // magic (6), version (2), header length (2)
constexpr size_t kMaxHeaderBytes = 65535;  // version 1.0's 2-byte length

std::string ShapeTuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) tuple += fmt::format("{}{}", i > 0 ? ", " : "", shape[i]);
  return tuple + ")";
}

}  // namespace

const char* NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "<f4";
    case DType::kFloat16: return "<f2";
    case DType::kBFloat16: return "<u2";
    case DType::kInt32: return "<i4";
  }
  return "<u1";
}

std::string NpyHeader(std::string_view descr, const std::vector<int64_t>& shape) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, ShapeTuple(shape));
  // Padded with spaces so that preamble + dict + '\n' is a multiple of 64.
  const size_t unpadded = kPreambleBytes + dict.size() + 1;
  dict.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  dict += '\n';
  std::string header(kMagic);
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

Status WriteNpy(const std::filesystem::path& path, std::string_view descr, size_t element_bytes,
                const std::vector<int64_t>& shape, std::string_view data) {
  int64_t elements = 1;
  for (const int64_t dim : shape) elements *= dim;
  if (elements < 0 || static_cast<size_t>(elements) * element_bytes != data.size()) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: {} bytes do not hold shape {} of {}-byte elements",
                     path.string(), data.size(), ShapeTuple(shape), element_bytes);
  }
  std::string contents = NpyHeader(descr, shape);
  if (contents.size() - kPreambleBytes > kMaxHeaderBytes) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: shape {} is too long for an .npy 1.0 header", path.string(),
                     ShapeTuple(shape));
  }
  contents.append(data);
  return WriteFileAtomic(path, contents);
}

}  // namespace ksmith
