#include "backends/cuda/worker_spares.h"

#include <signal.h>

#include <utility>

#include <fmt/format.h>

namespace ksmith {

CudaWorkerSpares::~CudaWorkerSpares() {
  std::lock_guard lock(mutex_);
  if (!spare_) return;
  // Both first, then the waits in the destructors: each exit releases a CUDA context.
  for (const auto* worker : {spare_->candidate.get(), spare_->reference.get()}) {
    if (worker) ::kill(worker->pid(), SIGKILL);
  }
  spare_.reset();
}

std::string CudaWorkerSpares::KeyOf(const EvalOptions& options) {
  std::string key = options.worker_executable.string() + '\n' + options.scratch_parent.string();
  for (const auto& entry : options.worker_environment) key += '\n' + entry;
  return key;
}

CudaWorkers CudaWorkerSpares::Take(const EvalOptions& options) {
  std::optional<CudaWorkers> spare;
  double started_ahead_s = 0;
  {
    std::lock_guard lock(mutex_);
    if (spare_ && spare_key_ == KeyOf(options)) {
      spare = std::move(spare_);
      started_ahead_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - spare_started_).count();
    }
    spare_.reset();
  }
  // A spare whose process died while it waited (killed, out of memory) is not handed out: the
  // candidate would be blamed for it.
  const auto alive = [](const std::unique_ptr<WorkerProcess>& worker) { return worker && worker->Waiting(); };
  CudaWorkers taken;
  if (!spare || !spare->start_error.empty() || !alive(spare->candidate) || !alive(spare->reference)) {
    taken = CudaWorkers::Start(options);
  } else {
    {
      std::lock_guard lock(mutex_);
      ++spares_taken_;
    }
    spare->candidate->set_cancel(options.cancel);
    spare->reference->set_cancel(options.cancel);
    spare->started_ahead_s = started_ahead_s;
    taken = std::move(*spare);
  }
  // Replaced as soon as taken: the next verification of a back-to-back series finds its
  // workers' contexts made while this one ran.
  Refill(options);
  return taken;
}

void CudaWorkerSpares::Refill(const EvalOptions& options) {
  {
    std::lock_guard lock(mutex_);
    if (spare_) return;
  }
  // Nobody's cancel flag: the verification that takes it sets its own.
  EvalOptions spare_options = options;
  spare_options.cancel = nullptr;
  CudaWorkers started = CudaWorkers::Start(spare_options);
  if (!started.start_error.empty()) return;  // the next verification starts its own and says why
  std::lock_guard lock(mutex_);
  if (spare_) return;  // another verification refilled first; `started` is killed on the way out
  spare_ = std::move(started);
  spare_key_ = KeyOf(options);
  spare_started_ = std::chrono::steady_clock::now();
}

int CudaWorkerSpares::spares_taken() const {
  std::lock_guard lock(mutex_);
  return spares_taken_;
}

}  // namespace ksmith
