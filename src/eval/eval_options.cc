#include "eval/eval_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/files.h"
#include "core/strings.h"

namespace ksmith {

CandidateFormat FormatOfPath(std::string_view path) {
  return path.ends_with(".py") ? CandidateFormat::kKernelBench : CandidateFormat::kNative;
}

const char* CandidateFormatName(CandidateFormat format) {
  return format == CandidateFormat::kKernelBench ? "kernelbench" : "native";
}

Result<CandidateFormat> ParseCandidateFormat(std::string_view name) {
  for (const CandidateFormat format : {CandidateFormat::kNative, CandidateFormat::kKernelBench}) {
    if (name == CandidateFormatName(format)) return format;
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   "unknown candidate format '{}': choose native (ksmith's function contract) or kernelbench "
                   "(a Python file defining ModelNew, on a task imported from KernelBench)", name);
}

Result<CandidateSource> ReadCandidateSource(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return MakeError(ErrorKind::kInvalidArgument, "candidate {}: is a directory, not a source file", path);
  }
  const auto size = std::filesystem::file_size(path, error);
  const bool oversized = !error && size > kMaxCandidateBytes;
  auto text = oversized ? Result<std::string>(std::string()) : ReadFile(path, kMaxCandidateBytes);
  if (!text.ok()) return MakeError(ErrorKind::kInvalidArgument, "candidate {}", text.error().message);
  return CandidateSource{path, std::move(text.value()), error ? 0 : static_cast<size_t>(size), FormatOfPath(path)};
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
