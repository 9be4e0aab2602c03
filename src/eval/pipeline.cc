#include "eval/pipeline.h"

#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/strings.h"
#include "eval/gpu_gate.h"
#include "eval/pipeline_steps.h"
#include "kernelbench/build_sandbox.h"
#include "kernelbench/candidate.h"
#include "kernelbench/candidate_build.h"
#include "kernelbench/compiled_baseline.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;

constexpr size_t kMaxLogLines = 40;
constexpr size_t kMaxLogBytes = 4000;

std::string DisplayName(const CandidateSource& candidate, const BackendTraits& traits) {
  const std::string name = std::filesystem::path(candidate.path).filename().string();
  return name.empty() ? "candidate" + traits.source_extension : name;
}

bool KernelBenchFormat(const CandidateSource& candidate) { return candidate.format == CandidateFormat::kKernelBench; }

// A KernelBench-format candidate's build: its build sandbox, then the shim that loads what that
// built into the worker.
struct KernelBenchJob {
  nlohmann::json analysis;
  CandidateBuildPlan plan;
  std::string source;
  std::string display_name;
  bool cuda = false;
};

// What the candidate's build job does: compile its source, or build a KernelBench candidate.
struct CandidateJob {
  BuildRequest request;
  std::optional<KernelBenchJob> kernelbench;
};

Result<CandidateJob> MakeCandidateJob(const CandidateSource& candidate, const Task& task, const EvalBackend& backend) {
  const BackendTraits& traits = backend.traits();
  if (!KernelBenchFormat(candidate)) {
    return CandidateJob{BuildRequest{candidate.text, DisplayName(candidate, traits), KernelRole::kCandidate, {}}, {}};
  }
  auto analysis = LoadKernelBenchAnalysis(task);
  if (!analysis.ok()) return analysis.error();
  if (traits.gpu && !task.cuda) {
    return MakeError(ErrorKind::kInvalidArgument, "task {} has no [cuda] (it was imported with a torch without CUDA): "
                     "re-import it on the GPU machine to judge a KernelBench candidate there", task.name);
  }
  if (backend.CacheDirectory().empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "the {} backend keeps no build cache, which a KernelBench candidate's "
                     "build needs: use --backend cpu or cuda", traits.name);
  }
  KernelBenchJob job{*analysis, PlanCandidateBuild(backend.CacheDirectory(), *analysis, task, candidate.text, traits.gpu),
                     candidate.text, DisplayName(candidate, traits), traits.gpu};
  return CandidateJob{{}, std::move(job)};
}

// Runs in the compile pool: the build sandbox (cached by content), then the shim's compile. A
// candidate that does not import or whose extension does not compile is a failed build with the
// build sandbox's log.
Result<BuildOutput> BuildKernelBench(const EvalBackend& backend, const Task& view, const KernelBenchJob& job) {
  auto sandbox = BuildCandidate(job.plan, job.analysis, view, job.source, job.display_name, job.cuda, backend.Limits());
  if (!sandbox.ok()) return sandbox.error();
  if (!sandbox->built) {
    BuildOutput failed;
    failed.log = sandbox->log;
    failed.command = sandbox->command;
    failed.compile_s = sandbox->seconds;
    failed.sandboxed = sandbox->sandboxed;
    failed.limit_hit = sandbox->limit_hit;
    return failed;
  }
  auto shim = RenderKernelBenchCandidate(job.analysis, job.source, job.display_name, job.cuda, job.plan.directory,
                                         sandbox->manifest);
  if (!shim.ok()) return shim.error();
  const BackendTraits& traits = backend.traits();
  auto output = backend.Build(view, BuildRequest{*shim, "modelnew_shim" + traits.source_extension, KernelRole::kCandidate, {}});
  if (!output.ok()) return output;
  output->cache_hit = output->cache_hit && sandbox->cache_hit;
  output->compile_s += sandbox->seconds;
  output->sandboxed = output->sandboxed && sandbox->sandboxed;
  output->command = output->command.empty() ? sandbox->command : sandbox->command + "; then the shim: " + output->command;
  if (!output->compiled) return output;  // ksmith's own shim: the log says why
  output->log = sandbox->log + output->log;
  output->build_sandbox = sandbox->manifest;
  output->build_sandbox["directory"] = job.plan.directory.string();
  output->build_sandbox["seconds"] = sandbox->seconds;
  output->build_sandbox["peak_memory_bytes"] = sandbox->peak_memory_bytes;
  output->build_sandbox["cache_hit"] = sandbox->cache_hit;
  return output;
}

// torch.compile of the problem's Model as a second baseline: the warm step (cached), then its
// shim, built like the task's own baseline. Not compiled (with the warm step's log) where this
// torch has no torch.compile or inductor cannot compile the model.
Result<BuildOutput> BuildCompiledBaseline(const EvalBackend& backend, const Task& view, const nlohmann::json& analysis) {
  const CompiledBaselinePlan plan = PlanCompiledBaseline(backend.CacheDirectory(), analysis, view);
  auto warm = WarmCompiledBaseline(plan, analysis, view);
  if (!warm.ok()) return warm.error();
  if (!warm->warmed) {
    BuildOutput failed;
    failed.log = warm->log;
    failed.compile_s = warm->seconds;
    return failed;
  }
  auto shim = RenderCompiledBaseline(analysis, plan, warm->manifest);
  if (!shim.ok()) return shim.error();
  auto output = backend.Build(view, BuildRequest{*shim, "compiled_baseline" + backend.traits().source_extension,
                                                 KernelRole::kBaseline, {}});
  if (output.ok()) {
    output->compile_s += warm->seconds;
    output->build_sandbox = {{"directory", plan.directory.string()}, {"torch", warm->manifest.value("torch", "")}};
  }
  return output;
}

// The last line the warm step's Python said, for a verdict's note.
std::string LastLogLine(const std::string& log) {
  std::string last;
  for (const auto& line : SplitLines(log)) {
    if (!Trim(line).empty()) last = std::string(Trim(line));
  }
  return last.empty() ? "no output" : last;
}

// Why a KernelBench candidate's build failed, from its build sandbox's log: the build script's
// last word and the Python exception behind it.
std::string KernelBenchBuildFailure(const std::string& log) {
  std::string said;
  for (const auto& line : SplitLines(log)) {
    if (line.starts_with("ksmith: ")) said = std::string(line.substr(8));
  }
  if (said.empty()) said = "the build sandbox ended without saying why (see the log)";
  const std::string exception = RaisedPythonException(log);
  return exception.empty() ? fmt::format("the candidate does not build: {}", said)
                           : fmt::format("the candidate does not build: {}: {}", said, exception);
}

// The options the run uses: the caller's, with what only the pipeline may decide set by it.
EvalOptions RunOptions(const EvalOptions& given, const Result<CandidateJob>& job) {
  EvalOptions options = given;
  options.candidate_finish = false;
  options.default_stream_ordered = false;
  options.candidate_readable.clear();
  if (job.ok() && job->kernelbench) {
    options.candidate_finish = true;
    options.default_stream_ordered = true;
    options.candidate_readable.push_back(job->kernelbench->plan.directory);
  }
  // KernelBench's problems are fixed-shape: their hidden shapes are a property of the candidate.
  options.hidden_shapes_decide = !(job.ok() && job->kernelbench);
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

std::future<Result<BuildOutput>> SubmitCandidateBuild(CompilePool& pool, const EvalBackend& backend, Task view,
                                                      CandidateJob job, GpuGate* gate = nullptr) {
  if (!job.kernelbench) return SubmitBuild(pool, backend, std::move(view), std::move(job.request), gate);
  // python and its compilers are held to kBuildSandboxSlots limits together (BuildSandboxLimits).
  return pool.Submit(
      [&backend, view = std::move(view), job = std::move(*job.kernelbench), gate] {
        GpuGate::Shared cores(gate);
        return BuildKernelBench(backend, view, job);
      },
      kBuildSandboxSlots);
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
        job_(MakeCandidateJob(candidate, view_, backend)),
        options_(RunOptions(options, job_)) {
    verdict_.task = task.name;
    verdict_.backend = backend.traits().name;
    verdict_.candidate = candidate.path;
  }

  Verdict Run(std::future<Result<BuildOutput>> build) {
    const auto start = Clock::now();
    secret_seed_ = EvaluationSeed(options_);
    if (!options_.hidden_shapes_decide) {
      Generalization& shapes = verdict_.generalization.emplace();
      shapes.decided_at = view_.FormatShape(view_.bench_shape);
      shapes.problem_sizes = ProblemSizesWhereReduced(job_->kernelbench->analysis, view_.bench_shape);
    }
    verdict_.provenance = CommonProvenance(options_, secret_seed_, view_, candidate_);
    verdict_.provenance.update(backend_.Provenance());
    try {
      if (const Status supported = backend_.Supports(view_); !supported.ok()) {
        Finish(recorder_.Stage("audit"), VerdictStatus::kInfraError, supported.error().message);
      } else {
        RunStages(std::move(build));
      }
    } catch (const std::exception& error) {
      // A bug of ours: the stages so far stay in the verdict, and the one running says where.
      StageRecord& stage = verdict_.stages.empty() ? recorder_.Stage("internal") : verdict_.stages.back();
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
  bool Cancelled(const char* before) {
    if (!options_.Cancelled()) return false;
    Finish(recorder_.Stage(before), VerdictStatus::kInfraError, "the evaluation was cancelled", FailureKind::kCancelled);
    return true;
  }

  void RunStages(std::future<Result<BuildOutput>> build) {
    // The session starts its workers now (a CUDA context takes 0.3 s) while the build runs. It
    // is opened on this thread: a worker dies with the thread that spawned it (PR_SET_PDEATHSIG).
    std::unique_ptr<VerificationSession> session;
    std::optional<Error> unbuildable;  // a KernelBench candidate with no shim for this task
    if (UnusableSourceReason(candidate_).empty()) {
      if (!job_.ok()) {
        unbuildable = job_.error();
      } else if (!build.valid()) {  // StartBuild was not asked
        build = SubmitCandidateBuild(pool_, backend_, view_, *job_, BuildGate(backend_, options_.gpu_gate));
      }
      if (build.valid()) session = backend_.OpenSession(view_, options_, verdict_, secret_seed_);
    }
    if (!Audit()) return;
    if (unbuildable) {
      auto& stage = recorder_.Stage("build");
      stage.details.summary = unbuildable->message;
      Finish(stage, VerdictStatus::kCompileError, unbuildable->message, FailureKind::kUnusableSource);
      return;
    }
    StartTrustedBuilds(session.get());
    if (Cancelled("build") || !Build(build) || Cancelled("trusted_build") || !BuildTrusted() || Cancelled("verify")) {
      return;
    }
    Progress("verifying the candidate");
    session->Run(candidate_object_, trusted_);
    if (verdict_.status == VerdictStatus::kPassed && verdict_.generalization &&
        verdict_.generalization->generalizes) {
      verdict_.reason += *verdict_.generalization->generalizes ? "; generalizes to the hidden shapes"
                                                               : "; does not generalize to the hidden shapes";
    }
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
    StageRecord& release = recorder_.Stage("release");
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
      if (stage.name == "build" && stage.details.build) stage.details.build->sass = pending_sass_.get();
    }
  }

  bool Audit() {
    const bool kernelbench = KernelBenchFormat(candidate_);
    const bool passed = AuditCandidateSource(recorder_, candidate_, [&]() -> std::vector<AuditFinding> {
      // KernelBench's Python is not C++: it runs inside the worker's walls, under its checks.
      return kernelbench ? std::vector<AuditFinding>{} : backend_.AuditSource(candidate_.text, view_);
    });
    if (passed && kernelbench) {
      verdict_.stages.back().details.summary =
          "KernelBench format (ModelNew in Python): no C++ to audit; it runs in the sandboxed worker";
    }
    return passed;
  }

  bool Build(std::future<Result<BuildOutput>>& pending) {
    const auto start = Clock::now();
    auto& stage = recorder_.Stage("build");
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
      if (!KernelBenchFormat(candidate_)) stage.details.expected_signature = backend_.Declaration(view_);
      facts.limit_exceeded = build->limit_hit->limit;
      facts.limit_value = build->limit_hit->value;
      stage.details.summary = build->limit_hit->reason;
      return Finish(stage, VerdictStatus::kCompileError, build->limit_hit->reason, FailureKind::kBuildLimit);
    }
    if (!build->compiled && KernelBenchFormat(candidate_)) {
      stage.details.log = TrimLog(build->log, kMaxLogLines, kMaxLogBytes);
      stage.details.summary = "the build sandbox could not import the candidate or compile its extension";
      return Finish(stage, VerdictStatus::kCompileError, KernelBenchBuildFailure(build->log), FailureKind::kCompilerRejected);
    }
    if (!build->compiled) {
      return FinishCompileFailure(recorder_, stage, build->log, view_, backend_.Declaration(view_),
                                  traits.compiler_name);
    }
    // What the device compiler reported (registers, spills, SASS); empty where it reports none.
    facts.resources = build->resources;
    facts.sass = build->sass;
    pending_sass_ = build->pending_sass;
    facts.shared_object = build->shared_object.string();
    if (!build->build_sandbox.is_null()) facts.build_sandbox = build->build_sandbox;
    candidate_object_ = build->shared_object;
    // A KernelBench candidate's object is ksmith's own shim (it loads libpython): nothing to audit.
    auto findings = KernelBenchFormat(candidate_) ? Result<std::vector<AuditFinding>>(std::vector<AuditFinding>{})
                                                  : backend_.AuditBinary(*build, view_);
    if (!findings.ok()) return Finish(stage, VerdictStatus::kInfraError, findings.error().message);
    stage.details.summary = build->cache_hit ? "cached" : fmt::format("compiled in {:.2f} s", build->compile_s);
    if (!findings->empty()) return FinishAuditFailure(recorder_, recorder_.Stage("binary_audit"), *findings, "binary");
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
    if (options_.compiled_baseline && job_.ok() && job_->kernelbench && job_->kernelbench->cuda) {
      compiled_build_ = pool_.Submit([&backend = backend_, view = view_, analysis = job_->kernelbench->analysis] {
        return BuildCompiledBaseline(backend, view, analysis);
      });
    } else if (options_.compiled_baseline) {
      compiled_note_ = "no torch.compile baseline: only a KernelBench-format candidate (a .py defining ModelNew) "
                       "on the GPU has one";
    }
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
    auto& stage = recorder_.Stage("trusted_build");
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
    if (compiled_build_.valid()) SecondBaseline(stage);
    if (!compiled_note_.empty()) trusted_.second_baseline_note = compiled_note_;
    return true;
  }

  // torch.compile beside eager: a second baseline when it built, else a note that says why not
  // (the verdict stands on the first baseline either way).
  void SecondBaseline(StageRecord& stage) {
    Progress("warming torch.compile of the problem's Model (once per task and GPU)");
    auto compiled = compiled_build_.get();
    if (!compiled.ok()) {
      trusted_.second_baseline_note = "torch.compile baseline unavailable: " + compiled.error().message;
    } else if (!compiled->compiled) {
      const std::string raised = RaisedPythonException(compiled->log);
      trusted_.second_baseline_note =
          "torch.compile baseline unavailable: " + (raised.empty() ? LastLogLine(compiled->log) : raised);
    } else {
      trusted_.second_baseline = compiled->shared_object;
      trusted_.second_baseline_readable = {compiled->build_sandbox.value("directory", std::string())};
      trusted_.second_baseline_description = fmt::format(
          "torch.compile (inductor, default mode, torch {}) of the problem's Model on the GPU, float32 with TF32 off, "
          "no_grad, on the caller's stream, loaded from caches a trusted warm step filled",
          compiled->build_sandbox.value("torch", std::string("?")));
      stage.details.summary += "; torch.compile baseline ready";
      return;
    }
    stage.details.summary += "; " + trusted_.second_baseline_note;
  }

  const EvalBackend& backend_;
  CompilePool& pool_;
  const Task view_;
  const CandidateSource& candidate_;
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
  std::future<Result<BuildOutput>> compiled_build_;  // torch.compile's baseline, where asked for
  std::string compiled_note_;                        // why there is none, where asked for
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
  auto job = MakeCandidateJob(candidate, view, backend_);
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
