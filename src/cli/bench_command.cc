// `ksmith bench`: one `ksmith optimize` run per task of a suite (each recorded in the run store),
// then the benchmark's metrics over them (bench/metrics.h), as JSON and a Markdown report.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "bench/bench_html.h"
#include "bench/bench_summary.h"
#include "bench/suite.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "core/files.h"
#include "core/strings.h"
#include "core/subprocess.h"
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
  bool json = false, quiet = false;
};

constexpr std::chrono::hours kTaskTimeout{6};

std::vector<std::string> OptimizeArguments(const BenchFlags& flags, const std::string& task,
                                           const std::filesystem::path& db, const std::filesystem::path& output) {
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(), "optimize",
                                   "--task", task, "--backend", flags.backend, "--max-candidates",
                                   std::to_string(flags.samples), "--db", db.string(), "--output-dir",
                                   output.string(), "--json", "--quiet"};
  auto add = [&argv](const char* flag, const std::string& value) {
    if (!value.empty()) argv.insert(argv.end(), {flag, value});
  };
  add("--strategy", flags.strategy);
  add("--provider", flags.provider);
  add("--base-url", flags.base_url);
  add("--model", flags.model);
  if (flags.timing_budget_s > 0) add("--timing-budget", fmt::format("{}", flags.timing_budget_s));
  if (flags.seeds > 0) add("--seeds", std::to_string(flags.seeds));
  return argv;
}

// Runs one task's optimize and reads its candidates back from the store.
BenchTaskResult RunTask(const BenchFlags& flags, const std::string& task, const std::filesystem::path& db,
                        const std::filesystem::path& output) {
  BenchTaskResult result;
  result.task = task;
  SpawnOptions spawn;
  spawn.argv = OptimizeArguments(flags, task, db, output);
  spawn.inherit_environment = true;
  auto exit = RunCommand(spawn, kTaskTimeout);
  if (!exit.ok()) {
    result.error = exit.error().message;
    return result;
  }
  result.wall_s = exit->elapsed_s;
  const size_t brace = exit->output.find('{');
  const auto summary = nlohmann::json::parse(brace == std::string::npos ? std::string() : exit->output.substr(brace),
                                             nullptr, false);
  if (!summary.is_object() || !summary.contains("run_id")) {
    result.error = fmt::format("optimize ended with {}: {}", exit->Describe(), FirstLine(exit->output, 300));
    return result;
  }
  result.run_id = summary["run_id"];
  result.tokens = summary.value("tokens", int64_t{0});
  result.cost_dollars = summary.value("cost", 0.0);
  auto store = RunStore::Open(db);
  if (!store.ok()) {
    result.error = store.error().message;
    return result;
  }
  auto candidates = (*store)->Candidates(result.run_id);
  if (!candidates.ok()) {
    result.error = candidates.error().message;
    return result;
  }
  for (const auto& candidate : *candidates) {
    // An answer with no kernel is a sample that failed to compile.
    result.samples.push_back(candidate.verdict ? SampleFromVerdict(*candidate.verdict) : SampleOutcome{});
    if (candidate.verdict) result.device_s += candidate.verdict->value("total_s", 0.0);
  }
  return result;
}

int RunBench(const BenchFlags& flags) {
  TaskRegistry registry(TaskRegistry::DefaultRoot());
  auto tasks = ResolveSuite(flags.suite, registry);
  if (!tasks.ok()) {
    PrintError(tasks.error().message);
    return kExitUsage;
  }
  auto db = flags.db.empty() ? DefaultStorePath() : Result<std::filesystem::path>(std::filesystem::path(flags.db));
  if (!db.ok()) {
    PrintError(db.error().message);
    return kExitInfra;
  }
  const std::filesystem::path report_dir =
      flags.report_dir.empty() ? std::filesystem::path("ksmith-bench") / RunStore::NewRunId()
                               : std::filesystem::path(flags.report_dir);
  std::vector<BenchTaskResult> results;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const std::string& task = (*tasks)[i];
    const std::string label = std::filesystem::path(task).filename().string();
    results.push_back(RunTask(flags, task, *db, report_dir / "runs" / label));
    const BenchTaskResult& result = results.back();
    if (!flags.quiet) {
      const TaskMetrics metrics = ComputeTaskMetrics(result.samples);
      std::fprintf(stderr, "[%zu/%zu] %s: %s\n", i + 1, tasks->size(), label.c_str(),
                   !result.error.empty()
                       ? ("error: " + result.error).c_str()
                       : fmt::format("{:.0f}% correct of {}, best {}, {:.1f} s", 100 * metrics.correct_rate,
                                     metrics.samples,
                                     metrics.best_speedup ? fmt::format("{:.2f}x", *metrics.best_speedup) : "-",
                                     result.wall_s)
                             .c_str());
    }
  }
  const nlohmann::json bench =
      BenchJson({flags.suite, flags.backend, flags.strategy.empty() ? "default" : flags.strategy, flags.samples}, results);
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
  return kExitOk;
}

}  // namespace

CommandHandler AddBenchCommand(CLI::App& app) {
  auto flags = std::make_shared<BenchFlags>();
  app.add_option("--suite", flags->suite,
                 "all, a category (elementwise, normalization...), task names separated by commas, or a folder of tasks")
      ->capture_default_str();
  app.add_option("--backend,-b", flags->backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--strategy", flags->strategy, "refine, sample or tune (default: refine with a model, tune without)")
      ->check(CLI::IsMember({"refine", "sample", "tune"}));
  app.add_option("--samples,-n", flags->samples, "Candidates per task (the n of pass@k)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000}))->capture_default_str();
  app.add_option("--provider", flags->provider, "As for `ksmith optimize`")->check(CLI::IsMember({"openai", "anthropic"}));
  app.add_option("--base-url", flags->base_url, "As for `ksmith optimize`");
  app.add_option("--model", flags->model, "As for `ksmith optimize`");
  app.add_option("--timing-budget", flags->timing_budget_s, "Seconds each candidate's timing may take")->check(CLI::Range(0.05, 600.0));
  app.add_option("--seeds", flags->seeds, "Input seeds per eval shape and distribution")->check(CLI::Range(1, 100));
  app.add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  app.add_option("--report", flags->report_dir, "Where report.md, report.html, bench.json and each task's run go (default ksmith-bench/<id>)");
  app.add_flag("--json", flags->json, "Print one JSON object: settings, tasks, summary");
  app.add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  return [flags] { return RunBench(*flags); };
}

}  // namespace ksmith
