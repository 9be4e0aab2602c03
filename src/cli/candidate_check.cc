#include "cli/candidate_check.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "eval/backend_registry.h"
#include "formats/format_registry.h"

namespace ksmith {

std::string CandidateMismatch(const std::string& path, const std::string& backend, const Task& task) {
  if (const Status usable = FormatRegistry::Global().ForPath(path).CheckTask(task); !usable.ok()) {
    return fmt::format("candidate {}: {}", path, usable.error().message);
  }
  const std::string extension = std::filesystem::path(path).extension().string();
  const BackendTraits own = TraitsOf(backend);
  const auto& others = own.other_source_extensions;
  if (extension.empty() || extension == own.source_extension ||
      std::find(others.begin(), others.end(), extension) != others.end()) {
    return {};
  }
  for (const auto& name : BackendRegistry::Global().Names()) {
    const BackendTraits other = TraitsOf(name);
    if (name != backend && other.source_extension == extension) {
      return fmt::format("candidate {} is {} source for the {} backend ({}), and the {} backend builds {} with {}: "
                         "add --backend {}", path, extension, name, other.compiler_name, backend, own.prompt.kernel_kind,
                         own.compiler_name, name);
    }
  }
  return {};
}

}  // namespace ksmith
