// The C signature a candidate must define, parsed from the task file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ksmith {

struct SignatureParameter {
  std::string name;
  std::string base_type;  // "float", "int64_t", ...
  bool is_pointer = false;
  bool is_const = false;

  /// "const float* x"
  std::string Declaration() const;
};

struct Signature {
  std::string function;
  std::vector<SignatureParameter> parameters;

  /// `extern "C" void f(...)`, with an optional trailing parameter (CUDA's stream).
  std::string Declaration() const;
};

/// Parses "void name(type a, type b, ...)". Types: `[const] T*` or `T` for a scalar.
Result<Signature> ParseSignature(std::string_view text);

}  // namespace ksmith
