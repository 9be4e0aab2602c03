#include "bench/bench_summary.h"

#include <filesystem>

#include <fmt/format.h>

namespace ksmith {
namespace {

std::optional<double> NumberAt(const nlohmann::json& json, const char* key) {
  if (json.contains(key) && json[key].is_number()) return json[key].get<double>();
  return std::nullopt;
}

nlohmann::json Optional(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

std::string Percent(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.0f}%", 100 * value.get<double>()) : "-";
}

std::string Times(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.2f}x", value.get<double>()) : "-";
}

}  // namespace

SampleOutcome SampleFromVerdict(const nlohmann::json& verdict) {
  SampleOutcome sample;
  sample.correct = verdict.value("status", std::string()) == "passed";
  if (verdict.contains("stages") && verdict["stages"].is_array()) {
    for (const auto& stage : verdict["stages"]) {
      if (stage.value("name", std::string()) == "build") sample.compiled = stage.value("outcome", std::string()) == "ok";
    }
  }
  sample.compiled = sample.compiled || sample.correct;
  // A speedup timed beside other work reads too high or too low: it is counted, never compared.
  if (verdict.contains("timing") && verdict["timing"].is_object() && !verdict["timing"].value("alone", true)) {
    sample.timed_alone = false;
    return sample;
  }
  sample.speedup = NumberAt(verdict, "speedup");
  if (verdict.contains("speedup_ci95") && verdict["speedup_ci95"].is_array() && !verdict["speedup_ci95"].empty() &&
      verdict["speedup_ci95"][0].is_number()) {
    sample.speedup_low = verdict["speedup_ci95"][0].get<double>();
    if (verdict["speedup_ci95"].size() > 1 && verdict["speedup_ci95"][1].is_number()) {
      sample.speedup_high = verdict["speedup_ci95"][1].get<double>();
    }
  }
  sample.roofline_fraction = NumberAt(verdict, "roofline_fraction");
  return sample;
}

nlohmann::json BenchJson(const BenchSettings& settings, const std::vector<BenchTaskResult>& results,
                         double elapsed_s) {
  nlohmann::json tasks = nlohmann::json::array();
  std::vector<TaskMetrics> all;
  std::vector<double> compile_rates, correct_rates, efficiency_at_1;
  int64_t candidates = 0, tokens = 0, timed_not_alone = 0;
  double cost = 0, device_s = 0, wall_s = 0;
  // pass@k over tasks for every k each task that ran reached; a task that could not run counts 0.
  size_t common_k = SIZE_MAX;
  for (const auto& result : results) {
    const TaskMetrics metrics = ComputeTaskMetrics(result.samples);
    nlohmann::json interval;
    if (metrics.best_speedup_low && metrics.best_speedup_high) {
      interval = {*metrics.best_speedup_low, *metrics.best_speedup_high};
    }
    nlohmann::json task = {{"task", result.task},
                           {"run_id", result.run_id},
                           {"error", result.error},
                           {"samples", metrics.samples},
                           {"compile_rate", metrics.compile_rate},
                           {"correct_rate", metrics.correct_rate},
                           {"pass_at_1", metrics.pass_at_k.empty() ? 0.0 : metrics.pass_at_k[0]},
                           {"pass_at_k", metrics.pass_at_k},
                           {"speedup_at_k", metrics.speedup_at_k},
                           {"efficiency_at_1", metrics.efficiency_at_k.empty() ? 0.0 : metrics.efficiency_at_k[0]},
                           {"efficiency_at_k", metrics.efficiency_at_k},
                           {"best_speedup", Optional(metrics.best_speedup)},
                           {"best_speedup_ci95", interval},
                           {"best_speedup_low", Optional(metrics.best_speedup_low)},
                           {"fast_1", FastP({metrics}, 1) > 0},
                           {"best_roofline_fraction", Optional(metrics.best_roofline_fraction)},
                           {"timed_not_alone", metrics.timed_not_alone},
                           {"tokens", result.tokens},
                           {"cost", result.cost_dollars},
                           {"device_s", result.device_s},
                           {"wall_s", result.wall_s},
                           {"strategy", result.strategy},
                           {"best_kernel", result.best_kernel},
                           {"best_knobs", result.best_knobs},
                           {"best_explanation", result.best_explanation}};
    tasks.push_back(std::move(task));
    // A task that could not run counts as failed everywhere: it is in the denominator.
    all.push_back(metrics);
    compile_rates.push_back(metrics.compile_rate);
    correct_rates.push_back(metrics.correct_rate);
    efficiency_at_1.push_back(metrics.efficiency_at_k.empty() ? 0 : metrics.efficiency_at_k[0]);
    if (metrics.samples > 0) common_k = std::min(common_k, metrics.pass_at_k.size());
    candidates += metrics.samples;
    timed_not_alone += metrics.timed_not_alone;
    tokens += result.tokens;
    cost += result.cost_dollars;
    device_s += result.device_s;
    wall_s += result.wall_s;
  }
  if (common_k == SIZE_MAX) common_k = 0;
  nlohmann::json pass_at_k = nlohmann::json::array();
  for (size_t k = 0; k < common_k; ++k) {
    std::vector<double> values;
    for (const auto& metrics : all) values.push_back(metrics.samples > 0 ? metrics.pass_at_k[k] : 0.0);
    pass_at_k.push_back(Mean(values));
  }
  nlohmann::json fast = nlohmann::json::object();
  for (double p : kFastThresholds) fast[fmt::format("{:g}", p)] = FastP(all, p);
  nlohmann::json summary = {{"tasks", results.size()},
                            {"candidates", candidates},
                            {"timed_not_alone", timed_not_alone},
                            {"pass_at_1", pass_at_k.empty() ? nlohmann::json(0.0) : pass_at_k[0]},
                            {"pass_at_k", pass_at_k},
                            {"fast_p", fast},
                            {"fast_1", FastP(all, 1)},
                            {"efficiency_at_1", Mean(efficiency_at_1)},
                            {"compile_rate", Mean(compile_rates)},
                            {"correct_rate", Mean(correct_rates)},
                            {"tokens", tokens},
                            {"cost", cost},
                            {"device_s", device_s},
                            {"wall_s", wall_s}};
  if (elapsed_s > 0) summary["elapsed_s"] = elapsed_s;
  if (auto geomean = GeomeanSpeedup(all)) {
    summary["geomean_speedup"] = geomean->value;
    summary["geomean_speedup_ci95"] = {geomean->low, geomean->high};
    summary["geomean_tasks"] = geomean->tasks;
  } else {
    summary["geomean_speedup"] = nullptr;
    summary["geomean_tasks"] = 0;
  }
  return {{"settings",
           {{"suite", settings.suite}, {"backend", settings.backend}, {"strategy", settings.strategy},
            {"samples", settings.samples}, {"jobs", settings.jobs}, {"timing_exclusive", settings.timing_exclusive},
            {"machine", settings.machine},
            {"ksmith_version", KSMITH_VERSION}}},
          {"tasks", tasks},
          {"summary", summary}};
}

std::string DescribeMachine(const nlohmann::json& machine) {
  if (!machine.is_object()) return "";
  std::string text;
  auto add = [&text](const std::string& part) {
    if (!part.empty()) text += (text.empty() ? "" : ", ") + part;
  };
  if (machine.contains("cpu") && machine["cpu"].is_string()) add(machine["cpu"].get<std::string>());
  if (machine.contains("cores") && machine["cores"].is_number()) add(fmt::format("{} cores", machine["cores"].get<int64_t>()));
  // The device a backend verifies on, under its BackendTraits::device_key ("gpu", "opencl_device").
  for (const auto& [key, value] : machine.items()) {
    if ((key == "gpu" || key.ends_with("_device")) && value.is_string()) add(value.get<std::string>());
  }
  return text;
}

std::string SpeedupWithInterval(const nlohmann::json& task) {
  const auto& median = task["best_speedup"];
  if (!median.is_number()) return "-";
  const auto interval = task.value("best_speedup_ci95", nlohmann::json());
  if (interval.is_array() && interval.size() == 2 && interval[0].is_number() && interval[1].is_number()) {
    return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", median.get<double>(), interval[0].get<double>(),
                       interval[1].get<double>());
  }
  return fmt::format("{:.2f}x", median.get<double>());
}

namespace {

// A table cell: a pipe or a line break would end it.
std::string MarkdownCell(std::string text) {
  for (char& c : text) {
    if (c == '|') c = '/';
    if (c == '\n') c = ' ';
  }
  return text;
}

}  // namespace

std::string BenchMarkdown(const nlohmann::json& bench) {
  const auto& settings = bench["settings"];
  const auto& summary = bench["summary"];
  std::string text = fmt::format("# ksmith bench: suite {}, {} backend, {} strategy, {} samples per task\n\n",
                                 settings.value("suite", ""), settings.value("backend", ""),
                                 settings.value("strategy", ""), settings.value("samples", 0));
  if (const std::string machine = DescribeMachine(settings.value("machine", nlohmann::json())); !machine.empty()) {
    text += fmt::format("- machine: {}\n", machine);
  }
  text += fmt::format("- tasks: {}, candidates: {}\n", summary["tasks"].get<int64_t>(), summary["candidates"].get<int64_t>());
  text += fmt::format("- pass@1: {}; compile rate {}, correct rate {}\n", Percent(summary["pass_at_1"]),
                      Percent(summary["compile_rate"]), Percent(summary["correct_rate"]));
  std::string fast;
  for (const auto& [p, value] : summary["fast_p"].items()) fast += fmt::format("{}fast_{} {}", fast.empty() ? "" : ", ", p, Percent(value));
  text += "- " + fast + " (a speedup counts only when its 95% interval clears p)\n";
  if (summary["geomean_speedup"].is_number()) {
    text += fmt::format("- geometric-mean speedup: {} [{:.2f}, {:.2f}] over the {} tasks with a correct kernel\n",
                        Times(summary["geomean_speedup"]), summary["geomean_speedup_ci95"][0].get<double>(),
                        summary["geomean_speedup_ci95"][1].get<double>(), summary["geomean_tasks"].get<int64_t>());
  } else {
    text += "- geometric-mean speedup: no task has a correct kernel\n";
  }
  text += fmt::format("- efficiency@1 (fraction of the measured roofline): {}\n", Percent(summary["efficiency_at_1"]));
  if (const int64_t beside = summary.value("timed_not_alone", int64_t{0}); beside > 0) {
    text += fmt::format("- {} correct candidate{} timed beside other work (not alone on the device): counted as "
                        "correct, {} speedup left out of every figure above\n",
                        beside, beside == 1 ? " was" : "s were", beside == 1 ? "its" : "their");
  }
  text += fmt::format("- tokens {}, cost ${:.4f}, evaluator time {:.1f} s, wall time {:.1f} s", summary["tokens"].get<int64_t>(),
                      summary["cost"].get<double>(), summary["device_s"].get<double>(), summary["wall_s"].get<double>());
  if (summary.contains("elapsed_s") && summary["elapsed_s"].is_number()) {
    const int64_t jobs = settings.value("jobs", int64_t{1});
    text += fmt::format(" (tasks added up), {:.1f} s elapsed{}", summary["elapsed_s"].get<double>(),
                        jobs > 1 ? fmt::format(" ({} tasks at once)", jobs) : "");
  }
  text += "\n\n";
  text += "| task | samples | correct | pass@1 | best speedup [95% interval] | speedup@1 | efficiency@1 | best kernel | run |\n";
  text += "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& task : bench["tasks"]) {
    auto first = [](const nlohmann::json& list) { return list.empty() ? nlohmann::json() : list[0]; };
    const std::string kernel = task.value("best_kernel", std::string());
    const auto knobs = task.value("best_knobs", nlohmann::json::object());
    std::string best = kernel.empty() ? "-" : fmt::format("[{}]({})", std::filesystem::path(kernel).filename().string(), kernel);
    if (!kernel.empty() && !knobs.empty()) best += " " + knobs.dump();
    if (const std::string words = task.value("best_explanation", std::string()); !kernel.empty() && !words.empty()) {
      best += ": " + words;
    }
    text += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", task["task"].get<std::string>(),
                        task["samples"].get<int64_t>(), Percent(task["correct_rate"]), Percent(first(task["pass_at_k"])),
                        SpeedupWithInterval(task), Times(first(task["speedup_at_k"])),
                        Percent(first(task["efficiency_at_k"])), MarkdownCell(best),
                        task["error"].get<std::string>().empty() ? task["run_id"].get<std::string>()
                                                                  : "error: " + task["error"].get<std::string>());
  }
  return text;
}

}  // namespace ksmith
