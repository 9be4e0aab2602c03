#include "cli/candidate_evaluators.h"

#include <utility>

#include "eval/backend_registry.h"

namespace ksmith {
namespace {

class ServiceCandidateEvaluator : public CandidateEvaluator {
 public:
  ServiceCandidateEvaluator(EvalClient& client, std::shared_ptr<const Task> task, std::string backend,
                            EvalOptions options)
      : client_(client), task_(std::move(task)), backend_(std::move(backend)), options_(std::move(options)) {}

  std::future<Verdict> Submit(const CandidateSource& candidate) override { return SubmitWith(candidate, options_); }

  bool profiles() const override { return TraitsOf(backend_).profiles; }

  std::future<Verdict> SubmitProfiled(const CandidateSource& candidate) override {
    EvalOptions options = options_;
    options.profile = true;
    return SubmitWith(candidate, options);
  }

 private:
  std::future<Verdict> SubmitWith(const CandidateSource& candidate, const EvalOptions& options) {
    auto submitted = client_.Submit({"", task_, backend_, candidate, options});
    if (submitted.ok()) return std::move(submitted.value());
    // The service refused the job (it is shutting down): a verdict that says so, not the candidate's.
    Verdict verdict;
    verdict.task = task_->name;
    verdict.backend = backend_;
    verdict.candidate = candidate.path;
    verdict.status = VerdictStatus::kInfraError;
    verdict.reason = "the evaluation service refused the job: " + submitted.error().message;
    std::promise<Verdict> refused;
    refused.set_value(std::move(verdict));
    return refused.get_future();
  }

  EvalClient& client_;
  std::shared_ptr<const Task> task_;
  std::string backend_;
  EvalOptions options_;
};

}  // namespace

std::unique_ptr<CandidateEvaluator> MakeServiceCandidateEvaluator(EvalClient& client,
                                                                  std::shared_ptr<const Task> task,
                                                                  std::string backend, EvalOptions options) {
  return std::make_unique<ServiceCandidateEvaluator>(client, std::move(task), std::move(backend), std::move(options));
}

}  // namespace ksmith
