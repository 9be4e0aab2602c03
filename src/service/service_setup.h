// The evaluation service as the commands start it: one device of the chosen backend on this
// machine, in the cache folder, with a worker count that suits the backend.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "service/local_eval_service.h"

namespace ksmith {

/// Evaluations at once on one device when the user does not say: a GPU is shared by a few
/// (correctness overlaps, timing takes turns); the cpu's timing needs every core, so one.
size_t DefaultVerificationWorkers(const BackendTraits& traits);

struct LocalServiceRequest {
  std::string backend;
  std::string arch;     // gpu backends: the target to build for; empty: the device found
  size_t workers = 0;   // per device; 0: DefaultVerificationWorkers
  /// The backend's devices to use ("0", "1": for a GPU, its CUDA_VISIBLE_DEVICES index); empty:
  /// its default device alone.
  std::vector<std::string> devices;
  BuildLimits build_limits;  // what each build may use
  size_t queue_capacity = 0; // jobs waiting for a worker before Submit waits; 0: the service's default
  /// GPU backends: one pair of workers started ahead per device (backends/cuda/worker_spares.h), for
  /// commands that judge more than one candidate.
  bool spare_workers = false;
};

/// The build limits that `--build-memory-gib` and `--build-cpu-s` (or ksmith.toml's [eval]
/// build_memory_gib and build_cpu_s) give; a value unset or 0 keeps the default.
BuildLimits BuildLimitsFrom(std::optional<double> memory_gib, std::optional<double> cpu_s);

/// Starts a LocalEvalService with `request.devices` of `request.backend` (or its default one). The error says what is
/// missing: kInvalidArgument for the user's mistakes (unknown backend, bad arch), else this
/// machine's (no GPU, no compiler).
Result<std::unique_ptr<LocalEvalService>> StartLocalService(const LocalServiceRequest& request);

}  // namespace ksmith
