#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/app.h"
#include "cli/candidate_check.h"
#include "formats/format_registry.h"
#include "cli/commands.h"
#include "cli/eval_sweep.h"
#include "cli/dump_failure.h"
#include "cli/optimize_settings.h"
#include "cli/setting_ranges.h"
#include "core/files.h"
#include "core/json_text.h"
#include "eval/backend_registry.h"
#include "eval/eval_options.h"
#include "service/eval_client.h"
#include "service/service_setup.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct EvalFlags {
  std::string task;
  std::string backend = "cpu";
  std::vector<std::string> candidates;
  std::string arch;
  bool profile = false;
  bool compiled_baseline = false;
  int jobs = 0;
  std::vector<std::string> devices;
  bool json = false;
  std::string output_path;
  // Unset: ksmith.toml's [eval] value, else the default (OptimizeSettings's, shared with optimize).
  std::optional<int> seeds, timeout_ms;
  std::optional<double> timing_budget_s, build_memory_gib, build_cpu_s;
  std::optional<double> tie_band;
  std::string config;
  bool no_time = false;
  int threads = 0;
  uint64_t seed = 0;
  bool no_sandbox = false;
  bool quiet = false;
  std::vector<std::string> sweep;  // "dim=v1,v2,...": judge and time the one candidate at each size
  std::string csv_path;            // the sweep's table as CSV
  std::string dump_failure;  // --dump-failure DIR; empty: none
};

// Defaults, then ksmith.toml's [eval] (or --config's: the file optimize reads, checked whole by the
// same rules), then the flags. Only the evaluation's settings are taken from it.
Result<OptimizeSettings> ResolveSettings(const EvalFlags& flags) {
  OptimizeSettings settings;
  if (const auto config = ConfigFilePath(flags.config); !config.empty()) {
    if (auto status = ApplyConfigFile(config, settings); !status.ok()) return status.error();
  }
  if (!flags.arch.empty()) settings.arch = flags.arch;
  if (flags.seeds) settings.seeds = *flags.seeds;
  if (flags.timeout_ms) settings.eval_timeout_ms = *flags.timeout_ms;
  if (flags.timing_budget_s) settings.timing_budget_s = *flags.timing_budget_s;
  if (flags.build_memory_gib) settings.build_memory_gib = *flags.build_memory_gib;
  if (flags.build_cpu_s) settings.build_cpu_s = *flags.build_cpu_s;
  return settings;
}

EvalOptions CommonOptions(const EvalFlags& flags, const OptimizeSettings& settings) {
  EvalOptions options;
  options.seeds = settings.seeds;
  options.call_timeout = std::chrono::milliseconds(settings.eval_timeout_ms);
  options.time = !flags.no_time;
  options.timing_budget_s = settings.timing_budget_s;
  if (flags.tie_band) options.tie_band = *flags.tie_band;
  options.threads = flags.threads;
  options.sandbox = !flags.no_sandbox;
  options.profile = flags.profile;
  options.format_options.second_baseline = flags.compiled_baseline;
  if (flags.seed != 0) options.fixed_seed = flags.seed;
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
    const std::string text = several_ ? JsonText(json) : JsonText(json, 2);
    written_ += text + "\n";
    if (!flags_.output_path.empty()) {
      if (auto status = WriteFileAtomic(flags_.output_path, written_); !status.ok()) {
        PrintError(status.error().message);
        return false;
      }
    }
    if (flags_.json) {
      std::fputs((text + "\n").c_str(), stdout);
    } else {
      // Several verdicts: each says which file it is about (the verdict names only the task).
      if (several_) std::printf("%s%s:\n", printed_ > 0 ? "\n" : "", verdict.candidate.c_str());
      std::fputs(verdict.Render().c_str(), stdout);
    }
    std::fflush(stdout);
    ++printed_;
    ++by_status_[VerdictStatusName(verdict.status)];
    if (verdict.status == VerdictStatus::kPassed && verdict.timing &&
        (!fastest_ || verdict.timing->speedup.median > fastest_->second)) {
      fastest_ = {verdict.candidate, verdict.timing->speedup.median};
    }
    infra_ = infra_ || verdict.status == VerdictStatus::kInfraError;
    return true;
  }
  /// After several verdicts in the human form: how many got each status, and the fastest.
  void PrintSummary() const {
    if (flags_.json || !several_) return;
    std::vector<std::string> counts;
    for (const auto& [status, count] : by_status_) counts.push_back(fmt::format("{} {}", count, status));
    std::printf("\n%d candidates: %s", printed_, fmt::format("{}", fmt::join(counts, ", ")).c_str());
    if (fastest_) std::printf("; fastest passed: %s (%.2fx)", fastest_->first.c_str(), fastest_->second);
    std::printf("\n");
  }
  int ExitCode() const { return infra_ ? kExitInfra : kExitOk; }

 private:
  const EvalFlags& flags_;
  bool several_;
  std::string written_;
  bool infra_ = false;
  int printed_ = 0;
  std::map<std::string, int> by_status_;  // by name: the summary lists them alphabetically
  std::optional<std::pair<std::string, double>> fastest_;  // candidate, speedup
};


// The one candidate judged at every point of the sweep, all queued at once (builds are shared: the
// source is the same); a line on stderr per point as it ends, then the table, or JSON.
int RunSweep(const EvalFlags& flags, const std::shared_ptr<const Task>& task, const std::vector<DimValues>& sweep,
             const CandidateSource& candidate, const EvalOptions& options, EvalClient& client, EvalService& service) {
  std::vector<std::future<Verdict>> verdicts;
  for (const auto& shape : sweep) {
    auto submitted = client.Submit({"", std::make_shared<const Task>(TaskAtBenchShape(*task, shape)), flags.backend,
                                    candidate, options});
    if (!submitted.ok()) {
      PrintError(submitted.error().message);
      return submitted.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
    }
    verdicts.push_back(std::move(submitted.value()));
  }
  std::vector<SweepRow> rows;
  bool infra = false;
  for (size_t i = 0; i < sweep.size(); ++i) {
    rows.push_back({sweep[i], verdicts[i].get()});
    infra = infra || rows.back().verdict.status == VerdictStatus::kInfraError;
    if (!flags.quiet) {
      std::fprintf(stderr, "  [%zu/%zu] %s: %s\n", i + 1, sweep.size(), task->FormatShape(sweep[i]).c_str(),
                   VerdictStatusName(rows.back().verdict.status));
    }
  }
  const nlohmann::json json = SweepJson(*task, rows);
  for (const auto& [path, text] : {std::pair{flags.csv_path, SweepCsv(*task, rows)}, std::pair{flags.output_path, json.dump(2)}}) {
    if (path.empty()) continue;
    if (auto status = WriteFileAtomic(path, text); !status.ok()) {
      PrintError(status.error().message);
      service.Shutdown();
      return kExitInfra;
    }
  }
  std::fputs(flags.json ? (json.dump(2) + "\n").c_str() : SweepTable(*task, rows).c_str(), stdout);
  return infra ? kExitInfra : kExitOk;
}

// The start of the command that replays an evaluation (eval/failure_dump.h): this executable and
// the flags that choose the task, the backend and the build; the seed and the candidate follow.
std::vector<std::string> RerunPrefix(const EvalFlags& flags) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  error.clear();
  // A task given as a folder is named absolutely, so that the command runs from anywhere.
  const bool folder = flags.task.find('/') != std::string::npos && std::filesystem::is_directory(flags.task, error);
  const std::string task = folder ? std::filesystem::absolute(flags.task).lexically_normal().string() : flags.task;
  std::vector<std::string> prefix = {self.empty() ? std::string("ksmith") : self.string(), "eval", "--task", task,
                                     "--backend", flags.backend};
  if (!flags.arch.empty()) prefix.insert(prefix.end(), {"--arch", flags.arch});
  if (!flags.config.empty()) {
    prefix.insert(prefix.end(), {"--config", std::filesystem::absolute(flags.config).string()});
  }
  return prefix;
}

int RunEval(const EvalFlags& flags) {
  auto settings = ResolveSettings(flags);
  if (!settings.ok()) {
    PrintError(settings.error().message);
    return kExitUsage;
  }
  auto traits = BackendRegistry::Global().Traits(flags.backend);
  if (!traits.ok()) {
    PrintError(traits.error().message);
    return kExitUsage;
  }
  if (flags.profile && !traits->profiles) {
    std::vector<std::string> profiling;
    for (const auto& name : BackendRegistry::Global().Names()) {
      if (TraitsOf(name).profiles) profiling.push_back(name);
    }
    PrintError(fmt::format("--profile needs --backend {} (it reads hardware counters); the {} backend has no profiler",
                           fmt::join(profiling, " or "), flags.backend));
    return kExitUsage;
  }
  if (flags.compiled_baseline && traits->torch_device != "cuda") {
    PrintError("--compiled-baseline times a KernelBench candidate against torch.compile on the GPU: add --backend cuda");
    return kExitUsage;
  }
  TaskRegistry registry = TaskRegistry::Default();
  auto found = registry.Find(flags.task);
  if (!found.ok()) {
    PrintError(found.error().message);
    return found.error().kind == ErrorKind::kParse ? kExitInfra : kExitUsage;
  }
  // Found now, not once the first verdict is written.
  if (!flags.output_path.empty()) {
    if (Status writable = CheckWritableFile(flags.output_path); !writable.ok()) {
      PrintError(fmt::format("--output {}: cannot write it ({}); name a file you can write", flags.output_path,
                             writable.error().message));
      return kExitUsage;
    }
  }
  std::shared_ptr<DumpFailureRequest> dump;
  if (!flags.dump_failure.empty()) {
    if (flags.candidates.size() != 1) {
      PrintError("--dump-failure writes one candidate's failing case: evaluate one candidate at a time with it");
      return kExitUsage;
    }
    auto request = DumpFailureRequest::Create(flags.dump_failure, RerunPrefix(flags));
    if (!request.ok()) {
      PrintError(request.error().message);
      return kExitUsage;
    }
    dump = std::move(request.value());
  }
  const auto task = std::make_shared<const Task>(std::move(found.value()));
  std::vector<DimValues> sweep;
  if (!flags.sweep.empty() || !flags.csv_path.empty()) {
    if (flags.sweep.empty() || flags.candidates.size() != 1 || flags.profile || flags.no_time || dump) {
      PrintError("--sweep times one candidate at each size (and --csv writes that table): give one candidate, "
                 "--sweep DIM=V1,V2,... and none of --profile, --no-time, --dump-failure");
      return kExitUsage;
    }
    auto planned = PlanSweep(*task, flags.sweep, traits->prompt.timed_shape(*task));
    if (!planned.ok()) {
      PrintError(planned.error().message);
      return kExitUsage;
    }
    sweep = std::move(planned.value());
    if (!flags.csv_path.empty()) {
      if (Status writable = CheckWritableFile(flags.csv_path); !writable.ok()) {
        PrintError(fmt::format("--csv {}: cannot write it ({}); name a file you can write", flags.csv_path,
                               writable.error().message));
        return kExitUsage;
      }
    }
  }
  std::vector<CandidateSource> candidates;
  for (const auto& path : flags.candidates) {
    auto candidate = ReadCandidateFile(path);
    if (!candidate.ok()) {
      PrintError(candidate.error().message);
      return kExitUsage;
    }
    if (const std::string mismatch = CandidateMismatch(path, flags.backend, *task); !mismatch.empty()) {
      PrintError(mismatch);
      return kExitUsage;
    }
    candidates.push_back(std::move(candidate.value()));
  }
  // Several evaluations at once share a GPU for correctness and take turns to time; a profile
  // needs the GPU to itself, and cpu timing needs every core.
  const size_t workers = flags.profile ? 1
                         : flags.jobs > 0 ? static_cast<size_t>(flags.jobs)
                                       : std::min(DefaultVerificationWorkers(*traits),
                                                  std::max<size_t>(1, candidates.size()));
  auto service = StartLocalService({.backend = flags.backend,
                                    .arch = settings->arch,
                                    .workers = workers,
                                    .devices = flags.devices,
                                    .build_limits = BuildLimitsFrom(settings->build_memory_gib, settings->build_cpu_s),
                                    .spare_workers = candidates.size() > 1});
  if (!service.ok()) {
    PrintError(service.error().message);
    return service.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  EvalClient client(**service);
  // Every candidate is queued at once: later ones compile while earlier ones are checked.
  EvalOptions options = CommonOptions(flags, *settings);
  if (dump) options.failed_case_sink = dump->Sink();
  if (!sweep.empty()) return RunSweep(flags, task, sweep, candidates.front(), options, client, **service);
  std::vector<std::future<Verdict>> verdicts;
  for (const auto& candidate : candidates) {
    auto submitted = client.Submit({"", task, flags.backend, candidate, options});
    if (!submitted.ok()) {
      PrintError(submitted.error().message);
      return submitted.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
    }
    verdicts.push_back(std::move(submitted.value()));
  }
  // Printed in the order given, each as soon as it and all before it are done.
  VerdictPrinter printer(flags);
  for (auto& pending : verdicts) {
    const Verdict verdict = pending.get();
    if (!printer.Print(verdict)) {
      (*service)->Shutdown();  // the rest stop at once: nothing more can be written
      return kExitInfra;
    }
    if (dump && !dump->Finish(verdict)) return kExitInfra;
  }
  printer.PrintSummary();
  return printer.ExitCode();
}

}  // namespace

CommandHandler AddEvalCommand(CLI::App& app) {
  auto flags = std::make_shared<EvalFlags>();
  app.add_option("--task,-t", flags->task, "Task name (see `ksmith tasks`) or task folder")->required();
  app.add_option("--backend,-b", flags->backend, "Where the kernel runs")
      ->check(CLI::IsMember(BackendRegistry::Global().Names()))
      ->capture_default_str();
  app.add_option("candidates", flags->candidates,
                 "The candidates' source files (C++ for cpu, CUDA C++ for cuda, OpenCL C for opencl; for a task imported from "
                 "KernelBench, also a .py defining ModelNew in KernelBench's format); several "
                 "are evaluated in turn, their builds overlapping")->required();
  app.add_option("--arch", flags->arch, "cuda: GPU architecture to build for, e.g. sm_90a (default: the GPU found)");
  app.add_flag("--profile", flags->profile, "cuda: profile one replay of a passing candidate with ncu");
  app.add_flag("--compiled-baseline", flags->compiled_baseline,
               "cuda, KernelBench candidates: also time against torch.compile of the problem's Model (inductor, "
               "warmed once per task in the build sandbox), reported beside the eager speedup");
  app.add_option("--jobs,-j", flags->jobs,
                 "Candidates evaluated at once. They share the device for correctness (and on the cpu, the cores with "
                 "builds) and take turns to time, each timing alone (default: up to 3 on a GPU, 1 on the cpu)")
      ->check(RangeCheck("eval_jobs"));
  app.add_option("--devices", flags->devices,
                 "Devices to evaluate on, each with --jobs workers (a GPU's index as CUDA_VISIBLE_DEVICES counts "
                 "them, e.g. --devices 0,1; default: the first)")
      ->delimiter(',');
  app.add_flag("--json", flags->json, "Print JSON instead of the human-readable verdict (one object per line for several candidates)");
  app.add_option("--output,-o", flags->output_path, "Also write the JSON verdict to this file (one per line for several candidates)");
  app.add_option("--seeds", flags->seeds, "Seeds per eval shape and distribution (default 3, or [eval] seeds)")
      ->check(RangeCheck("seeds"));
  app.add_option("--timeout-ms", flags->timeout_ms, "Limit for one kernel call [ms] (default 10000, or [eval] timeout_ms)")
      ->check(RangeCheck("timeout_ms"));
  app.add_option("--timing-budget", flags->timing_budget_s,
                 "Seconds the timing loop may take (default 1, or [eval] timing_budget_s)")
      ->check(RangeCheck("timing_budget_s"));
  app.add_option("--tie-band", flags->tie_band,
                 "Timing stops once the speedup's 95% interval is clear of 1 or inside 1 +- this "
                 "(default 0.02; 0: it runs to the noise target or the budget)")
      ->check(CLI::Range(0.0, 0.5));
  app.add_option("--config", flags->config,
                 "Settings file whose [eval] table sets the evaluation's defaults, under the flags (default "
                 "./ksmith.toml when present)")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-time", flags->no_time, "Verify only; skip timing and the physical-limit check");
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  app.add_option("--threads", flags->threads, "OpenMP threads for candidate and baseline (0: all cores)")->check(RangeCheck("threads"))->capture_default_str();
  app.add_option("--seed", flags->seed, "Fix the input seed to reproduce a verdict (default: secret and random)");
  app.add_flag("--no-sandbox", flags->no_sandbox, "Run the candidate without seccomp/Landlock/rlimits (debugging only)");
  app.add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  app.add_option("--sweep", flags->sweep,
                 "Judge and time the one candidate at each size: DIM=V1,V2,... (repeat for more dims: every "
                 "combination, up to 64), each a whole verdict with that size as the timed shape; prints time, "
                 "GB/s and GFLOP/s of candidate and baseline per size")
      ->take_all();
  app.add_option("--csv", flags->csv_path, "With --sweep: also write the table as CSV to this file");
  app.add_option("--dump-failure", flags->dump_failure,
                 "On a wrong_output verdict, write its first failing case to this new or empty folder: the inputs, "
                 "the reference's and the candidate's outputs as .npy, case.json, README.md and rerun.sh (the "
                 "command that replays the evaluation with its seed). A passing verdict writes nothing");
  return [flags] { return RunEval(*flags); };
}

}  // namespace ksmith
