#include "eval/pipeline.h"

#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/strings.h"
#include "eval/candidate_format.h"
#include "eval/gpu_gate.h"
#include "eval/pipeline_steps.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;

constexpr size_t kMaxLogLines = 40;
constexpr size_t kMaxLogBytes = 4000;

using CandidateJob = std::shared_ptr<const CandidateBuildJob>;

// The options the run uses: the caller's, with what only the pipeline may decide set by it.
EvalOptions RunOptions(const EvalOptions& given, const Result<CandidateJob>& job) {
  EvalOptions options = given;
  options.candidate_finish = false;
  options.default_stream_ordered = false;
  options.candidate_readable.clear();
  options.hidden_shapes_decide = true;
  if (job.ok()) (*job)->SetRunOptions(options);
  return options;
}

// The gate a build holds while it compiles: on a backend that times on the cores that compile,
// the device's gate, so that no build runs while another evaluation times (a build shares the
// cores as correctness work does). Null otherwise, or where the evaluation runs alone.
GpuGate* BuildGate(const EvalBackend& backend, GpuGate* gate) {
  return backend.traits().times_on_host_cores ? gate : nullptr;
}

// Queues one build; the job holds its own copies, so it may outlive the evaluation that asked
// for it (a failed audit returns at once). `backend` and `gate` outlive the pool's jobs.
std::future<Result<BuildOutput>> SubmitBuild(CompilePool& pool, const EvalBackend& backend, Task view,
                                             BuildRequest request, GpuGate* gate = nullptr) {
  return pool.Submit([&backend, view = std::move(view), request = std::move(request), gate] {
    GpuGate::Shared cores(gate);
    return backend.Build(view, request);
  });
}

// The candidate's build as its format planned it, holding the slots the format asks for.
std::future<Result<BuildOutput>> SubmitCandidateBuild(CompilePool& pool, const EvalBackend& backend, Task view,
                                                      CandidateJob job, GpuGate* gate = nullptr) {
  const size_t slots = job->slots();
  return pool.Submit(
      [&backend, view = std::move(view), job = std::move(job), gate] {
        GpuGate::Shared cores(gate);
        return job->Run(backend, view);
      },
      slots);
}

// One evaluation: the stages in order, each recorded into the verdict; the first that fails
// ends it with its status.
class PipelineRun {
 public:
  PipelineRun(const EvalBackend& backend, CompilePool& pool, const EvalOptions& options, const Task& task,
              const CandidateSource& candidate)
      : backend_(backend),
        pool_(pool),
        view_(backend.View(task)),
        candidate_(candidate),
        format_(FormatOf(candidate)),
        job_(format_.PlanBuild(candidate, view_, backend)),
        options_(RunOptions(options, job_)) {
    verdict_.task = task.name;
    verdict_.backend = backend.traits().name;
    verdict_.candidate = candidate.path;
  }

  Verdict Run(std::future<Result<BuildOutput>> build) {
    const auto start = Clock::now();
    secret_seed_ = EvaluationSeed(options_);
    if (job_.ok()) (*job_)->OpenVerdict(verdict_, view_);
    verdict_.provenance = CommonProvenance(options_, secret_seed_, view_, candidate_);
    verdict_.provenance.update(backend_.Provenance());
    try {
      if (const Status supported = backend_.Supports(view_); !supported.ok()) {
        Finish(recorder_.Stage(StageId::kAudit), VerdictStatus::kInfraError, supported.error().message);
      } else {
        RunStages(std::move(build));
      }
    } catch (const std::exception& error) {
      // A bug of ours: the stages so far stay in the verdict, and the one running says where.
      StageRecord& stage = verdict_.stages.empty() ? recorder_.Stage(StageId::kInternal) : verdict_.stages.back();
      Finish(stage, VerdictStatus::kInfraError,
             fmt::format("internal error in the evaluator during {}: {}", stage.name, error.what()));
    }
    AttachPendingSass();
    verdict_.total_s = SecondsSince(start);
    return std::move(verdict_);
  }

 private:
  void Progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }
  bool Finish(StageRecord& stage, VerdictStatus status, std::string reason,
              FailureKind kind = FailureKind::kInfrastructure) {
    return recorder_.Finish(stage, status, std::move(reason), kind);
  }
  // Between stages: a cancelled evaluation ends here, never as the candidate's verdict.
  bool Cancelled(StageId before) {
    if (!options_.Cancelled()) return false;
    Finish(recorder_.Stage(before), VerdictStatus::kInfraError, "the evaluation was cancelled", FailureKind::kCancelled);
    return true;
  }

  void RunStages(std::future<Result<BuildOutput>> build) {
    // The session starts its workers now (a CUDA context takes 0.3 s) while the build runs. It
    // is opened on this thread: a worker dies with the thread that spawned it (PR_SET_PDEATHSIG).
    std::unique_ptr<VerificationSession> session;
    std::optional<Error> unbuildable;  // a candidate its format cannot build for this task
    if (UnusableSourceReason(candidate_).empty()) {
      if (!job_.ok()) {
        unbuildable = job_.error();
      } else if (!build.valid()) {  // StartBuild was not asked
        build = SubmitCandidateBuild(pool_, backend_, view_, *job_, BuildGate(backend_, options_.gpu_gate));
      }
      if (build.valid() && !options_.build_only) session = backend_.OpenSession(view_, options_, verdict_, secret_seed_);
    }
    if (!Audit()) return;
    if (unbuildable) {
      auto& stage = recorder_.Stage(StageId::kBuild);
      stage.details.summary = unbuildable->message;
      Finish(stage, VerdictStatus::kCompileError, unbuildable->message, FailureKind::kUnusableSource);
      return;
    }
    if (options_.build_only) {
      Build(build);  // what it found is in the build stage; the status is set only by a failure
      return;
    }
    StartTrustedBuilds(session.get());
    if (Cancelled(StageId::kBuild) || !Build(build) || Cancelled(StageId::kTrustedBuild) || !BuildTrusted() || Cancelled(StageId::kVerify)) {
      return;
    }
    Progress("verifying the candidate");
    session->Run(candidate_object_, trusted_);
    (*job_)->CloseVerdict(verdict_);
    if (options_.Cancelled() && verdict_.status != VerdictStatus::kPassed) {
      // Whatever the workers said once they were stopped is not the candidate's doing.
      StageRecord& stage = verdict_.stages.back();
      stage.details.cancelled = true;
      stage.details.MutableFailure(FailureKind::kCancelled);
      verdict_.status = VerdictStatus::kInfraError;
      verdict_.reason = "the evaluation was cancelled";
    }
    // Releasing the case memory (shared and pinned, gigabytes for large shapes) takes time of
    // its own: the verdict says how much.
    const auto releasing = Clock::now();
    session.reset();
    StageRecord& release = recorder_.Stage(StageId::kRelease);
    release.seconds = SecondsSince(releasing);
    release.details.summary = "case memory and workers released";
    if (options_.profile && !options_.Cancelled()) {
      Progress("profiling the candidate");
      backend_.Profile(verdict_, view_);
    }
  }

  // The SASS summary was read beside verification; the build stage gets it now.
  void AttachPendingSass() {
    if (!pending_sass_.valid()) return;
    for (StageRecord& stage : verdict_.stages) {
      if (stage.Is(StageId::kBuild) && stage.details.build) stage.details.build->sass = pending_sass_.get();
    }
  }

  bool Audit() {
    const bool passed = AuditCandidateSource(
        recorder_, candidate_, [&]() { return format_.AuditSource(backend_, candidate_.text, view_); });
    if (const std::string summary = format_.AuditPassedSummary(); passed && !summary.empty()) {
      verdict_.stages.back().details.summary = summary;
    }
    return passed;
  }

  bool Build(std::future<Result<BuildOutput>>& pending) {
    const auto start = Clock::now();
    auto& stage = recorder_.Stage(StageId::kBuild);
    Progress("building the candidate");
    auto build = pending.get();
    stage.seconds = SecondsSince(start);
    if (!build.ok()) return Finish(stage, VerdictStatus::kInfraError, build.error().message);
    BuildFacts& facts = stage.details.build.emplace();
    facts.cache_hit = build->cache_hit;
    facts.compile_s = build->compile_s;
    facts.compiler_sandboxed = build->sandboxed;
    facts.command = build->command;
    const BackendTraits& traits = backend_.traits();
    // A limit stopped the compiler: what compiling it took, not the code as written, unless the log
    // also shows a breach of the contract, which decides first.
    if (!build->compiled && build->limit_hit && AuditBuildLog(build->log, view_).empty()) {
      stage.details.log = TrimLog(build->log, kMaxLogLines, kMaxLogBytes);
      // As after any compile_error of ksmith's contract, the log ends with what must be defined.
      stage.details.expected_signature = format_.ExpectedDeclaration(backend_, view_);
      facts.limit_exceeded = build->limit_hit->limit;
      facts.limit_value = build->limit_hit->value;
      stage.details.summary = build->limit_hit->reason;
      return Finish(stage, VerdictStatus::kCompileError, build->limit_hit->reason, FailureKind::kBuildLimit);
    }
    if (!build->compiled) {
      if (const auto words = format_.BuildFailure(build->log)) {
        stage.details.log = TrimLog(build->log, kMaxLogLines, kMaxLogBytes);
        stage.details.summary = words->summary;
        return Finish(stage, VerdictStatus::kCompileError, words->reason, FailureKind::kCompilerRejected);
      }
      return FinishCompileFailure(recorder_, stage, build->log, view_, format_.ExpectedDeclaration(backend_, view_),
                                  traits.compiler_name);
    }
    // What the device compiler reported (registers, spills, SASS); empty where it reports none.
    facts.resources = build->resources;
    facts.sass = build->sass;
    facts.vector_code = build->vector_code;
    pending_sass_ = build->pending_sass;
    facts.shared_object = build->shared_object.string();
    if (!build->build_sandbox.is_null()) facts.build_sandbox = build->build_sandbox;
    candidate_object_ = build->shared_object;
    auto findings = format_.AuditBinary(backend_, *build, view_);
    if (!findings.ok()) return Finish(stage, VerdictStatus::kInfraError, findings.error().message);
    stage.details.summary = (*job_)->BuildSummary(*build);
    if (!findings->empty()) return FinishAuditFailure(recorder_, recorder_.Stage(StageId::kBinaryAudit), *findings, "binary");
    return true;
  }

  // The task's reference and baseline are queued beside the candidate's build; they are
  // usually cached. Once they are there, the session may start what does not depend on the
  // candidate while the candidate still compiles.
  void StartTrustedBuilds(VerificationSession* session) {
    const auto start = Clock::now();
    auto sources = backend_.TrustedSources(view_);
    if (!sources.ok()) {
      trusted_error_ = sources.error().message;
      return;
    }
    reference_build_ = SubmitBuild(pool_, backend_, view_, sources->first, BuildGate(backend_, options_.gpu_gate));
    baseline_build_ = SubmitBuild(pool_, backend_, view_, sources->second, BuildGate(backend_, options_.gpu_gate));
    if (job_.ok()) second_baseline_ = (*job_)->StartSecondBaseline(pool_, backend_, view_, options_);
    if (session == nullptr) return;
    reference_build_.wait();
    baseline_build_.wait();
    trusted_wait_s_ = SecondsSince(start);
    const auto& reference = reference_build_.get();
    const auto& baseline = baseline_build_.get();
    if (reference.ok() && reference->compiled && baseline.ok() && baseline->compiled) {
      session->TrustedReady({reference->shared_object, baseline->shared_object});
    }
  }

  bool BuildTrusted() {
    const auto start = Clock::now();
    auto& stage = recorder_.Stage(StageId::kTrustedBuild);
    if (!trusted_error_.empty()) return Finish(stage, VerdictStatus::kInfraError, trusted_error_);
    const auto& reference_build = reference_build_.get();
    const auto& baseline_build = baseline_build_.get();
    stage.seconds = trusted_wait_s_ + SecondsSince(start);
    for (const auto* build : {&reference_build, &baseline_build}) {
      if (!build->ok()) return Finish(stage, VerdictStatus::kInfraError, build->error().message);
      if (!(*build)->compiled) {
        stage.details.log = TrimLog((*build)->log, kMaxLogLines, kMaxLogBytes);
        return Finish(stage, VerdictStatus::kInfraError, "the task's own reference or baseline does not compile");
      }
    }
    trusted_ = {reference_build->shared_object, baseline_build->shared_object};
    stage.details.summary = "reference and baseline ready";
    if (second_baseline_) second_baseline_->Finish(trusted_.second, stage.details.summary, options_.progress);
    return true;
  }

  const EvalBackend& backend_;
  CompilePool& pool_;
  const Task view_;
  const CandidateSource& candidate_;
  const CandidateFormat& format_;
  const Result<CandidateJob> job_;
  const EvalOptions options_;
  Verdict verdict_;
  VerdictRecorder recorder_{verdict_};
  uint64_t secret_seed_ = 0;
  std::filesystem::path candidate_object_;
  std::shared_future<SassSummary> pending_sass_;
  TrustedBuild trusted_;
  double trusted_wait_s_ = 0;  // waited before the candidate's build, for the session's sake
  std::string trusted_error_;
  std::shared_future<Result<BuildOutput>> reference_build_;
  std::shared_future<Result<BuildOutput>> baseline_build_;
  std::unique_ptr<SecondBaselineBuild> second_baseline_;  // the format's, where asked for
};

Verdict InternalErrorVerdict(const EvalBackend& backend, const Task& task, const CandidateSource& candidate,
                             const std::string& what) {
  Verdict verdict;
  verdict.task = task.name;
  verdict.backend = backend.traits().name;
  verdict.candidate = candidate.path;
  verdict.status = VerdictStatus::kInfraError;
  verdict.reason = fmt::format("internal error in the evaluator: {}", what);
  return verdict;
}

}  // namespace

std::future<Result<BuildOutput>> Pipeline::StartBuild(const Task& task, const CandidateSource& candidate) const {
  if (!UnusableSourceReason(candidate).empty()) return {};
  const Task view = backend_.View(task);
  auto job = FormatOf(candidate).PlanBuild(candidate, view, backend_);
  if (!job.ok()) return {};  // the run says why
  return SubmitCandidateBuild(pool_, backend_, view, std::move(job.value()));
}

Verdict Pipeline::Evaluate(const Task& task, const CandidateSource& candidate, const EvalOptions& options,
                           std::future<Result<BuildOutput>> build) const {
  try {
    return PipelineRun(backend_, pool_, options, task, candidate).Run(std::move(build));
  } catch (const std::exception& error) {
    return InternalErrorVerdict(backend_, task, candidate, error.what());
  }
}

}  // namespace ksmith
