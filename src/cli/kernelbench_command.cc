// `ksmith kernelbench run FOLDER`: every KernelBench-named candidate in a folder judged on its
// imported task; KernelBench's eval_results.json and ksmith's verdicts written as each finishes.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/bench_summary.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/machine_description.h"
#include "cli/setting_ranges.h"
#include "core/clock.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "formats/format_registry.h"
#include "eval/eval_options.h"
#include "kernelbench/run_folder.h"
#include "service/eval_client.h"
#include "service/service_setup.h"
#include "task/registry.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct KernelBenchRunFlags {
  std::string folder;
  std::string backend = "cpu";
  std::string out;
  int jobs = 0;
  double timing_budget_s = 1.0;
  std::optional<double> build_memory_gib, build_cpu_s;
  bool compiled_baseline = false;
  bool json = false;
  bool quiet = false;
};

struct PlannedSample {
  KernelBenchSample sample;
  std::shared_ptr<const Task> task;
};

// Counts over the judged samples, from their KernelBench result entries (so that "compiled" and
// "correct" mean what eval_results.json says); `faster` is what fast_1 should count.
struct RunTally {
  int judged = 0, compiled = 0, correct = 0, faster = 0, ties = 0, slower = 0, no_custom_kernel = 0;
  int generalize = 0;  // correct samples that also work at the task's hidden shapes

  void Add(const json& entry) {
    ++judged;
    compiled += entry.value("compiled", false);
    if (!entry.value("correctness", false)) return;
    ++correct;
    const json& metadata = entry.at("metadata");
    const std::string comparison = metadata.value("ksmith_comparison", std::string());
    faster += comparison == "faster";
    ties += comparison == "tie";
    slower += comparison == "slower";
    generalize += metadata.value("ksmith_generalizes", json()) == json(true);
    for (const auto& label : metadata.value("ksmith_labels", std::vector<std::string>{})) {
      no_custom_kernel += label.starts_with("no custom kernel");
    }
  }
};

// The task each sample's problem imported as; problems with none are listed once.
std::vector<PlannedSample> PlanSamples(const std::vector<KernelBenchSample>& samples, const TaskRegistry& registry,
                                       std::set<std::pair<int, int>>& missing) {
  std::vector<std::string> names;
  if (auto entries = registry.List(); entries.ok()) {
    for (const auto& entry : *entries) names.push_back(entry.name);
  }
  std::map<std::string, std::shared_ptr<const Task>> loaded;
  std::vector<PlannedSample> planned;
  for (const auto& sample : samples) {
    const std::string prefix = KernelBenchTaskPrefix(sample.level, sample.problem);
    const auto name = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.starts_with(prefix); });
    if (name == names.end()) {
      missing.insert({sample.level, sample.problem});
      continue;
    }
    auto& task = loaded[*name];
    if (!task) {
      auto found = registry.Find(*name);
      if (!found.ok()) {
        missing.insert({sample.level, sample.problem});
        continue;
      }
      task = std::make_shared<const Task>(std::move(found.value()));
    }
    planned.push_back({sample, task});
  }
  return planned;
}

std::string ResultsFileName(int level, bool several_levels) {
  return several_levels ? fmt::format("eval_results_level_{}.json", level) : "eval_results.json";
}

int RunKernelBenchFolder(const KernelBenchRunFlags& flags) {
  auto traits = BackendRegistry::Global().Traits(flags.backend);
  if (!traits.ok()) {
    PrintError(traits.error().message);
    return kExitUsage;
  }
  if (flags.compiled_baseline && traits->torch_device != "cuda") {
    PrintError("--compiled-baseline times the candidates against torch.compile on the GPU: add --backend cuda");
    return kExitUsage;
  }
  auto folder = FindKernelBenchSamples(flags.folder);
  if (!folder.ok()) {
    PrintError(folder.error().message);
    return kExitUsage;
  }
  std::set<std::pair<int, int>> missing;
  const auto planned = PlanSamples(folder->samples, TaskRegistry::Default(), missing);
  for (const auto& [level, problem] : missing) {
    PrintError(fmt::format("no imported task for level {} problem {} (a task named {}*): its samples are skipped; "
                           "import it with `ksmith import kernelbench <KernelBench>/level{} --problems {}`",
                           level, problem, KernelBenchTaskPrefix(level, problem), level, problem));
  }
  if (planned.empty()) return kExitUsage;
  const fs::path out = flags.out.empty() ? fs::path(flags.folder) : fs::path(flags.out);
  std::error_code error;
  fs::create_directories(out, error);
  std::set<int> levels;
  for (const auto& item : planned) levels.insert(item.sample.level);

  const size_t workers = flags.jobs > 0 ? static_cast<size_t>(flags.jobs)
                                        : std::min(DefaultVerificationWorkers(*traits),
                                                   std::max<size_t>(1, planned.size()));
  auto service = StartLocalService({flags.backend, "", workers, {}, BuildLimitsFrom(flags.build_memory_gib, flags.build_cpu_s)});
  if (!service.ok()) {
    PrintError(service.error().message);
    return service.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  const auto started = SteadyClock::now();
  // Read before any verdict starts, as `ksmith bench` does: the verdicts then find it cached.
  const json machine = DescribeThisMachine(flags.backend, **service);
  const bool on_cuda = traits->torch_device == "cuda";
  const std::string device_key = traits->device_key.empty() ? "cpu" : traits->device_key;
  const KernelBenchHardware where{machine.value(device_key, std::string()), on_cuda ? "cuda:0" : "cpu"};
  EvalClient client(**service);
  EvalOptions options;
  options.timing_budget_s = flags.timing_budget_s;
  options.format_options.second_baseline = flags.compiled_baseline;
  std::vector<std::future<Verdict>> verdicts;
  for (const auto& item : planned) {
    auto source = ReadCandidateFile(item.sample.path.string());
    if (!source.ok()) {
      PrintError(source.error().message);
      return kExitUsage;
    }
    auto submitted = client.Submit({"", item.task, flags.backend, std::move(source.value()), options});
    if (!submitted.ok()) {
      PrintError(submitted.error().message);
      return kExitInfra;
    }
    verdicts.push_back(std::move(submitted.value()));
  }
  // Written after every verdict, so that an interrupted run keeps what it finished.
  std::map<int, json> results;
  KernelBenchBaselineTimes baseline_times;  // KernelBench's baseline timing files, for its analysis
  std::map<std::string, Result<std::string>> problem_files;  // by task: the problem's file name in KernelBench
  std::map<std::string, BenchTaskResult> per_task;  // for bench's metrics: pass@k, fast_p, geomean
  std::string verdict_lines;
  RunTally tally;
  // One plain line a sample, so a log (stderr not a terminal) shows how far a long run got too.
  const bool progress = !flags.quiet;
  for (size_t i = 0; i < planned.size(); ++i) {
    const Verdict verdict = verdicts[i].get();
    const KernelBenchSample& sample = planned[i].sample;
    json entry = KernelBenchResultEntry(verdict, sample.sample, where);
    // Read once per task (its samples share it), and said once where it cannot be read.
    auto [named, first] = problem_files.try_emplace(verdict.task, KernelBenchProblemFile(planned[i].task->directory));
    if (named->second.ok()) {
      baseline_times.Add(sample.level, *named->second, sample.sample, verdict, where);
    } else if (first) {
      PrintError(named->second.error().message + "; its problem is left out of the baseline timing file");
    }
    tally.Add(entry);
    AddKernelBenchResult(results[sample.level], sample.problem, std::move(entry));
    json line = verdict.ToJson();
    BenchTaskResult& task_result = per_task[verdict.task];
    task_result.task = verdict.task;
    task_result.samples.push_back(SampleFromVerdict(line));
    task_result.device_s += verdict.total_s;
    task_result.wall_s += verdict.total_s;  // a verdict is its task's work end to end
    line["kernelbench"] = {{"level", sample.level}, {"problem_id", sample.problem}, {"sample_id", sample.sample}};
    verdict_lines += line.dump() + "\n";
    Status written = WriteFileAtomic(out / ResultsFileName(sample.level, levels.size() > 1), results[sample.level].dump(4));
    if (written.ok()) written = WriteFileAtomic(out / "ksmith_verdicts.jsonl", verdict_lines);
    if (!written.ok()) {
      PrintError(written.error().message);
      (*service)->Shutdown();
      return kExitInfra;
    }
    if (progress) {
      std::fprintf(stderr, "  [%zu/%zu] %s: %s%s\n", i + 1, planned.size(), sample.path.filename().c_str(),
                   VerdictStatusName(verdict.status),
                   verdict.timing && verdict.status == VerdictStatus::kPassed
                       ? fmt::format(" {:.2f}x ({})", verdict.timing->speedup.median, verdict.timing->comparison).c_str()
                       : "");
    }
  }
  std::vector<std::string> files;
  for (int level : levels) files.push_back((out / ResultsFileName(level, levels.size() > 1)).string());
  files.push_back((out / "ksmith_verdicts.jsonl").string());
  // Named as KernelBench's results/timing/<hardware>/ names them; its analysis takes `baseline_file=`.
  for (const auto& [name, times] : {std::pair{"baseline_time_torch.json", baseline_times.Eager()},
                                    std::pair{"baseline_time_torch_compile_inductor_default.json", baseline_times.Compiled()}}) {
    if (times.empty()) continue;
    if (auto status = WriteFileAtomic(out / name, times.dump(4)); !status.ok()) {
      PrintError(status.error().message);
      return kExitInfra;
    }
    files.push_back((out / name).string());
  }
  json missing_json = json::array();
  for (const auto& [level, problem] : missing) missing_json.push_back({{"level", level}, {"problem_id", problem}});
  // The same figures as `ksmith bench`, over the judged problems (one task each).
  // One service judged every sample: their timings took turns on the device, as a bench's do.
  BenchSettings settings{.suite = "kernelbench run " + flags.folder, .backend = flags.backend,
                         .strategy = "external (a KernelBench run folder)", .jobs = static_cast<int>(workers),
                         .machine = machine, .timing_exclusive = true};
  std::vector<BenchTaskResult> task_results;
  for (auto& [name, task_result] : per_task) {
    settings.samples = std::max<int64_t>(settings.samples, static_cast<int64_t>(task_result.samples.size()));
    task_results.push_back(std::move(task_result));
  }
  const json bench = BenchJson(settings, task_results, SecondsSince(started));
  const fs::path bench_path = out / "ksmith_bench.json";
  if (auto status = WriteFileAtomic(bench_path, bench.dump(2)); !status.ok()) {
    PrintError(status.error().message);
    return kExitInfra;
  }
  files.push_back(bench_path.string());
  const json& metrics = bench.at("summary");
  const json summary = {{"samples", folder->samples.size()}, {"judged", tally.judged}, {"compiled", tally.compiled},
                        {"correct", tally.correct}, {"faster", tally.faster}, {"ties", tally.ties},
                        {"slower", tally.slower}, {"no_custom_kernel", tally.no_custom_kernel},
                        {"generalize", tally.generalize},
                        {"pass_at_1", metrics.at("pass_at_1")}, {"pass_at_k", metrics.at("pass_at_k")},
                        {"fast_p", metrics.at("fast_p")}, {"geomean_speedup", metrics.at("geomean_speedup")},
                        {"missing_tasks", missing_json}, {"ignored_files", folder->ignored}, {"files", files}};
  if (flags.json) {
    std::puts(summary.dump(2).c_str());
  } else {
    std::printf("%d of %zu samples judged: %d compiled, %d correct (passed); of those %d faster, %d ties, %d slower "
                "(95%% intervals), %d with no custom kernel, %d also correct at the hidden shapes\n",
                tally.judged, folder->samples.size(), tally.compiled, tally.correct, tally.faster, tally.ties,
                tally.slower, tally.no_custom_kernel, tally.generalize);
    std::printf("over %zu problems: pass@1 %.2f, fast_1 %.2f (the best sample's interval above 1)\n",
                task_results.size(), metrics.at("pass_at_1").get<double>(), metrics.at("fast_1").get<double>());
    std::printf("written: %s\n", fmt::format("{}", fmt::join(files, ", ")).c_str());
  }
  return kExitOk;
}

}  // namespace

CommandHandler AddKernelBenchCommand(CLI::App& app) {
  auto flags = std::make_shared<KernelBenchRunFlags>();
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand(
      "run",
      "Judge a folder of candidates named the way KernelBench's scripts name them "
      "(level_<L>_problem_<P>_sample_<S>_kernel.py, each a .py defining ModelNew) on their imported tasks "
      "(`ksmith import kernelbench`), and write KernelBench's eval_results.json (compiled, correctness, runtime, "
      "runtime_stats, plus ref_runtime and speedup; ksmith's status, reason and labels in metadata), KernelBench's baseline timing file "
      "(baseline_time_torch.json, for its analysis script's baseline_file=) and "
      "ksmith_verdicts.jsonl, each updated as a verdict arrives");
  run->add_option("folder", flags->folder, "The folder of candidates (KernelBench's runs/<run_name>)")->required();
  run->add_option("--backend,-b", flags->backend, "Where the candidates run")
      ->check(CLI::IsMember(BackendRegistry::Global().Names()))
      ->capture_default_str();
  run->add_option("--out", flags->out, "Folder to write the results into (default: the candidates' folder)");
  run->add_option("--jobs,-j", flags->jobs, "Candidates evaluated at once (default: as `ksmith eval`)")
      ->check(RangeCheck("eval_jobs"));
  AddBuildLimitOptions(*run, flags->build_memory_gib, flags->build_cpu_s);
  run->add_option("--timing-budget", flags->timing_budget_s, "Seconds each candidate's timing loop may take")
      ->check(RangeCheck("timing_budget_s"))
      ->capture_default_str();
  run->add_flag("--compiled-baseline", flags->compiled_baseline,
                "cuda: also time each candidate against torch.compile of its problem's Model (ref_runtime_compiled, "
                "speedup_compiled in eval_results.json)");
  run->add_flag("--json", flags->json, "Print the summary as JSON");
  run->add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  return [flags, run] { return run->parsed() ? RunKernelBenchFolder(*flags) : kExitUsage; };
}

}  // namespace ksmith
