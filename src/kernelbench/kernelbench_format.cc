#include "kernelbench/kernelbench_format.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/kernelbench_prompt.h"
#include "core/strings.h"
#include "eval/compile_pool.h"
#include "eval/pipeline_steps.h"
#include "kernelbench/build_sandbox.h"
#include "kernelbench/candidate.h"
#include "kernelbench/candidate_build.h"
#include "kernelbench/compiled_baseline.h"

namespace ksmith {
namespace {

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

// torch.compile beside eager: a second baseline when it built, else a note that says why not
// (the verdict stands on the first baseline either way).
class CompiledBaselineBuild final : public SecondBaselineBuild {
 public:
  explicit CompiledBaselineBuild(std::future<Result<BuildOutput>> build) : build_(std::move(build)) {}

  void Finish(SecondBaseline& second, std::string& summary,
              const std::function<void(const std::string&)>& progress) override {
    if (progress) progress("warming torch.compile of the problem's Model (once per task and GPU)");
    auto compiled = build_.get();
    if (!compiled.ok()) {
      second.note = "torch.compile baseline unavailable: " + compiled.error().message;
    } else if (!compiled->compiled) {
      const std::string raised = RaisedPythonException(compiled->log);
      second.note =
          "torch.compile baseline unavailable: " + (raised.empty() ? LastLogLine(compiled->log) : raised);
    } else {
      second.library = compiled->shared_object;
      second.readable = {compiled->build_sandbox.value("directory", std::string())};
      second.description = fmt::format(
          "torch.compile (inductor, default mode, torch {}) of the problem's Model on the GPU, float32 with TF32 off, "
          "no_grad, on the caller's stream, loaded from caches a trusted warm step filled",
          compiled->build_sandbox.value("torch", std::string("?")));
      summary += "; torch.compile baseline ready";
      return;
    }
    summary += "; " + second.note;
  }

 private:
  std::future<Result<BuildOutput>> build_;
};

// A candidate's build: its build sandbox (cached by content), then the shim that loads what that
// built into the worker.
class KernelBenchBuildJob final : public CandidateBuildJob {
 public:
  KernelBenchBuildJob(nlohmann::json analysis, CandidateBuildPlan plan, std::string source, std::string display_name,
                      bool cuda)
      : analysis_(std::move(analysis)),
        plan_(std::move(plan)),
        source_(std::move(source)),
        display_name_(std::move(display_name)),
        cuda_(cuda) {}

  // python and its compilers are held to more than one build's limit together (BuildSandboxLimits).
  size_t slots() const override { return BuildSandboxSlots(cuda_); }

  // A candidate that does not import or whose extension does not compile is a failed build with
  // the build sandbox's log.
  Result<BuildOutput> Run(const EvalBackend& backend, const Task& view) const override {
    auto sandbox = BuildCandidate(plan_, analysis_, view, source_, display_name_, cuda_, backend.Limits());
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
    // The shim's text is the task's alone (compiled once per task, a cache hit after); the
    // candidate's spec goes beside a copy of it in the candidate's build folder.
    auto spec = KernelBenchCandidateSpec(analysis_, source_, display_name_, cuda_, plan_.directory, sandbox->manifest);
    if (!spec.ok()) return spec.error();
    auto shim = RenderKernelBenchCandidateShim(analysis_, cuda_);
    if (!shim.ok()) return shim.error();
    const BackendTraits& traits = backend.traits();
    auto output = backend.Build(view, BuildRequest{*shim, "modelnew_shim" + traits.source_extension, KernelRole::kCandidate, {}});
    if (!output.ok()) return output;
    if (output->compiled) {
      auto placed = WriteKernelBenchCandidate(output->shared_object, *spec, plan_.directory);
      if (!placed.ok()) return placed.error();
      output->shared_object = *placed;
    }
    const bool shim_cached = output->cache_hit;
    output->cache_hit = output->cache_hit && sandbox->cache_hit;
    output->compile_s += sandbox->seconds;
    output->sandboxed = output->sandboxed && sandbox->sandboxed;
    output->command = output->command.empty() ? sandbox->command : sandbox->command + "; then the shim: " + output->command;
    if (!output->compiled) return output;  // ksmith's own shim: the log says why
    output->log = sandbox->log + output->log;
    output->build_sandbox = sandbox->manifest;
    output->build_sandbox["directory"] = plan_.directory.string();
    output->build_sandbox["seconds"] = sandbox->seconds;
    output->build_sandbox["peak_memory_bytes"] = sandbox->peak_memory_bytes;
    output->build_sandbox["cache_hit"] = sandbox->cache_hit;
    output->build_sandbox["shim_cache_hit"] = shim_cached;
    return output;
  }

  // What the build made, in the words of a candidate that may have nothing to compile: a
  // torch-only ModelNew said "compiled in 42 s" where the time was the model called at its sizes.
  std::string BuildSummary(const BuildOutput& build) const override {
    if (build.cache_hit) return "cached";
    const nlohmann::json& sandbox = build.build_sandbox;
    const double sandbox_s = sandbox.value("seconds", 0.0);
    const size_t extensions = sandbox.value("extensions", nlohmann::json::array()).size();
    const std::string own = extensions == 0 ? "no load_inline or load extension to build"
                                            : fmt::format("{} extension{} built", extensions, extensions == 1 ? "" : "s");
    const std::string shim = sandbox.value("shim_cache_hit", false)
                                 ? std::string("ksmith's shim for the task cached")
                                 : fmt::format("ksmith's shim for the task compiled in {:.2f} s",
                                               std::max(0.0, build.compile_s - sandbox_s));
    return fmt::format("{}; the build sandbox ran ModelNew at its sizes (imports, builds, Triton's compiles) in "
                       "{:.2f} s{}, {}",
                       own, sandbox_s, sandbox.value("cache_hit", false) ? " (cached)" : "", shim);
  }

  // The shim calls ModelNew's finish, launches where KernelBench's forward does (the legacy
  // default stream), runs in the interpreter the baseline's warm-up starts, and reads its build
  // sandbox's output. KernelBench's problems are fixed-shape:
  // their hidden shapes are a property of the candidate.
  void SetRunOptions(EvalOptions& options) const override {
    options.candidate_finish = true;
    options.default_stream_ordered = true;
    options.warm_baseline = true;
    options.candidate_readable.push_back(plan_.directory);
    options.hidden_shapes_decide = false;
  }

  void OpenVerdict(Verdict& verdict, const Task& view) const override {
    Generalization& shapes = verdict.extensions.generalization.emplace();
    shapes.decided_at = view.FormatShape(view.bench_shape);
    shapes.problem_sizes = ProblemSizesWhereReduced(analysis_, view.bench_shape);
  }

  void CloseVerdict(Verdict& verdict) const override {
    const std::optional<Generalization>& shapes = verdict.extensions.generalization;
    if (verdict.status == VerdictStatus::kPassed && shapes && shapes->generalizes) {
      verdict.reason += *shapes->generalizes ? "; generalizes to the hidden shapes"
                                             : "; does not generalize to the hidden shapes";
    }
  }

  std::unique_ptr<SecondBaselineBuild> StartSecondBaseline(CompilePool& pool, const EvalBackend& backend,
                                                           const Task& view, const EvalOptions& options) const override {
    if (!options.format_options.second_baseline || !cuda_) return CandidateBuildJob::StartSecondBaseline(pool, backend, view, options);
    return std::make_unique<CompiledBaselineBuild>(pool.Submit(
        [&backend, view, analysis = analysis_] { return BuildCompiledBaseline(backend, view, analysis); }));
  }

 private:
  const nlohmann::json analysis_;
  const CandidateBuildPlan plan_;
  const std::string source_;
  const std::string display_name_;
  const bool cuda_;
};

class KernelBench final : public CandidateFormat {
 public:
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  bool ClaimsPath(std::string_view path) const override { return path.ends_with(".py"); }
  std::string FileExtension() const override { return ".py"; }

  // KernelBench's Python is not C++: it runs inside the worker's walls, under its checks.
  std::vector<AuditFinding> AuditSource(const EvalBackend& backend, const std::string& text,
                                        const Task& view) const override {
    (void)backend, (void)text, (void)view;
    return {};
  }
  std::string AuditPassedSummary() const override {
    return "KernelBench format (ModelNew in Python): no C++ to audit; it runs in the sandboxed worker";
  }

  Result<std::shared_ptr<const CandidateBuildJob>> PlanBuild(const CandidateSource& candidate, const Task& task,
                                                             const EvalBackend& backend) const override {
    const BackendTraits& traits = backend.traits();
    auto analysis = LoadKernelBenchAnalysis(task);
    if (!analysis.ok()) return analysis.error();
    if (traits.torch_device.empty()) {
      return MakeError(ErrorKind::kInvalidArgument, "the {} backend cannot judge a KernelBench ModelNew, which runs in "
                       "PyTorch: use --backend cpu or cuda", traits.name);
    }
    const bool on_cuda = traits.torch_device == "cuda";
    if (on_cuda && !task.cuda) {
      return MakeError(ErrorKind::kInvalidArgument, "task {} has no [cuda] (it was imported with a torch without CUDA): "
                       "re-import it on the GPU machine to judge a KernelBench candidate there", task.name);
    }
    if (backend.CacheDirectory().empty()) {
      return MakeError(ErrorKind::kInvalidArgument, "the {} backend keeps no build cache, which a KernelBench candidate's "
                       "build needs: use --backend cpu or cuda", traits.name);
    }
    const std::string file = std::filesystem::path(candidate.path).filename().string();
    const std::string display = file.empty() ? "candidate" + traits.source_extension : file;
    CandidateBuildPlan plan = PlanCandidateBuild(backend.CacheDirectory(), *analysis, task, candidate.text, on_cuda);
    return std::shared_ptr<const CandidateBuildJob>(std::make_shared<KernelBenchBuildJob>(
        std::move(analysis.value()), std::move(plan), candidate.text, display, on_cuda));
  }

  // ModelNew is not a declaration: nothing to quote.
  std::string ExpectedDeclaration(const EvalBackend& backend, const Task& view) const override {
    (void)backend, (void)view;
    return {};
  }

  // Why the build failed, from its build sandbox's log: the build script's last word and the
  // Python exception behind it.
  std::optional<BuildFailureWords> BuildFailure(const std::string& log) const override {
    std::string said;
    for (const auto& line : SplitLines(log)) {
      if (line.starts_with("ksmith: ")) said = std::string(line.substr(8));
    }
    if (said.empty()) said = "the build sandbox ended without saying why (see the log)";
    const std::string exception = RaisedPythonException(log);
    return BuildFailureWords{
        "the build sandbox could not import the candidate or compile its extension",
        exception.empty() ? fmt::format("the candidate does not build: {}", said)
                          : fmt::format("the candidate does not build: {}: {}", said, exception)};
  }

  // The object is ksmith's own shim (it loads libpython): nothing to audit.
  Result<std::vector<AuditFinding>> AuditBinary(const EvalBackend& backend, const BuildOutput& build,
                                                const Task& view) const override {
    (void)backend, (void)build, (void)view;
    return std::vector<AuditFinding>{};
  }

 private:
  const std::string name_ = "kernelbench";
  const std::string description_ = "a Python file defining ModelNew, on a task imported from KernelBench";
};

class KernelBenchModel final : public ModelFormat {
 public:
  const CandidateFormat& format() const override { return KernelBenchFormat(); }
  std::string SystemPrompt(const PromptContext& context) const override { return BuildKernelBenchSystemPrompt(context); }
  std::string TaskPrompt(const PromptContext& context, std::string_view starting_point) const override {
    return BuildKernelBenchTaskPrompt(context, starting_point);
  }
  Result<ExtractedKernel> Extract(std::string_view answer, const Task& task, const std::string&) const override {
    (void)task;
    return ExtractModelNew(answer);
  }
  // A task's seeds are kernels in ksmith's contract, no starting point for a ModelNew.
  bool UsesTaskSeeds() const override { return false; }
  Status CheckTask(const Task& task) const override {
    auto analysis = LoadKernelBenchAnalysis(task);
    if (!analysis.ok()) return analysis.error();
    return {};
  }
};

}  // namespace

const CandidateFormat& KernelBenchFormat() {
  static const KernelBench format;
  return format;
}

const ModelFormat& KernelBenchModelFormat() {
  static const KernelBenchModel format;
  return format;
}

}  // namespace ksmith
