// Pre-started CUDA workers: a pair (candidate and reference worker) started and creating its
// CUDA contexts before the next candidate arrives, one spare per device, replaced as soon as it
// is taken. A candidate still gets processes nobody ran anything in before: only the start-up is
// done ahead, never a load or a call. For commands that judge many candidates (a spare nobody
// takes costs two contexts and their exit).
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>

#include "backends/cuda/cuda_session.h"

namespace ksmith {

class CudaWorkerSpares {
 public:
  CudaWorkerSpares() = default;
  /// Kills a spare nobody took.
  ~CudaWorkerSpares();
  CudaWorkerSpares(const CudaWorkerSpares&) = delete;
  CudaWorkerSpares& operator=(const CudaWorkerSpares&) = delete;

  /// A started pair for `options`: the spare where one was started for the same worker,
  /// environment and scratch folder and both its processes still wait, else one started now.
  /// Then starts the next spare.
  CudaWorkers Take(const EvalOptions& options);
  /// Starts the spare for `options` where none is held (one could not be started at Take).
  void Refill(const EvalOptions& options);

  /// Takes so far that got a spare (for tests and the benchmark).
  int spares_taken() const;

 private:
  static std::string KeyOf(const EvalOptions& options);

  mutable std::mutex mutex_;
  std::optional<CudaWorkers> spare_;  // guarded by mutex_
  std::string spare_key_;             // guarded by mutex_
  std::chrono::steady_clock::time_point spare_started_;  // guarded by mutex_
  int spares_taken_ = 0;              // guarded by mutex_
};

}  // namespace ksmith
