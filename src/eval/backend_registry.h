// Where backends are found by name. Each backend registers one entry (its traits and a
// factory); adding a backend is a folder under backends/ plus one line in backend_registry.cc, and
// tests register their own. Nothing outside a backend's folder compares backend names.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "eval/backend.h"
#include "eval/backend_tools.h"

namespace ksmith {

/// What a backend is made from: configuration, never code.
struct BackendConfig {
  std::filesystem::path cache_directory;  // compiled kernels, measured facts, worker scratch
  std::string arch;                       // gpu backends: the target to build for; empty: the device found
  std::string device;                     // gpu backends: which device ("0", "1"); empty: the default one
  bool refresh_facts = false;             // measure the device's facts again instead of reading the cache
  bool measure_facts = true;              // false: only what is read without measuring (fast; for tests)
  /// Only the audits and the build will be asked for (`ksmith build`): a gpu backend then needs
  /// neither its worker nor a device, only its compiler, so that it runs where only the toolkit is.
  bool build_only = false;
  std::filesystem::path worker_executable;  // empty: the backend's worker beside this executable
  BuildLimits build_limits;                 // what each build may use (memory, CPU time)
  /// gpu backends: keep one pair of workers started ahead for the next verification (a command
  /// that judges many candidates); off, every verification starts its own.
  bool spare_workers = false;
  /// Where a backend reports trouble that does not stop it (facts it could not measure).
  std::function<void(const std::string&)> report_error;
};

using BackendFactory = std::function<Result<std::unique_ptr<EvalBackend>>(const BackendConfig&)>;

struct BackendEntry {
  BackendTraits traits;
  BackendFactory create;
  DoctorProbe doctor;             // optional: its part of `ksmith doctor`
  CrossCheckFactory cross_check;  // optional: `ksmith tasks check`'s run of its device's reference
};

/// Thread-safe.
class BackendRegistry {
 public:
  /// Every backend this build has (cpu, cuda, opencl).
  static BackendRegistry& Global();

  /// Adds a backend; kInvalidArgument when one of that name is registered already.
  Status Register(BackendEntry entry);
  /// The traits of the backend called `name`; kInvalidArgument, naming the choices, when unknown.
  Result<BackendTraits> Traits(const std::string& name) const;
  /// A new instance of the backend called `name`.
  Result<std::unique_ptr<EvalBackend>> Create(const std::string& name, const BackendConfig& config) const;
  /// Registered names, in registration order.
  std::vector<std::string> Names() const;
  /// The entry called `name`, copied out under the lock.
  std::optional<BackendEntry> Find(const std::string& name) const;

 private:
  mutable std::mutex mutex_;
  std::vector<BackendEntry> entries_;  // guarded by mutex_
};

/// The traits of the backend called `name` in the global registry; for a name it does not know
/// (a run stored by another build), plain traits of that name: a C++ kernel, no GPU.
BackendTraits TraitsOf(const std::string& name);

}  // namespace ksmith
