// `ksmith bench`: one optimize run per task of a suite (each recorded in the run store), all
// submitting to one evaluation service, then the benchmark's metrics over them (bench/metrics.h),
// as JSON and a Markdown report.
// `ksmith bench compare A B`: two such results side by side (bench/bench_compare.h).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bench/bench_compare.h"
#include "bench/bench_html.h"
#include "bench/bench_summary.h"
#include "bench/suite.h"
#include "agent/strategy.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/setting_ranges.h"
#include "cli/context.h"
#include "cli/machine_description.h"
#include "cli/optimize_run.h"
#include "eval/backend_registry.h"
#include "core/clock.h"
#include "core/files.h"
#include "core/strings.h"
#include "service/eval_client.h"
#include "service/service_setup.h"
#include "store/run_store.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct BenchFlags {
  std::string suite = "all";
  std::string backend = "cpu";
  std::string strategy;
  int64_t samples = 5;
  std::string provider, base_url, model;
  std::string db, report_dir;
  double timing_budget_s = 0;
  int seeds = 0;
  int jobs = 4;
  std::optional<double> build_memory_gib, build_cpu_s;
  std::vector<std::string> devices;
  bool json = false, quiet = false;
};

struct CompareFlags {
  std::string a, b;
  bool json = false;
  bool allow_mixed = false;
};

OptimizeFlags TaskFlags(const BenchFlags& flags, const std::string& task, const std::filesystem::path& db,
                        const std::filesystem::path& output) {
  OptimizeFlags optimize;
  optimize.task = task;
  optimize.backend = flags.backend;
  optimize.max_candidates = flags.samples;
  optimize.db = db.string();
  optimize.output_dir = output.string();
  optimize.json = true;
  optimize.quiet = true;
  auto set = [](const std::string& value, std::optional<std::string>& field) {
    if (!value.empty()) field = value;
  };
  set(flags.strategy, optimize.strategy);
  set(flags.provider, optimize.provider);
  set(flags.base_url, optimize.base_url);
  set(flags.model, optimize.model);
  if (flags.timing_budget_s > 0) optimize.timing_budget_s = flags.timing_budget_s;
  if (flags.seeds > 0) optimize.seeds = flags.seeds;
  return optimize;
}

// One task of the bench: its result, and how its optimize ended.
struct TaskRun {
  BenchTaskResult result;
  int exit_code = kExitOk;  // the optimize's
  size_t verdicts = 0;      // candidates that were evaluated
};

std::string TaskLabel(const std::string& task) { return std::filesystem::path(task).filename().string(); }

std::filesystem::path TaskOutput(const std::filesystem::path& report_dir, const std::string& task) {
  return report_dir / "runs" / TaskLabel(task);
}

// A task whose optimize could not run (refused by the check, or failed before its run began).
TaskRun NotRun(const std::string& task, const OptimizeOutcome& outcome) {
  TaskRun run;
  run.result.task = task;
  run.result.error = fmt::format("optimize ended with exit code {}: {}", outcome.exit_code, FirstLine(outcome.error, 300));
  run.exit_code = outcome.exit_code;
  return run;
}

// Runs one task's optimize, its candidates evaluated by the bench's service, and reads them
// back from the store.
TaskRun RunTask(const BenchFlags& flags, const std::string& task, const std::filesystem::path& db,
                const std::filesystem::path& output, EvalClient& client) {
  const auto start = SteadyClock::now();
  const OptimizeOutcome outcome = RunOptimize(TaskFlags(flags, task, db, output), {&client, false});
  if (!outcome.summary.is_object() || !outcome.summary.contains("run_id")) {
    TaskRun failed = NotRun(task, outcome);
    failed.result.wall_s = SecondsSince(start);
    return failed;
  }
  TaskRun run;
  run.exit_code = outcome.exit_code;
  BenchTaskResult& result = run.result;
  result.task = task;
  result.wall_s = SecondsSince(start);
  const nlohmann::json& summary = outcome.summary;
  result.run_id = summary["run_id"];
  result.tokens = summary.value("tokens", int64_t{0});
  result.strategy = summary.value("strategy", std::string());
  if (const auto& best = summary.value("best", nlohmann::json()); best.is_object()) {
    // Relative to the report's folder, where report.md and report.html link to it from.
    const std::filesystem::path source = best.value("source", std::string());
    result.best_kernel = source.lexically_relative(output.parent_path().parent_path()).string();
    result.best_knobs = best.value("knobs", nlohmann::json::object());
    result.best_explanation = FirstLine(best.value("explanation", std::string()), 200);
  }
  result.cost_dollars = summary.value("cost", 0.0);
  auto store = RunStore::Open(db);
  if (!store.ok()) {
    result.error = store.error().message;
    run.exit_code = StoreExitCode(store.error());
    return run;
  }
  auto candidates = (*store)->Candidates(result.run_id);
  if (!candidates.ok()) {
    result.error = candidates.error().message;
    run.exit_code = StoreExitCode(candidates.error());
    return run;
  }
  for (const auto& candidate : *candidates) {
    // An answer with no kernel is a sample that failed to compile.
    result.samples.push_back(candidate.verdict ? SampleFromVerdict(*candidate.verdict) : SampleOutcome{});
    if (candidate.verdict) result.device_s += candidate.verdict->value("total_s", 0.0);
    if (candidate.verdict) ++run.verdicts;
  }
  return run;
}

std::string ProgressLine(const BenchTaskResult& result) {
  if (!result.error.empty()) return "error: " + result.error;
  const TaskMetrics metrics = ComputeTaskMetrics(result.samples);
  return fmt::format("{:.0f}% correct of {}, best {}, {:.1f} s", 100 * metrics.correct_rate, metrics.samples,
                     metrics.best_speedup ? fmt::format("{:.2f}x", *metrics.best_speedup) : "-", result.wall_s);
}

// Runs every task's optimize, up to `flags.jobs` at once, all submitting to one evaluation
// service; the results come back in the order of `tasks`, whatever order the runs finish in.
// A task the check refused (`checks[i]` failed) is not run again: its refusal is its result.
// One progress line per finished task.
std::vector<TaskRun> RunTasks(const BenchFlags& flags, const std::vector<std::string>& tasks,
                              const std::vector<OptimizeOutcome>& checks, const std::filesystem::path& db,
                              const std::filesystem::path& report_dir, EvalClient& client) {
  std::vector<TaskRun> results(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t finished = 0;  // guarded by progress_mutex
  auto work = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      results[i] = checks[i].exit_code != kExitOk ? NotRun(tasks[i], checks[i])
                                                  : RunTask(flags, tasks[i], db, TaskOutput(report_dir, tasks[i]), client);
      std::lock_guard lock(progress_mutex);
      ++finished;
      if (!flags.quiet) {
        std::fprintf(stderr, "[%zu/%zu] %s: %s\n", finished, tasks.size(), TaskLabel(tasks[i]).c_str(),
                     ProgressLine(results[i].result).c_str());
      }
    }
  };
  const size_t threads = std::min(tasks.size(), static_cast<size_t>(std::max(flags.jobs, 1)));
  std::vector<std::thread> workers;
  for (size_t i = 0; i < threads; ++i) workers.emplace_back(work);
  for (auto& worker : workers) worker.join();
  return results;
}

// Every task's run checked before any starts (ksmith.toml and the settings, the task, its format
// and seed kernel, the provider and its key), so that a suite whose runs cannot start spends
// nothing: a typo'd setting or a suite of imported tasks without a model failed every task only
// after the service started, and the bench exited 0.
std::vector<OptimizeOutcome> CheckTasks(const BenchFlags& flags, const std::vector<std::string>& tasks,
                                        const std::filesystem::path& db, const std::filesystem::path& report_dir,
                                        EvalClient& client) {
  std::vector<OptimizeOutcome> checks;
  for (const auto& task : tasks) {
    checks.push_back(CheckOptimize(TaskFlags(flags, task, db, TaskOutput(report_dir, task)), {&client, false}));
  }
  return checks;
}

// A bench in which nothing could be evaluated exits 2 where every task failed as a usage error (a
// typo'd setting fails them all alike), else 3.
int NothingEvaluatedExitCode(const std::vector<int>& exit_codes) {
  const bool usage = std::all_of(exit_codes.begin(), exit_codes.end(), [](int code) { return code == kExitUsage; });
  return usage ? kExitUsage : kExitInfra;
}

// Says which tasks the check refused: all of them is the bench's error; some, a note each, and
// the rest run. Returns the exit code when none can run, else kExitOk.
int ReportRefusals(const BenchFlags& flags, const std::vector<std::string>& tasks,
                   const std::vector<OptimizeOutcome>& checks) {
  std::vector<size_t> refused;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (checks[i].exit_code != kExitOk) refused.push_back(i);
  }
  if (refused.empty()) return kExitOk;
  const bool all = refused.size() == tasks.size();
  if (!all && flags.quiet) return kExitOk;
  for (size_t i : refused) {
    // One line per distinct reason: a setting that fails every task is said once.
    if (all && checks[i].error == checks[refused.front()].error) continue;
    std::fprintf(stderr, "ksmith: %s cannot run%s: %s\n", TaskLabel(tasks[i]).c_str(),
                 all ? "" : " and is reported as an error", checks[i].error.c_str());
  }
  if (!all) return kExitOk;
  std::vector<int> codes;
  for (const auto& check : checks) codes.push_back(check.exit_code);
  PrintError(fmt::format("none of the suite's {} task{} can run, so nothing was run: {}{}", tasks.size(),
                         tasks.size() == 1 ? "" : "s", tasks.size() == 1 ? "" : TaskLabel(tasks.front()) + ": ",
                         checks.front().error));
  return NothingEvaluatedExitCode(codes);
}

int RunBench(const BenchFlags& flags) {
  TaskRegistry registry = TaskRegistry::Default();
  auto tasks = ResolveSuite(flags.suite, registry);
  if (!tasks.ok()) {
    PrintError(tasks.error().message);
    return kExitUsage;
  }
  // Results by task name, however they were listed and whichever finishes first.
  std::sort(tasks->begin(), tasks->end(),
            [](const std::string& a, const std::string& b) { return std::pair(TaskLabel(a), a) < std::pair(TaskLabel(b), b); });
  tasks->erase(std::unique(tasks->begin(), tasks->end()), tasks->end());
  auto db = StorePathFromFlag(flags.db);
  if (!db.ok()) {
    PrintError(db.error().message);
    return StoreExitCode(db.error());
  }
  // Created (or migrated) here, once, rather than by the first tasks side by side.
  auto store = RunStore::Open(*db);
  if (!store.ok() || !(*store)->CheckWritable().ok()) {
    const Error error = !store.ok() ? store.error() : (*store)->CheckWritable().error();
    PrintError(error.message);
    return StoreExitCode(error);
  }
  const std::filesystem::path report_dir =
      flags.report_dir.empty() ? std::filesystem::path("ksmith-bench") / RunStore::NewRunId()
                               : std::filesystem::path(flags.report_dir);
  // Found now, not after the whole run when the report is written.
  if (Status writable = CheckWritableFolder(report_dir); !writable.ok()) {
    PrintError(fmt::format("{} {}: cannot write there ({}); {}", flags.report_dir.empty() ? "the report folder" : "--report",
                           report_dir.string(), writable.error().message,
                           flags.report_dir.empty() ? "give --report with a folder you can write"
                                                    : "name a folder you can write"));
    return kExitUsage;
  }
  // One service for every task: its device's workers take turns to time, however many tasks run.
  auto service = StartLocalService({.backend = flags.backend,
                                    .devices = flags.devices,
                                    .build_limits = BuildLimitsFrom(flags.build_memory_gib, flags.build_cpu_s),
                                    .spare_workers = true});
  if (!service.ok()) {
    PrintError(service.error().message);
    return service.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  BenchSettings settings{flags.suite, flags.backend, flags.strategy, flags.samples,
                         flags.jobs, DescribeThisMachine(flags.backend, **service), true};
  EvalClient client(**service);
  const std::vector<OptimizeOutcome> checks = CheckTasks(flags, *tasks, *db, report_dir, client);
  if (const int refused = ReportRefusals(flags, *tasks, checks); refused != kExitOk) return refused;
  const auto start = SteadyClock::now();
  const std::vector<TaskRun> runs = RunTasks(flags, *tasks, checks, *db, report_dir, client);
  std::vector<BenchTaskResult> results;
  std::vector<int> exit_codes;
  size_t verdicts = 0;
  for (const auto& run : runs) {
    results.push_back(run.result);
    exit_codes.push_back(run.exit_code);
    verdicts += run.verdicts;
    // The strategy the runs used (tune without a model, refine with one), not the word "default".
    if (settings.strategy.empty()) settings.strategy = run.result.strategy;
  }
  const nlohmann::json bench = BenchJson(settings, results, SecondsSince(start));
  const std::string markdown = BenchMarkdown(bench);
  if (auto written = WriteFileAtomic(report_dir / "report.md", markdown); !written.ok()) {
    PrintError(written.error().message);
    return kExitInfra;
  }
  if (auto written = WriteFileAtomic(report_dir / "report.html", BenchHtml(bench)); !written.ok()) {
    PrintError(written.error().message);
    return kExitInfra;
  }
  if (auto written = WriteFileAtomic(report_dir / "bench.json", bench.dump(2)); !written.ok()) {
    PrintError(written.error().message);
    return kExitInfra;
  }
  if (flags.json) {
    std::printf("%s\n", bench.dump(2).c_str());
  } else {
    std::fputs(markdown.c_str(), stdout);
    std::printf("\nreport: %s\n", (report_dir / "report.md").c_str());
  }
  // Runs that started but in which not one candidate got a verdict (every model call failed, say):
  // the figures are empty, and the bench says so in its exit code too.
  if (verdicts == 0) {
    const auto failed = std::find_if(results.begin(), results.end(), [](const auto& r) { return !r.error.empty(); });
    PrintError(fmt::format("nothing was evaluated: no candidate of any task got a verdict{}; report: {}",
                           failed == results.end() ? "" : " (" + failed->task + ": " + failed->error + ")",
                           (report_dir / "report.md").string()));
    return NothingEvaluatedExitCode(exit_codes);
  }
  return kExitOk;
}

int RunCompare(const CompareFlags& flags) {
  auto a = LoadBenchRecord(flags.a);
  if (!a.ok()) {
    PrintError(a.error().message);
    return kExitUsage;
  }
  auto b = LoadBenchRecord(flags.b);
  if (!b.ok()) {
    PrintError(b.error().message);
    return kExitUsage;
  }
  auto comparison = CompareBenches(*a, *b, {flags.allow_mixed});
  if (!comparison.ok()) {
    PrintError(comparison.error().message);
    return kExitUsage;
  }
  if (flags.json) {
    std::printf("%s\n", comparison->dump(2).c_str());
  } else {
    std::fputs(CompareText(*comparison).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

CommandHandler AddBenchCommand(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  auto compare_flags = std::make_shared<CompareFlags>();
  CLI::App* compare = app.add_subcommand(
      "compare", "Compare two bench results task by task: status changes, best speedups with their ratio and whether "
      "the change is beyond the timing noise, and the summary figures");
  compare->add_option("a", compare_flags->a, "The earlier result: a bench.json, or the report folder that holds it")
      ->required();
  compare->add_option("b", compare_flags->b, "The later result, likewise")->required();
  compare->add_flag("--json", compare_flags->json, "Print one JSON object: tasks (name, a, b, change) and summary");
  compare->add_flag("--allow-mixed", compare_flags->allow_mixed,
                    "Compare results of different backends (refused otherwise: their speedups are against different baselines)");
  app.add_option("--suite", flags->suite,
                 "all, a level (level1, level2: the tasks' `level`), a category (elementwise, normalization...), task "
                 "names separated by commas, or a folder of tasks")
      ->capture_default_str();
  app.add_option("--backend,-b", flags->backend, "Where the kernels run")
      ->check(CLI::IsMember(BackendRegistry::Global().Names()))
      ->capture_default_str();
  app.add_option("--strategy", flags->strategy, "refine, sample, tune or evolve (default: refine with a model, tune without)")
      ->check(CLI::IsMember(StrategyNames()));
  app.add_option("--samples,-n", flags->samples, "Candidates per task (the n of pass@k)")
      ->check(RangeCheck("samples"))->capture_default_str();
  app.add_option("--provider", flags->provider, "As for `ksmith optimize`")->check(CLI::IsMember({"openai", "anthropic"}));
  app.add_option("--base-url", flags->base_url, "As for `ksmith optimize`");
  app.add_option("--model", flags->model, "As for `ksmith optimize`");
  app.add_option("--timing-budget", flags->timing_budget_s, "Seconds each candidate's timing may take")->check(RangeCheck("timing_budget_s"));
  app.add_option("--seeds", flags->seeds, "Input seeds per eval shape and distribution")->check(RangeCheck("seeds"));
  app.add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  app.add_option("--report", flags->report_dir, "Where report.md, report.html, bench.json and each task's run go (default ksmith-bench/<id>)");
  app.add_option("--jobs,-j", flags->jobs,
                 "Tasks run at once. They share one evaluation service, whose device takes one timing at a time, so "
                 "more jobs overlap model calls (and on a GPU, builds and correctness checks) while no two timings "
                 "overlap")
      ->check(RangeCheck("jobs"))->capture_default_str();
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  app.add_option("--devices", flags->devices,
                 "Devices the tasks' candidates are evaluated on (a GPU's index as CUDA_VISIBLE_DEVICES counts them, "
                 "e.g. --devices 0,1; default: the first)")
      ->delimiter(',');
  app.add_flag("--json", flags->json, "Print one JSON object: settings, tasks, summary");
  app.add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  return [flags, compare_flags, compare] { return compare->parsed() ? RunCompare(*compare_flags) : RunBench(*flags); };
}

}  // namespace ksmith
