#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/files.h"
#include "eval/evaluator.h"
#include "sandbox/supervisor.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct EvalFlags {
  std::string task;
  std::string backend = "cpu";
  std::string candidate;
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

int RunEval(const EvalFlags& flags) {
  if (flags.backend != "cpu") {
    PrintError("backend '" + flags.backend + "' is not available yet; this build evaluates on 'cpu'");
    return kExitUsage;
  }
  TaskRegistry registry(TaskRegistry::DefaultRoot());
  auto task = registry.Find(flags.task);
  if (!task.ok()) {
    PrintError(task.error().message);
    return task.error().kind == ErrorKind::kParse ? kExitInfra : kExitUsage;
  }
  std::error_code error;
  if (std::filesystem::is_directory(flags.candidate, error)) {
    PrintError("candidate " + flags.candidate + ": is a directory, not a source file");
    return kExitUsage;
  }
  const auto size = std::filesystem::file_size(flags.candidate, error);
  // An oversized file is still evaluated, without reading it: its verdict (compile_error) says
  // why it was refused.
  const bool oversized = !error && size > kMaxCandidateBytes;
  auto text = oversized ? Result<std::string>(std::string()) : ReadFile(flags.candidate, kMaxCandidateBytes);
  if (!text.ok()) {
    PrintError("candidate " + text.error().message);
    return kExitUsage;
  }
  CandidateSource candidate{flags.candidate, std::move(text.value()), error ? 0 : static_cast<size_t>(size)};

  const bool show_progress = !flags.quiet && ::isatty(STDERR_FILENO);
  auto context = LoadCpuContext(false);
  if (!context.ok()) {
    PrintError(context.error().message);
    return kExitInfra;
  }
  EvalOptions options;
  options.seeds = flags.seeds;
  options.call_timeout = std::chrono::milliseconds(flags.timeout_ms);
  options.time = !flags.no_time;
  options.timing_budget_s = flags.timing_budget_s;
  options.threads = flags.threads;
  options.sandbox = !flags.no_sandbox;
  if (flags.seed != 0) options.fixed_seed = flags.seed;
  options.worker_executable = WorkerProcess::DefaultExecutable();
  options.scratch_parent = context->cache_directory / "scratch";
  if (show_progress) {
    options.progress = [](const std::string& line) { std::fprintf(stderr, "  ... %s\n", line.c_str()); };
  }
  Evaluator evaluator(context->compiler, context->machine, options);
  const Verdict verdict = evaluator.Evaluate(*task, candidate);
  const std::string json = verdict.ToJson().dump(2);
  if (!flags.output_path.empty()) {
    if (auto status = WriteFileAtomic(flags.output_path, json + "\n"); !status.ok()) {
      PrintError(status.error().message);
      return kExitInfra;
    }
  }
  std::fputs(flags.json ? (json + "\n").c_str() : verdict.Render().c_str(), stdout);
  return verdict.status == VerdictStatus::kInfraError ? kExitInfra : kExitOk;
}

}  // namespace

CommandHandler AddEvalCommand(CLI::App& app) {
  auto flags = std::make_shared<EvalFlags>();
  app.add_option("--task,-t", flags->task, "Task name (see `ksmith tasks`) or task folder")->required();
  app.add_option("--backend,-b", flags->backend, "Where the kernel runs")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("candidate", flags->candidate, "The candidate's source file (C++ for cpu)")->required();
  app.add_flag("--json", flags->json, "Print one JSON object instead of the human-readable verdict");
  app.add_option("--output,-o", flags->output_path, "Also write the JSON verdict to this file");
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
