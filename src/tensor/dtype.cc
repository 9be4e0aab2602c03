#include "tensor/dtype.h"

namespace ksmith {

Result<DType> ParseDType(std::string_view name) {
  if (name == "fp32" || name == "float32") return DType::kFloat32;
  if (name == "fp16" || name == "float16") return DType::kFloat16;
  if (name == "bf16" || name == "bfloat16") return DType::kBFloat16;
  if (name == "int32") return DType::kInt32;
  return MakeError(ErrorKind::kParse, "unknown dtype '{}' (known: fp32, fp16, bf16, int32)", name);
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "fp32";
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kInt32: return "int32";
  }
  return "?";
}

size_t DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
  }
  return 0;
}

double DTypeEpsilon(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 0x1p-24;
    case DType::kFloat16: return 0x1p-11;
    case DType::kBFloat16: return 0x1p-8;
    case DType::kInt32: return 0;
  }
  return 0;
}

const char* DTypeCType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float";
    case DType::kFloat16: return "__half";
    case DType::kBFloat16: return "__nv_bfloat16";
    case DType::kInt32: return "int32_t";
  }
  return "?";
}

}  // namespace ksmith
