#include "eval/backend_registry.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_tools.h"
#include "backends/opencl/opencl_backend.h"
#include "backends/opencl/opencl_tools.h"

namespace ksmith {

BackendRegistry& BackendRegistry::Global() {
  static BackendRegistry* registry = [] {
    auto* created = new BackendRegistry();
    // One line per backend.
    (void)created->Register({CpuBackendTraits(), MakeCpuBackend});
    (void)created->Register({CudaBackendTraits(), MakeCudaBackend, CudaDoctor, MakeCudaReferenceCrossCheck});
    (void)created->Register({OpenclBackendTraits(), MakeOpenclBackend, OpenclDoctor});
    return created;
  }();
  return *registry;
}

Status BackendRegistry::Register(BackendEntry entry) {
  std::lock_guard lock(mutex_);
  const bool taken = std::any_of(entries_.begin(), entries_.end(),
                                 [&entry](const BackendEntry& known) { return known.traits.name == entry.traits.name; });
  if (taken) return MakeError(ErrorKind::kInvalidArgument, "a backend named '{}' is registered already", entry.traits.name);
  entries_.push_back(std::move(entry));
  return {};
}

std::optional<BackendEntry> BackendRegistry::Find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  for (const auto& entry : entries_) {
    if (entry.traits.name == name) return entry;
  }
  return std::nullopt;
}

Result<BackendTraits> BackendRegistry::Traits(const std::string& name) const {
  if (auto entry = Find(name)) return std::move(entry->traits);
  return MakeError(ErrorKind::kInvalidArgument, "unknown backend '{}': choose {}", name, fmt::join(Names(), ", "));
}

Result<std::unique_ptr<EvalBackend>> BackendRegistry::Create(const std::string& name, const BackendConfig& config) const {
  auto entry = Find(name);
  if (!entry) return Traits(name).error();
  return entry->create(config);
}

BackendTraits TraitsOf(const std::string& name) {
  auto traits = BackendRegistry::Global().Traits(name);
  if (traits.ok()) return std::move(traits.value());
  BackendTraits plain = CpuBackendTraits();  // a C++ kernel, no GPU
  plain.name = name;
  plain.description.clear();
  return plain;
}

std::vector<std::string> BackendRegistry::Names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& entry : entries_) names.push_back(entry.traits.name);
  return names;
}

}  // namespace ksmith
