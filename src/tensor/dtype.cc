#include "tensor/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

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

double ComparisonEpsilon(DType dtype) {
  return IsFloatingPoint(dtype) ? DTypeEpsilon(DType::kFloat32) : 0.0;
}

const char* DTypeCType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float";
    case DType::kFloat16: return "_Float16";
    case DType::kBFloat16: return "uint16_t";
    case DType::kInt32: return "int32_t";
  }
  return "?";
}

const char* DTypeCudaType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float";
    case DType::kFloat16: return "__half";
    case DType::kBFloat16: return "__nv_bfloat16";
    case DType::kInt32: return "int32_t";
  }
  return "?";
}

uint32_t DTypePoisonPattern(DType dtype) {
  // 0x7fad is a NaN in both fp16 (exponent 0x1f) and bf16 (exponent 0xff), with a payload that
  // no operation produces (hardware NaNs are 0x7e00 / 0x7fc0).
  return DTypeBytes(dtype) == 2 ? 0x7fad7fadu : kPoisonPattern32;
}

bool IsFloatingPoint(DType dtype) { return dtype != DType::kInt32; }

uint16_t FloatToHalfBits(float value) {
  // GCC's _Float16 conversion rounds to nearest even, subnormals and overflow included.
  const _Float16 half = static_cast<_Float16>(value);
  return std::bit_cast<uint16_t>(half);
}

float HalfBitsToFloat(uint16_t bits) { return static_cast<float>(std::bit_cast<_Float16>(bits)); }

uint16_t FloatToBf16Bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // stays a quiet NaN
  // Round to nearest even on the 16 bits that are dropped.
  const uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bf16BitsToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

void StoreAs(DType dtype, const float* values, size_t count, void* out) {
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(out, values, count * sizeof(float));
      return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      auto* target = static_cast<uint16_t*>(out);
      const bool half = dtype == DType::kFloat16;
      for (size_t i = 0; i < count; ++i) target[i] = half ? FloatToHalfBits(values[i]) : FloatToBf16Bits(values[i]);
      return;
    }
    case DType::kInt32: {
      // Integer inputs are drawn as integer-valued floats (an InputDraw's integers), exact below 2^24.
      auto* target = static_cast<int32_t*>(out);
      for (size_t i = 0; i < count; ++i) target[i] = static_cast<int32_t>(std::lrint(values[i]));
      return;
    }
  }
}

void LoadAsFloat(DType dtype, const void* data, size_t count, float* out) {
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(out, data, count * sizeof(float));
      return;
    case DType::kFloat16:
    case DType::kBFloat16: {
      const auto* source = static_cast<const uint16_t*>(data);
      const bool half = dtype == DType::kFloat16;
      for (size_t i = 0; i < count; ++i) out[i] = half ? HalfBitsToFloat(source[i]) : Bf16BitsToFloat(source[i]);
      return;
    }
    case DType::kInt32: {
      const auto* source = static_cast<const int32_t*>(data);
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(source[i]);
      return;
    }
  }
}

void MakeAbsolute(DType dtype, void* data, size_t count) {
  if (DTypeBytes(dtype) == 2) {
    auto* values = static_cast<uint16_t*>(data);
    for (size_t i = 0; i < count; ++i) values[i] &= 0x7fff;
  } else if (dtype == DType::kFloat32) {
    auto* values = static_cast<uint32_t*>(data);
    for (size_t i = 0; i < count; ++i) values[i] &= 0x7fffffffu;
  } else {
    auto* values = static_cast<int32_t*>(data);
    for (size_t i = 0; i < count; ++i) values[i] = values[i] < 0 ? -values[i] : values[i];
  }
}

}  // namespace ksmith
