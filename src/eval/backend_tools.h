// What a backend adds to the commands that are not an evaluation: its part of `ksmith doctor`,
// and the cross-check of a task's own reference on its device for `ksmith tasks check`. Each is
// optional in the backend's registry entry (eval/backend_registry.h), so that these commands
// name no backend.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "binary/shared_library.h"
#include "task/task.h"

namespace ksmith {

/// A backend's part of `ksmith doctor`: JSON merged into the report (its `compilers` entries,
/// its device under its own key) and its lines of the text. Never an error: a backend that
/// cannot run here says why in its part.
struct DoctorSection {
  nlohmann::json json = nlohmann::json::object();
  std::string text;
};

/// `refresh`: measure the device again rather than read the cache.
using DoctorProbe = std::function<DoctorSection(const std::filesystem::path& cache_directory, bool refresh)>;

/// Runs a task's reference for the backend's device (cuda: reference.cu) on that device and
/// compares it with the CPU reference at the task's shapes.
class ReferenceCrossCheck {
 public:
  virtual ~ReferenceCrossCheck() = default;
  /// Empty when the cross-check can run on this machine; otherwise why not (no device, no compiler).
  virtual std::string WhyNot() const = 0;
  /// "agreed", "disagreed: ...", "failed: ...", or "skipped: ..." where the task has no reference
  /// for this device; empty where this machine cannot run it after all (WhyNot then says why:
  /// nvcc is found only when the first task needs it).
  virtual std::string Check(const Task& task, KernelEntry cpu_reference) = 0;
};

using CrossCheckFactory = std::function<std::unique_ptr<ReferenceCrossCheck>(const std::filesystem::path& cache_directory)>;

}  // namespace ksmith
