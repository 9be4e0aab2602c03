#include "cli/candidate_evaluators.h"

#include "eval/cuda_evaluator.h"

namespace ksmith {
namespace {

class CpuCandidateEvaluator : public CandidateEvaluator {
 public:
  CpuCandidateEvaluator(const Task& task, const CpuContext& context, EvalOptions options)
      : task_(task), evaluator_(context.compiler, context.machine, std::move(options)) {}
  Verdict Evaluate(const CandidateSource& candidate) override { return evaluator_.Evaluate(task_, candidate); }

 private:
  const Task& task_;
  Evaluator evaluator_;
};

class CudaCandidateEvaluator : public CandidateEvaluator {
 public:
  CudaCandidateEvaluator(const Task& task, CudaContext& context, EvalOptions options)
      : task_(task), evaluator_(*context.pool, context.gpu, std::move(options)) {}
  Verdict Evaluate(const CandidateSource& candidate) override { return evaluator_.Evaluate(task_, candidate); }

 private:
  const Task& task_;
  CudaEvaluator evaluator_;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> MakeCpuCandidateEvaluator(const Task& task, const CpuContext& context,
                                                              EvalOptions options) {
  return std::make_unique<CpuCandidateEvaluator>(task, context, std::move(options));
}

std::unique_ptr<CandidateEvaluator> MakeCudaCandidateEvaluator(const Task& task, CudaContext& context,
                                                               EvalOptions options) {
  return std::make_unique<CudaCandidateEvaluator>(task, context, std::move(options));
}

}  // namespace ksmith
