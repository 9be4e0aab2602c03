// The evaluation pipeline of DESIGN.md for the cuda backend: audit, nvcc build (overlapping
// with the workers' CUDA start-up), binary audit, trusted builds, then the GPU stages of
// eval/cuda_session.h. Same statuses and verdict as the CPU evaluator.
#pragma once

#include <future>
#include <optional>

#include "backend/cuda/build_pool.h"
#include "backend/cuda/gpu_facts.h"
#include "eval/evaluator.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

/// The task as the GPU sees it: its [cuda] eval and bench shapes in place of the CPU ones.
Task CudaView(const Task& task);

class CudaEvaluator {
 public:
  /// `gpu`: the GPU's facts, possibly still being measured (see CudaSession).
  CudaEvaluator(CudaBuildPool& pool, std::shared_future<std::optional<GpuFacts>> gpu, EvalOptions options)
      : pool_(pool), gpu_(std::move(gpu)), options_(std::move(options)) {}

  /// Queues the candidate's build now, so that it compiles while earlier candidates are timed.
  std::future<Result<CudaBuildOutput>> StartBuild(const Task& task, const CandidateSource& candidate) const;

  /// Never throws for anything a candidate does; infrastructure failures become infra_error.
  /// `build` comes from StartBuild; without one the build starts here.
  Verdict Evaluate(const Task& task, const CandidateSource& candidate,
                   std::future<Result<CudaBuildOutput>> build = {}) const;

 private:
  CudaBuildPool& pool_;
  std::shared_future<std::optional<GpuFacts>> gpu_;
  EvalOptions options_;
};

}  // namespace ksmith
