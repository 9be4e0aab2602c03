// Element types of task tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// The fp32 (and int32) poison: a quiet NaN with a payload no arithmetic produces.
inline constexpr uint32_t kPoisonPattern32 = 0x7fc0dead;

/// Every type may be an input or an output. int32 outputs are indices, compared exactly; int32
/// inputs are drawn from an integer range (class labels, masks), never from a distribution.
enum class DType { kFloat32, kFloat16, kBFloat16, kInt32 };

Result<DType> ParseDType(std::string_view name);
const char* DTypeName(DType dtype);
size_t DTypeBytes(DType dtype);
/// Unit roundoff of the type (2^-24 for fp32).
double DTypeEpsilon(DType dtype);
/// The roundoff that a comparison's accumulation terms grow with: fp32's for every floating
/// type, because half-precision kernels must accumulate in fp32 (as cuBLAS and PyTorch's
/// reductions do); a sum kept in fp16 or bf16 is a precision downgrade and fails.
double ComparisonEpsilon(DType dtype);
/// The C type a CPU kernel sees: float, _Float16 (GCC's IEEE half), uint16_t for bf16 (its raw
/// bits: GCC 12 has no bf16 arithmetic type), int32_t.
const char* DTypeCType(DType dtype);
/// The C type a CUDA kernel sees: float, __half (cuda_fp16.h), __nv_bfloat16 (cuda_bf16.h), int32_t.
const char* DTypeCudaType(DType dtype);
/// A 4-byte fill pattern whose every element of `dtype` is a NaN no arithmetic produces, so an
/// output element still holding it was never written.
uint32_t DTypePoisonPattern(DType dtype);
bool IsFloatingPoint(DType dtype);

/// Round-to-nearest-even conversions between fp32 and the 16-bit formats, bit-exact with CUDA's
/// __float2half_rn / __float2bfloat16_rn.
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
uint16_t FloatToBf16Bits(float value);
float Bf16BitsToFloat(uint16_t bits);

/// Writes `count` floats as `dtype` elements at `out` (DTypeBytes(dtype) * count bytes).
/// For int32 the floats are integers (an integer draw's): each is stored rounded to the nearest.
void StoreAs(DType dtype, const float* values, size_t count, void* out);
/// Reads `count` elements of `dtype` as floats (exact for every fp16/bf16 value and every int32
/// below 2^24).
void LoadAsFloat(DType dtype, const void* data, size_t count, float* out);
/// Clears the sign of `count` elements of `dtype` in place (|x| for the reference's magnitude run).
void MakeAbsolute(DType dtype, void* data, size_t count);

}  // namespace ksmith
