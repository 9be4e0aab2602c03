#include "eval/candidate_format.h"

#include <fmt/format.h>

#include "eval/native_format.h"

namespace ksmith {
namespace {

// A second baseline was asked for, but this candidate's format has none: the note says so, and
// the verdict stands on the task's own baseline.
class NoSecondBaseline final : public SecondBaselineBuild {
 public:
  void Finish(SecondBaseline& second, std::string& summary,
              const std::function<void(const std::string&)>& progress) override {
    (void)summary, (void)progress;
    second.note =
        "no torch.compile baseline: only a KernelBench-format candidate (a .py defining ModelNew) on the GPU has one";
  }
};

}  // namespace

std::unique_ptr<SecondBaselineBuild> CandidateBuildJob::StartSecondBaseline(CompilePool& pool,
                                                                            const EvalBackend& backend,
                                                                            const Task& view,
                                                                            const EvalOptions& options) const {
  (void)pool, (void)backend, (void)view;
  if (!options.format_options.second_baseline) return nullptr;
  return std::make_unique<NoSecondBaseline>();
}

std::string CandidateBuildJob::BuildSummary(const BuildOutput& build) const {
  return build.cache_hit ? "cached" : fmt::format("compiled in {:.2f} s", build.compile_s);
}

const CandidateFormat& FormatOf(const CandidateSource& candidate) {
  return candidate.format != nullptr ? *candidate.format : NativeFormat();
}

}  // namespace ksmith
