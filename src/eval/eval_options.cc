#include "eval/eval_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {

CandidateFormat FormatOfPath(std::string_view path) {
  return path.ends_with(".py") ? CandidateFormat::kKernelBench : CandidateFormat::kNative;
}

std::string UnusableSourceReason(const CandidateSource& candidate) {
  const std::string& text = candidate.text;
  const size_t bytes = std::max(text.size(), candidate.file_bytes);
  if (bytes > kMaxCandidateBytes) {
    return fmt::format("the candidate is {} bytes; sources over {} bytes are refused", bytes,
                       kMaxCandidateBytes);
  }
  if (Trim(text).empty()) return "the candidate file is empty";
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    return fmt::format("the candidate is not text: it holds a NUL byte at offset {}", nul);
  }
  return {};
}

}  // namespace ksmith
