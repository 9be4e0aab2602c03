#include "eval/eval_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/files.h"
#include "core/strings.h"

namespace ksmith {

Result<CandidateSource> ReadCandidateSource(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return MakeError(ErrorKind::kInvalidArgument, "candidate {}: is a directory, not a source file", path);
  }
  const auto size = std::filesystem::file_size(path, error);
  const bool oversized = !error && size > kMaxCandidateBytes;
  auto text = oversized ? Result<std::string>(std::string()) : ReadFile(path, kMaxCandidateBytes);
  if (!text.ok()) return MakeError(ErrorKind::kInvalidArgument, "candidate {}", text.error().message);
  return CandidateSource{path, std::move(text.value()), error ? 0 : static_cast<size_t>(size), nullptr};
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
