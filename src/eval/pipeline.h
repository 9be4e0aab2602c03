// The one evaluation pipeline of docs/design.md, for every backend: audit, build, binary
// audit, trusted build, then the backend's verification session, then release. The driver owns
// the order of the stages, the secret seed, provenance, cancellation and the mapping of every
// failure to a verdict status; the backend (eval/backend.h) supplies each stage's work.
#pragma once

#include <future>

#include "compile/build.h"
#include "core/result.h"
#include "eval/backend.h"
#include "eval/compile_pool.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

class Pipeline {
 public:
  /// `backend` and `pool` outlive the pipeline. Thread-safe: evaluations may run at once.
  Pipeline(const EvalBackend& backend, CompilePool& pool) : backend_(backend), pool_(pool) {}

  /// Queues the candidate's build on the compile pool now, so that it compiles while earlier
  /// candidates are verified. Empty when the source cannot be built at all (Evaluate says why).
  std::future<Result<BuildOutput>> StartBuild(const Task& task, const CandidateSource& candidate) const;

  /// Runs every stage. `build` comes from StartBuild; without one the build starts here.
  /// Never throws: what a candidate does becomes its verdict, and a bug of ours infra_error.
  Verdict Evaluate(const Task& task, const CandidateSource& candidate, const EvalOptions& options,
                   std::future<Result<BuildOutput>> build = {}) const;

  const EvalBackend& backend() const { return backend_; }

 private:
  const EvalBackend& backend_;
  CompilePool& pool_;
};

}  // namespace ksmith
