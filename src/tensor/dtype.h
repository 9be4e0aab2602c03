// Element types of task tensors.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// Only fp32 runs end to end today; the others are parsed so a task file that names them gets a
/// clear "not supported yet" instead of a parse error.
enum class DType { kFloat32, kFloat16, kBFloat16, kInt32 };

Result<DType> ParseDType(std::string_view name);
const char* DTypeName(DType dtype);
size_t DTypeBytes(DType dtype);
/// Unit roundoff of the type (2^-24 for fp32).
double DTypeEpsilon(DType dtype);
/// The C type a kernel sees ("float").
const char* DTypeCType(DType dtype);

}  // namespace ksmith
