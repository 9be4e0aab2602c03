// The tasks `ksmith serve` judges against: the registry's, found by name and loaded once, and
// tasks made on the fly from a client's KernelBench reference (KernelGYM's `reference_code`). A
// reference is Python a client wrote: it is imported by `ksmith import kernelbench` in a child
// process (the importer's own sandboxed children run its code), never in the server's process,
// and cached by the content's hash, so that a trainer's thousand rollouts of one problem import it
// once.
#pragma once

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/result.h"
#include "task/registry.h"
#include "task/task.h"

namespace ksmith {

class ServedTasks {
 public:
  /// `cache_directory`: where references are imported (<cache>/served-tasks/<hash>/);
  /// `ksmith_executable`: the ksmith binary that imports them.
  ServedTasks(TaskRegistry registry, std::filesystem::path cache_directory, std::filesystem::path ksmith_executable);

  /// The task called `name`, loaded once; kNotFound says how to list them.
  Result<std::shared_ptr<const Task>> Find(const std::string& name);
  /// The task of a KernelBench problem's source, imported on first use. kInvalidArgument carries
  /// the importer's reason (no Model, get_inputs missing, a failing forward...).
  Result<std::shared_ptr<const Task>> FromReference(const std::string& reference_code);
  /// Every registered task: name, category.
  Result<std::vector<TaskEntry>> List() const { return registry_.List(); }

  /// How long one import may take [s].
  static constexpr int kImportTimeoutS = 600;

 private:
  using Loaded = Result<std::shared_ptr<const Task>>;
  /// Imports the reference (or finds the folder an earlier import left), outside the lock.
  Loaded Import(const std::string& hash, const std::string& reference_code);

  TaskRegistry registry_;
  std::filesystem::path imported_root_;
  std::filesystem::path ksmith_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Task>> loaded_;  // guarded by mutex_: by name or reference hash
  /// Imports under way, by hash: a second request of the same reference waits for the first's,
  /// and requests for other tasks never wait behind an import. Guarded by mutex_.
  std::map<std::string, std::shared_future<Loaded>> importing_;
};

}  // namespace ksmith
