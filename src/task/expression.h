// Integer arithmetic over named dims ("2*m*n*k", "4*(rows*cols + rows)"), for cost models.
// Hand-written: the grammar is four operators and parentheses, and a library (muparser) would
// evaluate in double and add a runtime dependency that the GPU machine lacks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

using DimValues = std::map<std::string, int64_t, std::less<>>;

/// Evaluates `text` with + - * / (integer division), parentheses, integer literals and dim names.
/// Errors name the offending token and its column.
Result<int64_t> EvaluateExpression(std::string_view text, const DimValues& dims);

}  // namespace ksmith
