#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <memory>
#include <optional>
#include <vector>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "backend/cuda/build_pool.h"
#include "backend/cuda/gpu_facts.h"
#include "core/files.h"
#include "eval/cuda_evaluator.h"
#include "eval/cuda_profile.h"
#include "eval/evaluator.h"
#include "eval/gpu_gate.h"
#include "sandbox/supervisor.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct EvalFlags {
  std::string task;
  std::string backend = "cpu";
  std::vector<std::string> candidates;
  std::string arch;
  bool profile = false;
  int jobs = 0;
  bool json = false;
  std::string output_path;
  int seeds = 3;
  int timeout_ms = 10'000;
  bool no_time = false;
  double timing_budget_s = 1.0;
  int threads = 0;
  uint64_t seed = 0;
  bool no_sandbox = false;
  bool quiet = false;
};

// Reads one candidate; an oversized file is still evaluated without being read, so that its
// verdict (compile_error) says why it was refused.
Result<CandidateSource> ReadCandidate(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return MakeError(ErrorKind::kInvalidArgument, "candidate {}: is a directory, not a source file", path);
  }
  const auto size = std::filesystem::file_size(path, error);
  const bool oversized = !error && size > kMaxCandidateBytes;
  auto text = oversized ? Result<std::string>(std::string()) : ReadFile(path, kMaxCandidateBytes);
  if (!text.ok()) return MakeError(ErrorKind::kInvalidArgument, "candidate {}", text.error().message);
  return CandidateSource{path, std::move(text.value()), error ? 0 : static_cast<size_t>(size)};
}

EvalOptions CommonOptions(const EvalFlags& flags, const std::filesystem::path& cache_directory) {
  EvalOptions options;
  options.seeds = flags.seeds;
  options.call_timeout = std::chrono::milliseconds(flags.timeout_ms);
  options.time = !flags.no_time;
  options.timing_budget_s = flags.timing_budget_s;
  options.threads = flags.threads;
  options.sandbox = !flags.no_sandbox;
  if (flags.seed != 0) options.fixed_seed = flags.seed;
  options.worker_executable = WorkerProcess::DefaultExecutable();
  options.cuda_worker_executable = DefaultCudaWorkerExecutable();
  options.scratch_parent = cache_directory / "scratch";
  if (!flags.quiet && ::isatty(STDERR_FILENO)) {
    options.progress = [](const std::string& line) { std::fprintf(stderr, "  ... %s\n", line.c_str()); };
  }
  return options;
}

// Prints each verdict as it comes: the human form, or one JSON object (one per line when
// several candidates are evaluated).
class VerdictPrinter {
 public:
  VerdictPrinter(const EvalFlags& flags) : flags_(flags), several_(flags.candidates.size() > 1) {}

  bool Print(const Verdict& verdict) {
    const nlohmann::json json = verdict.ToJson();
    const std::string text = several_ ? json.dump() : json.dump(2);
    written_ += text + "\n";
    if (!flags_.output_path.empty()) {
      if (auto status = WriteFileAtomic(flags_.output_path, written_); !status.ok()) {
        PrintError(status.error().message);
        return false;
      }
    }
    std::fputs(flags_.json ? (text + "\n").c_str() : verdict.Render().c_str(), stdout);
    std::fflush(stdout);
    infra_ = infra_ || verdict.status == VerdictStatus::kInfraError;
    return true;
  }
  int ExitCode() const { return infra_ ? kExitInfra : kExitOk; }

 private:
  const EvalFlags& flags_;
  bool several_;
  std::string written_;
  bool infra_ = false;
};

int RunCpuEval(const EvalFlags& flags, const Task& task, const std::vector<CandidateSource>& candidates) {
  auto context = LoadCpuContext(false);
  if (!context.ok()) {
    PrintError(context.error().message);
    return kExitInfra;
  }
  Evaluator evaluator(context->compiler, context->machine, CommonOptions(flags, context->cache_directory));
  VerdictPrinter printer(flags);
  for (const auto& candidate : candidates) {
    if (!printer.Print(evaluator.Evaluate(task, candidate))) return kExitInfra;
  }
  return printer.ExitCode();
}

constexpr size_t kDefaultCudaJobs = 3;

int RunCudaEval(const EvalFlags& flags, const Task& task, const std::vector<CandidateSource>& candidates) {
  auto context = LoadCudaContext(task, flags.arch);
  if (!context.ok()) {
    PrintError(context.error().message);
    return context.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  const auto& worker = context->worker_executable;
  CudaBuildPool& pool = *context->pool;
  auto gpu = context->gpu;
  EvalOptions options = CommonOptions(flags, context->cache_directory);
  // Several evaluations at once share the GPU for correctness and take turns to time (a profile
  // needs the GPU to itself, so --profile evaluates one at a time).
  const size_t jobs = flags.profile ? 1
                      : flags.jobs > 0 ? static_cast<size_t>(flags.jobs)
                                       : std::min<size_t>(kDefaultCudaJobs, candidates.size());
  GpuGate gate;
  if (jobs > 1) options.gpu_gate = &gate;
  CudaEvaluator evaluator(pool, gpu, options);
  // Every candidate's build is queued at once: later ones compile while earlier ones are checked.
  std::vector<std::future<Result<CudaBuildOutput>>> builds;
  for (const auto& candidate : candidates) builds.push_back(evaluator.StartBuild(task, candidate));
  std::vector<std::optional<Verdict>> verdicts(candidates.size());
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<size_t> next{0};
  std::vector<std::thread> evaluators;
  for (size_t j = 0; j < jobs; ++j) {
    evaluators.emplace_back([&] {
      for (size_t i = next++; i < candidates.size(); i = next++) {
        Verdict verdict = evaluator.Evaluate(task, candidates[i], std::move(builds[i]));
        if (flags.profile) {
          if (options.progress) options.progress("profiling one replay with ncu");
          AttachCudaProfile(verdict, task, worker, options.scratch_parent);
        }
        std::lock_guard lock(mutex);
        verdicts[i] = std::move(verdict);
        finished.notify_all();
      }
    });
  }
  // Printed in the order given, each as soon as it and all before it are done.
  VerdictPrinter printer(flags);
  bool printed = true;
  for (size_t i = 0; i < candidates.size() && printed; ++i) {
    std::unique_lock lock(mutex);
    finished.wait(lock, [&] { return verdicts[i].has_value(); });
    printed = printer.Print(*verdicts[i]);
  }
  if (!printed) next = candidates.size();  // the others finish what they started, then stop
  for (auto& thread : evaluators) thread.join();
  return printed ? printer.ExitCode() : kExitInfra;
}

int RunEval(const EvalFlags& flags) {
  if (flags.profile && flags.backend != "cuda") {
    PrintError("--profile needs --backend cuda (it runs Nsight Compute on the GPU)");
    return kExitUsage;
  }
  TaskRegistry registry(TaskRegistry::DefaultRoot());
  auto task = registry.Find(flags.task);
  if (!task.ok()) {
    PrintError(task.error().message);
    return task.error().kind == ErrorKind::kParse ? kExitInfra : kExitUsage;
  }
  std::vector<CandidateSource> candidates;
  for (const auto& path : flags.candidates) {
    auto candidate = ReadCandidate(path);
    if (!candidate.ok()) {
      PrintError(candidate.error().message);
      return kExitUsage;
    }
    candidates.push_back(std::move(candidate.value()));
  }
  return flags.backend == "cuda" ? RunCudaEval(flags, *task, candidates) : RunCpuEval(flags, *task, candidates);
}

}  // namespace

CommandHandler AddEvalCommand(CLI::App& app) {
  auto flags = std::make_shared<EvalFlags>();
  app.add_option("--task,-t", flags->task, "Task name (see `ksmith tasks`) or task folder")->required();
  app.add_option("--backend,-b", flags->backend, "Where the kernel runs")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("candidates", flags->candidates,
                 "The candidates' source files (C++ for cpu, CUDA C++ for cuda); several are evaluated in turn, "
                 "their builds overlapping")->required();
  app.add_option("--arch", flags->arch, "cuda: GPU architecture to build for, e.g. sm_90a (default: the GPU found)");
  app.add_flag("--profile", flags->profile, "cuda: profile one replay of a passing candidate with ncu");
  app.add_option("--jobs,-j", flags->jobs,
                 "cuda: candidates evaluated at once; they share the GPU for correctness and take turns to time "
                 "(default: up to 3)")->check(CLI::Range(1, 16));
  app.add_flag("--json", flags->json, "Print JSON instead of the human-readable verdict (one object per line for several candidates)");
  app.add_option("--output,-o", flags->output_path, "Also write the JSON verdict to this file (one per line for several candidates)");
  app.add_option("--seeds", flags->seeds, "Seeds per eval shape and distribution")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--timeout-ms", flags->timeout_ms, "Limit for one kernel call [ms]")->check(CLI::Range(100, 3'600'000))->capture_default_str();
  app.add_option("--timing-budget", flags->timing_budget_s, "Seconds the timing loop may take")->check(CLI::Range(0.05, 600.0))->capture_default_str();
  app.add_flag("--no-time", flags->no_time, "Verify only; skip timing and the physical-limit check");
  app.add_option("--threads", flags->threads, "OpenMP threads for candidate and baseline (0: all cores)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--seed", flags->seed, "Fix the input seed to reproduce a verdict (default: secret and random)");
  app.add_flag("--no-sandbox", flags->no_sandbox, "Run the candidate without seccomp/Landlock/rlimits (debugging only)");
  app.add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  return [flags] { return RunEval(*flags); };
}

}  // namespace ksmith
