#include "formats/format_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "kernelbench/kernelbench_format.h"

namespace ksmith {

const FormatRegistry& FormatRegistry::Global() {
  static const FormatRegistry* registry = [] {
    auto* created = new FormatRegistry();
    // One line per format; the native one first.
    (void)created->Register(NativeModelFormat());
    (void)created->Register(KernelBenchModelFormat());
    return created;
  }();
  return *registry;
}

Status FormatRegistry::Register(const ModelFormat& format) {
  const std::string& name = format.format().name();
  const bool taken = std::any_of(formats_.begin(), formats_.end(),
                                 [&name](const ModelFormat* known) { return known->format().name() == name; });
  if (taken) return MakeError(ErrorKind::kInvalidArgument, "a candidate format named '{}' is registered already", name);
  formats_.push_back(&format);
  return {};
}

Result<const ModelFormat*> FormatRegistry::Find(std::string_view name) const {
  for (const ModelFormat* format : formats_) {
    if (format->format().name() == name) return format;
  }
  // "native (ksmith's function contract) or kernelbench (a Python file defining ModelNew, ...)"
  std::string choices;
  for (size_t i = 0; i < formats_.size(); ++i) {
    if (i > 0) choices += i + 1 == formats_.size() ? " or " : ", ";
    const CandidateFormat& format = formats_[i]->format();
    choices += fmt::format("{} ({})", format.name(), format.description());
  }
  return MakeError(ErrorKind::kInvalidArgument, "unknown candidate format '{}': choose {}", name, choices);
}

const ModelFormat& FormatRegistry::ForPath(std::string_view path) const {
  for (const ModelFormat* format : formats_) {
    if (format->format().ClaimsPath(path)) return *format;
  }
  return NativeModelFormat();
}

std::vector<std::string> FormatRegistry::Names() const {
  std::vector<std::string> names;
  for (const ModelFormat* format : formats_) names.push_back(format->format().name());
  return names;
}

Result<CandidateSource> ReadCandidateFile(const std::string& path) {
  auto candidate = ReadCandidateSource(path);
  if (candidate.ok()) candidate->format = &FormatRegistry::Global().ForPath(path).format();
  return candidate;
}

}  // namespace ksmith
