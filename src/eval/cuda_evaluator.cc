#include "eval/cuda_evaluator.h"


#include "backend/cpu/disassembly.h"
#include "backend/cpu/elf_symbols.h"
#include "core/clock.h"
#include "core/files.h"
#include "core/strings.h"
#include "eval/audit.h"
#include "eval/cuda_audit.h"
#include "eval/cuda_session.h"
#include "eval/pipeline_steps.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;

constexpr size_t kMaxLogLines = 40;
constexpr size_t kMaxLogBytes = 4000;


std::string DisplayName(const CandidateSource& candidate) {
  const std::string name = std::filesystem::path(candidate.path).filename().string();
  return name.empty() ? "candidate.cu" : name;
}

class CudaEvaluationRun {
 public:
  CudaEvaluationRun(CudaBuildPool& pool, const std::shared_future<std::optional<GpuFacts>>& gpu, const EvalOptions& options,
                    const Task& task, const CandidateSource& candidate)
      : pool_(pool), gpu_(gpu), options_(options), task_(CudaView(task)), candidate_(candidate) {
    verdict_.task = task.name;
    verdict_.backend = "cuda";
    verdict_.candidate = candidate.path;
  }

  Verdict Run(std::future<Result<CudaBuildOutput>> build) {
    const auto start = Clock::now();
    secret_seed_ = EvaluationSeed(options_);
    FillProvenance();
    // The workers create their CUDA contexts while nvcc compiles. They are started from this
    // thread: a worker dies with the thread that spawned it (PR_SET_PDEATHSIG).
    CudaWorkers workers = CudaWorkers::Start(options_);
    if (!build.valid() && UnusableSourceReason(candidate_).empty()) {
      build = pool_.Submit(task_, {candidate_.text, DisplayName(candidate_), KernelRole::kCandidate, {}});
    }
    try {
      if (Audit() && Build(build) && BuildTrusted()) {
        Progress("verifying on the GPU");
        auto session = std::make_unique<CudaSession>(task_, options_, gpu_, verdict_, secret_seed_, std::move(workers));
        session->Run(candidate_object_, baseline_object_, reference_object_);
        // Releasing the case memory (shared and pinned, gigabytes for large shapes) takes time
        // of its own: the verdict says how much.
        const auto releasing = Clock::now();
        session.reset();
        StageRecord& release = Stage("release");
        release.seconds = SecondsSince(releasing);
        release.details["summary"] = "case memory and workers released";
      }
    } catch (const std::exception& error) {
      // A bug of ours: the stages so far stay in the verdict, and the one running says where.
      StageRecord& stage = verdict_.stages.empty() ? Stage("internal") : verdict_.stages.back();
      Finish(stage, VerdictStatus::kInfraError,
             fmt::format("internal error in the evaluator during {}: {}", stage.name, error.what()));
    }
    verdict_.total_s = SecondsSince(start);
    return std::move(verdict_);
  }

 private:
  void Progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  StageRecord& Stage(const std::string& name) { return recorder_.Stage(name); }
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason) {
    return recorder_.Finish(stage, status, std::move(reason));
  }

  void FillProvenance() {
    verdict_.provenance = CommonProvenance(options_, secret_seed_, task_, candidate_);
    const auto& info = pool_.compiler().info();
    verdict_.provenance["compiler"] = info.version;
    verdict_.provenance["flags"] = info.flags;
    verdict_.provenance["target"] = info.target.ToJson();
  }

  bool AuditFailure(StageRecord& stage, const std::vector<AuditFinding>& findings, const std::string& what) {
    return FinishAuditFailure(recorder_, stage, findings, what);
  }

  bool Audit() {
    return AuditCandidateSource(recorder_, candidate_, [this] { return AuditCudaSource(candidate_.text, task_); });
  }

  bool Build(std::future<Result<CudaBuildOutput>>& pending) {
    const auto start = Clock::now();
    auto& stage = Stage("build");
    Progress("building the candidate with nvcc");
    auto build = pending.get();
    stage.seconds = SecondsSince(start);
    if (!build.ok()) return Finish(stage, VerdictStatus::kInfraError, build.error().message);
    stage.details["cache_hit"] = build->cache_hit;
    stage.details["compile_s"] = build->compile_s;
    stage.details["compiler_sandboxed"] = build->sandboxed;
    stage.details["command"] = build->command;
    if (!build->compiled) {
      return FinishCompileFailure(recorder_, stage, build->log, task_, task_.CudaDeclaration(), "nvcc");
    }
    const auto resources = build->ToJson();
    stage.details["resources"] = resources.value("resources", nlohmann::json::array());
    stage.details["sass"] = resources.value("sass", nlohmann::json::object());
    candidate_object_ = build->shared_object;
    stage.details["shared_object"] = candidate_object_.string();
    auto symbols = ReadDynamicSymbols(candidate_object_);
    if (!symbols.ok()) return Finish(stage, VerdictStatus::kInfraError, symbols.error().message);
    auto findings = AuditCudaBinary(*symbols, task_);
    auto instructions = FindInstructions(candidate_object_, ForbiddenInstructions());
    if (!instructions.ok()) return Finish(stage, VerdictStatus::kInfraError, instructions.error().message);
    for (auto& finding : AuditInstructions(*instructions)) findings.push_back(std::move(finding));
    stage.details["summary"] = build->cache_hit ? "cached" : fmt::format("compiled in {:.2f} s", build->compile_s);
    if (!findings.empty()) return AuditFailure(Stage("binary_audit"), findings, "binary");
    return true;
  }

  bool BuildTrusted() {
    const auto start = Clock::now();
    auto& stage = Stage("trusted_build");
    const auto baseline_found = task_.baselines.find("cuda");
    if (!task_.cuda || baseline_found == task_.baselines.end()) {
      return Finish(stage, VerdictStatus::kInfraError, "the task has no [cuda] reference or [baseline.cuda]");
    }
    auto reference_text = ReadFile(task_.cuda->reference_source);
    auto baseline_text = ReadFile(baseline_found->second.source);
    if (!reference_text.ok()) return Finish(stage, VerdictStatus::kInfraError, reference_text.error().message);
    if (!baseline_text.ok()) return Finish(stage, VerdictStatus::kInfraError, baseline_text.error().message);
    auto reference = pool_.Submit(task_, {*reference_text, "reference.cu", KernelRole::kReference, {}});
    auto baseline = pool_.Submit(task_, {*baseline_text, "baseline_cuda.cu", KernelRole::kBaseline,
                                         baseline_found->second.libraries});
    auto reference_build = reference.get();
    auto baseline_build = baseline.get();
    stage.seconds = SecondsSince(start);
    for (auto* build : {&reference_build, &baseline_build}) {
      if (!build->ok()) return Finish(stage, VerdictStatus::kInfraError, build->error().message);
      if (!(*build)->compiled) {
        stage.details["log"] = TrimLog((*build)->log, kMaxLogLines, kMaxLogBytes);
        return Finish(stage, VerdictStatus::kInfraError, "the task's own CUDA reference or baseline does not compile");
      }
    }
    reference_object_ = reference_build->shared_object;
    baseline_object_ = baseline_build->shared_object;
    stage.details["summary"] = "GPU reference and baseline ready";
    return true;
  }

  CudaBuildPool& pool_;
  const std::shared_future<std::optional<GpuFacts>>& gpu_;
  const EvalOptions& options_;
  Task task_;
  const CandidateSource& candidate_;
  Verdict verdict_;
  VerdictRecorder recorder_{verdict_};
  uint64_t secret_seed_ = 0;
  std::filesystem::path candidate_object_;
  std::filesystem::path baseline_object_;
  std::filesystem::path reference_object_;
};

}  // namespace

Task CudaView(const Task& task) {
  Task view = task;
  if (task.cuda) {
    view.eval_shapes = task.cuda->eval_shapes;
    view.bench_shape = task.cuda->bench_shape;
  }
  return view;
}

std::future<Result<CudaBuildOutput>> CudaEvaluator::StartBuild(const Task& task,
                                                               const CandidateSource& candidate) const {
  if (!UnusableSourceReason(candidate).empty()) return {};
  return pool_.Submit(CudaView(task), {candidate.text, DisplayName(candidate), KernelRole::kCandidate, {}});
}

Verdict CudaEvaluator::Evaluate(const Task& task, const CandidateSource& candidate,
                                std::future<Result<CudaBuildOutput>> build) const {
  try {
    return CudaEvaluationRun(pool_, gpu_, options_, task, candidate).Run(std::move(build));
  } catch (const std::exception& error) {
    Verdict verdict;
    verdict.task = task.name;
    verdict.backend = "cuda";
    verdict.candidate = candidate.path;
    verdict.status = VerdictStatus::kInfraError;
    verdict.reason = fmt::format("internal error in the evaluator: {}", error.what());
    return verdict;
  }
}

}  // namespace ksmith
