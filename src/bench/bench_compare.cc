#include "bench/bench_compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_summary.h"
#include "bench/metrics.h"
#include "core/files.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr std::array kAllChanges = {Change::kImproved,     Change::kRegressed,    Change::kWithinNoise,
                                    Change::kNoInterval,   Change::kNewlyPassing, Change::kNewlyFailing,
                                    Change::kStillFailing, Change::kAdded,        Change::kRemoved};

std::optional<double> NumberAt(const nlohmann::json& json, const char* key) {
  if (json.is_object() && json.contains(key) && json[key].is_number()) return json[key].get<double>();
  return std::nullopt;
}

// The first element of a list of numbers (pass_at_k, efficiency_at_k), for older files.
std::optional<double> FirstNumberAt(const nlohmann::json& json, const char* key) {
  if (json.contains(key) && json[key].is_array() && !json[key].empty() && json[key][0].is_number()) {
    return json[key][0].get<double>();
  }
  return std::nullopt;
}

std::optional<std::array<double, 2>> IntervalAt(const nlohmann::json& json, const char* key) {
  if (!json.is_object() || !json.contains(key)) return std::nullopt;
  const auto& interval = json[key];
  if (!interval.is_array() || interval.size() != 2 || !interval[0].is_number() || !interval[1].is_number()) {
    return std::nullopt;
  }
  return std::array<double, 2>{interval[0].get<double>(), interval[1].get<double>()};
}

std::string StringAt(const nlohmann::json& json, const char* key) {
  if (json.is_object() && json.contains(key) && json[key].is_string()) return json[key].get<std::string>();
  return "";
}

nlohmann::json Optional(const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); }

// A folder suite names its tasks by path; the folder's name is the task's name.
std::string TaskName(const std::string& task) {
  if (task.find('/') == std::string::npos) return task;
  return std::filesystem::path(task).filename().string();
}

// {"a", "b", "delta"} for a figure of the two summaries; null where a side lacks it.
nlohmann::json Delta(const std::optional<double>& a, const std::optional<double>& b) {
  return {{"a", Optional(a)}, {"b", Optional(b)}, {"delta", a && b ? nlohmann::json(*b - *a) : nlohmann::json()}};
}

// A side's geometric mean from its tasks' best speedups and their own intervals, as the summary
// now computes it (GeomeanSpeedup): a file written before the summary counted each task's
// interval carries one that collapses to a point with one or two tasks, and a change called on
// that would be noise. nullopt where no task has a speedup.
std::optional<GeomeanEstimate> GeomeanOfTasks(const std::vector<const TaskSide*>& sides) {
  std::vector<TaskMetrics> tasks;
  for (const TaskSide* side : sides) {
    if (!side->passing || !side->best_speedup) continue;
    TaskMetrics task;
    task.best_speedup = side->best_speedup;
    task.best_speedup_low = side->best_speedup_low;
    task.best_speedup_high = side->best_speedup_high;
    tasks.push_back(task);
  }
  return GeomeanSpeedup(tasks);
}

nlohmann::json GeomeanChange(const nlohmann::json& a, const nlohmann::json& b,
                             const std::optional<GeomeanEstimate>& a_estimate,
                             const std::optional<GeomeanEstimate>& b_estimate) {
  const auto from_tasks = [](const std::optional<GeomeanEstimate>& estimate, const nlohmann::json& summary,
                             std::optional<double>& value, std::optional<std::array<double, 2>>& interval) {
    value = estimate ? std::optional(estimate->value) : NumberAt(summary, "geomean_speedup");
    interval = estimate ? std::optional(std::array<double, 2>{estimate->low, estimate->high})
                        : IntervalAt(summary, "geomean_speedup_ci95");
  };
  std::optional<double> a_value, b_value;
  std::optional<std::array<double, 2>> a_interval, b_interval;
  from_tasks(a_estimate, a, a_value, a_interval);
  from_tasks(b_estimate, b, b_value, b_interval);
  nlohmann::json json = {{"a", Optional(a_value)},
                         {"a_ci95", a_interval ? nlohmann::json(*a_interval) : nlohmann::json()},
                         {"b", Optional(b_value)},
                         {"b_ci95", b_interval ? nlohmann::json(*b_interval) : nlohmann::json()}};
  json["ratio"] = a_value && b_value && *a_value > 0 ? nlohmann::json(*b_value / *a_value) : nlohmann::json();
  json["change"] = a_interval && b_interval
                       ? ChangeName(IntervalChange((*a_interval)[0], (*a_interval)[1], (*b_interval)[0], (*b_interval)[1]))
                       : ChangeName(Change::kNoInterval);
  return json;
}

// What a reader should know before trusting the comparison: settings that differ.
std::vector<std::string> Notes(const nlohmann::json& a, const nlohmann::json& b, bool same_tasks) {
  std::vector<std::string> notes;
  const std::string a_backend = StringAt(a, "backend"), b_backend = StringAt(b, "backend");
  if (a_backend != b_backend) {
    notes.push_back(fmt::format("A ran on the {} backend and B on the {} backend: each speedup is against its own "
                                "backend's baseline", a_backend, b_backend));
  }
  if (StringAt(a, "strategy") != StringAt(b, "strategy")) {
    notes.push_back(fmt::format("strategies differ: {} in A, {} in B", StringAt(a, "strategy"), StringAt(b, "strategy")));
  }
  const auto a_samples = NumberAt(a, "samples"), b_samples = NumberAt(b, "samples");
  if (a_samples != b_samples) {
    notes.push_back(fmt::format("samples per task differ: {} in A, {} in B", a_samples ? fmt::format("{:g}", *a_samples) : "?",
                                b_samples ? fmt::format("{:g}", *b_samples) : "?"));
  }
  const std::string a_machine = DescribeMachine(a.value("machine", nlohmann::json()));
  const std::string b_machine = DescribeMachine(b.value("machine", nlohmann::json()));
  if (!a_machine.empty() && !b_machine.empty() && a_machine != b_machine) {
    notes.push_back(fmt::format("machines differ: {} in A, {} in B", a_machine, b_machine));
  }
  for (const auto& [label, settings] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    const auto jobs = NumberAt(*settings, "jobs");
    const bool exclusive = settings->is_object() && settings->value("timing_exclusive", false);
    if (jobs && *jobs > 1 && !exclusive) {
      notes.push_back(fmt::format("{} ran {:g} tasks at once: its timings overlapped and are noisier", label, *jobs));
    }
  }
  if (!same_tasks) notes.push_back("the task sets differ: the summary figures cover different tasks");
  return notes;
}

// ---- Text ----

std::string Percent(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.0f}%", 100 * value.get<double>()) : "-";
}

std::string Times(const nlohmann::json& value) { return value.is_number() ? fmt::format("{:.2f}x", value.get<double>()) : "-"; }

std::string SpeedupWithInterval(const nlohmann::json& value, const nlohmann::json& interval) {
  if (!value.is_number()) return "-";
  if (!interval.is_array() || interval.size() != 2) return Times(value);
  return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", value.get<double>(), interval[0].get<double>(), interval[1].get<double>());
}

std::string Spaced(const std::string& name) {
  std::string text = name;
  std::replace(text.begin(), text.end(), '_', ' ');
  return text;
}

std::string SideSpeedup(const nlohmann::json& side) {
  if (side.is_null()) return "";
  if (!side["error"].get<std::string>().empty()) return "error";
  if (!side["passing"].get<bool>()) return "none correct";
  return SpeedupWithInterval(side["best_speedup"], side["best_speedup_ci95"]);
}

std::string SidePass(const nlohmann::json& side) { return side.is_null() ? "" : Percent(side["pass_at_1"]); }

// Rounded to `step`, and never "-0": a difference that rounds away shows as +0.
double Rounded(double value, double step) {
  const double rounded = std::round(value / step) * step;
  return rounded == 0 ? 0.0 : rounded;
}

std::string PercentDelta(const nlohmann::json& delta) {
  std::string text = Percent(delta["a"]) + " -> " + Percent(delta["b"]);
  if (delta["delta"].is_number()) text += fmt::format(" ({:+.0f} pts)", Rounded(100 * delta["delta"].get<double>(), 1));
  return text;
}

std::string SecondsDelta(const nlohmann::json& delta) {
  auto seconds = [](const nlohmann::json& value) {
    return value.is_number() ? fmt::format("{:.1f} s", value.get<double>()) : std::string("-");
  };
  std::string text = seconds(delta["a"]) + " -> " + seconds(delta["b"]);
  if (delta["delta"].is_number()) text += fmt::format(" ({:+.1f} s)", Rounded(delta["delta"].get<double>(), 0.1));
  return text;
}

std::string DescribeSide(const nlohmann::json& side) {
  const auto& settings = side["settings"];
  std::string text = fmt::format("{} ({} backend, {} strategy, {} samples, suite {}", side["source"].get<std::string>(),
                                 StringAt(settings, "backend"), StringAt(settings, "strategy"),
                                 NumberAt(settings, "samples") ? fmt::format("{:g}", *NumberAt(settings, "samples")) : "?",
                                 StringAt(settings, "suite"));
  if (const auto jobs = NumberAt(settings, "jobs"); jobs && *jobs > 1) text += fmt::format(", {:g} jobs", *jobs);
  if (const std::string machine = DescribeMachine(settings.value("machine", nlohmann::json())); !machine.empty()) {
    text += ", " + machine;
  }
  return text + ")";
}

}  // namespace

Result<BenchRecord> MakeBenchRecord(std::string source, nlohmann::json bench) {
  auto malformed = [&source](const std::string& what) {
    return MakeError(ErrorKind::kParse, "{}: not a bench result (as `ksmith bench` writes bench.json): {}", source, what);
  };
  if (!bench.is_object()) return malformed("the JSON is not an object");
  if (!bench.contains("settings") || !bench["settings"].is_object()) return malformed("no \"settings\" object");
  if (StringAt(bench["settings"], "backend").empty()) return malformed("\"settings\" has no \"backend\"");
  if (!bench.contains("tasks") || !bench["tasks"].is_array()) return malformed("no \"tasks\" list");
  if (!bench.contains("summary") || !bench["summary"].is_object()) return malformed("no \"summary\" object");
  std::set<std::string> names;
  for (size_t i = 0; i < bench["tasks"].size(); ++i) {
    const auto& task = bench["tasks"][i];
    if (!task.is_object() || StringAt(task, "task").empty()) {
      return malformed(fmt::format("task {} has no \"task\" name", i + 1));
    }
    if (!names.insert(TaskName(task["task"].get<std::string>())).second) {
      return malformed(fmt::format("task '{}' appears twice", TaskName(task["task"].get<std::string>())));
    }
  }
  return BenchRecord{std::move(source), std::move(bench)};
}

Result<BenchRecord> LoadBenchRecord(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::path file = std::filesystem::is_directory(path, error) ? path / "bench.json" : path;
  if (!std::filesystem::exists(file, error)) {
    return file == path ? MakeError(ErrorKind::kNotFound,
                                    "{}: no such file; give the bench.json or the report folder `ksmith bench` wrote",
                                    path.string())
                        : MakeError(ErrorKind::kNotFound,
                                    "{}: the folder holds no bench.json; give a report folder `ksmith bench` wrote",
                                    path.string());
  }
  auto text = ReadFile(file);
  if (!text.ok()) return text.error();
  nlohmann::json bench = nlohmann::json::parse(*text, nullptr, false);
  if (bench.is_discarded()) return MakeError(ErrorKind::kParse, "{}: not valid JSON", file.string());
  return MakeBenchRecord(file.string(), std::move(bench));
}

TaskSide TaskSide::FromJson(const nlohmann::json& task) {
  TaskSide side;
  side.error = StringAt(task, "error");
  side.passing = side.error.empty() && NumberAt(task, "correct_rate").value_or(0) > 0;
  side.pass_at_1 = NumberAt(task, "pass_at_1").value_or(FirstNumberAt(task, "pass_at_k").value_or(0));
  side.best_speedup = NumberAt(task, "best_speedup");
  if (const auto interval = IntervalAt(task, "best_speedup_ci95")) {
    side.best_speedup_low = (*interval)[0];
    side.best_speedup_high = (*interval)[1];
  } else {
    side.best_speedup_low = NumberAt(task, "best_speedup_low");  // older files: the low end only
  }
  side.fast_1 = task.contains("fast_1") && task["fast_1"].is_boolean() ? task["fast_1"].get<bool>()
                                                                       : side.best_speedup_low.value_or(0) > 1;
  side.efficiency_at_1 = NumberAt(task, "efficiency_at_1").value_or(FirstNumberAt(task, "efficiency_at_k").value_or(0));
  side.candidates = static_cast<int64_t>(NumberAt(task, "samples").value_or(0));
  side.tokens = static_cast<int64_t>(NumberAt(task, "tokens").value_or(0));
  side.cost = NumberAt(task, "cost").value_or(0);
  side.wall_s = NumberAt(task, "wall_s").value_or(0);
  side.timed_not_alone = static_cast<int64_t>(NumberAt(task, "timed_not_alone").value_or(0));
  return side;
}

nlohmann::json TaskSide::ToJson() const {
  nlohmann::json interval;
  if (best_speedup_low && best_speedup_high) interval = {*best_speedup_low, *best_speedup_high};
  return {{"passing", passing},
          {"error", error},
          {"pass_at_1", pass_at_1},
          {"best_speedup", Optional(best_speedup)},
          {"best_speedup_ci95", interval},
          {"fast_1", fast_1},
          {"efficiency_at_1", efficiency_at_1},
          {"candidates", candidates},
          {"tokens", tokens},
          {"cost", cost},
          {"wall_s", wall_s},
          {"timed_not_alone", timed_not_alone}};
}

const char* ChangeName(Change change) {
  switch (change) {
    case Change::kAdded: return "added";
    case Change::kRemoved: return "removed";
    case Change::kNewlyPassing: return "newly_passing";
    case Change::kNewlyFailing: return "newly_failing";
    case Change::kStillFailing: return "still_failing";
    case Change::kImproved: return "improved";
    case Change::kRegressed: return "regressed";
    case Change::kWithinNoise: return "within_noise";
    case Change::kNoInterval: return "no_interval";
  }
  return "unknown";
}

Change IntervalChange(double a_low, double a_high, double b_low, double b_high) {
  if (b_low > a_high) return Change::kImproved;
  if (b_high < a_low) return Change::kRegressed;
  return Change::kWithinNoise;
}

Change ClassifyTask(const std::optional<TaskSide>& a, const std::optional<TaskSide>& b) {
  if (!a) return Change::kAdded;
  if (!b) return Change::kRemoved;
  if (!a->passing && !b->passing) return Change::kStillFailing;
  if (!a->passing) return Change::kNewlyPassing;
  if (!b->passing) return Change::kNewlyFailing;
  if (!a->best_speedup_low || !a->best_speedup_high || !b->best_speedup_low || !b->best_speedup_high) {
    return Change::kNoInterval;
  }
  return IntervalChange(*a->best_speedup_low, *a->best_speedup_high, *b->best_speedup_low, *b->best_speedup_high);
}

Result<nlohmann::json> CompareBenches(const BenchRecord& a, const BenchRecord& b, const CompareOptions& options) {
  const auto& a_settings = a.bench["settings"];
  const auto& b_settings = b.bench["settings"];
  const std::string a_backend = StringAt(a_settings, "backend"), b_backend = StringAt(b_settings, "backend");
  if (a_backend != b_backend && !options.allow_mixed_backends) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "A ({}) used the {} backend and B ({}) the {} backend: their speedups are against different "
                     "baselines on different hardware (--allow-mixed compares them anyway)",
                     a.source, a_backend, b.source, b_backend);
  }
  // Both sides by task name; std::map orders the rows by name.
  std::map<std::string, std::pair<std::optional<TaskSide>, std::optional<TaskSide>>> tasks;
  for (const auto& task : a.bench["tasks"]) tasks[TaskName(task["task"].get<std::string>())].first = TaskSide::FromJson(task);
  for (const auto& task : b.bench["tasks"]) tasks[TaskName(task["task"].get<std::string>())].second = TaskSide::FromJson(task);
  std::map<Change, int64_t> counts;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [name, sides] : tasks) {
    const auto& [a_side, b_side] = sides;
    const Change change = ClassifyTask(a_side, b_side);
    ++counts[change];
    nlohmann::json row = {{"name", name},
                          {"a", a_side ? a_side->ToJson() : nlohmann::json()},
                          {"b", b_side ? b_side->ToJson() : nlohmann::json()},
                          {"change", ChangeName(change)}};
    const bool both_timed = a_side && b_side && a_side->passing && b_side->passing && a_side->best_speedup &&
                            b_side->best_speedup && *a_side->best_speedup > 0;
    row["speedup_ratio"] = both_timed ? nlohmann::json(*b_side->best_speedup / *a_side->best_speedup) : nlohmann::json();
    rows.push_back(std::move(row));
  }
  const bool same_tasks = counts[Change::kAdded] == 0 && counts[Change::kRemoved] == 0;
  std::vector<const TaskSide*> a_sides, b_sides;
  for (const auto& [name, sides] : tasks) {
    if (sides.first) a_sides.push_back(&*sides.first);
    if (sides.second) b_sides.push_back(&*sides.second);
  }
  const auto& a_summary = a.bench["summary"];
  const auto& b_summary = b.bench["summary"];
  nlohmann::json changes = nlohmann::json::object();
  for (Change change : kAllChanges) changes[ChangeName(change)] = counts[change];
  nlohmann::json summary = {
      {"pass_at_1", Delta(NumberAt(a_summary, "pass_at_1"), NumberAt(b_summary, "pass_at_1"))},
      {"fast_1", Delta(NumberAt(a_summary, "fast_1"), NumberAt(b_summary, "fast_1"))},
      {"geomean_speedup", GeomeanChange(a_summary, b_summary, GeomeanOfTasks(a_sides), GeomeanOfTasks(b_sides))},
      {"efficiency_at_1", Delta(NumberAt(a_summary, "efficiency_at_1"), NumberAt(b_summary, "efficiency_at_1"))},
      {"wall_s", Delta(NumberAt(a_summary, "wall_s"), NumberAt(b_summary, "wall_s"))},
      {"elapsed_s", Delta(NumberAt(a_summary, "elapsed_s"), NumberAt(b_summary, "elapsed_s"))},
      {"tokens", Delta(NumberAt(a_summary, "tokens"), NumberAt(b_summary, "tokens"))},
      {"cost", Delta(NumberAt(a_summary, "cost"), NumberAt(b_summary, "cost"))},
      {"changes", changes},
      {"same_tasks", same_tasks},
      {"notes", Notes(a_settings, b_settings, same_tasks)}};
  // Each bench left such speedups out already (bench/metrics.h): said here, since the best
  // speedups then stand on fewer candidates.
  const auto a_beside = static_cast<int64_t>(NumberAt(a_summary, "timed_not_alone").value_or(0));
  const auto b_beside = static_cast<int64_t>(NumberAt(b_summary, "timed_not_alone").value_or(0));
  if (a_beside > 0 || b_beside > 0) {
    summary["notes"].push_back(fmt::format(
        "correct candidates timed beside other work (not alone on the device), whose speedups are not compared: "
        "{} in A, {} in B",
        a_beside, b_beside));
  }
  return nlohmann::json{{"a", {{"source", a.source}, {"settings", a_settings}}},
                        {"b", {{"source", b.source}, {"settings", b_settings}}},
                        {"tasks", rows},
                        {"summary", summary}};
}

std::string CompareText(const nlohmann::json& comparison) {
  std::string text = "A: " + DescribeSide(comparison["a"]) + "\n" + "B: " + DescribeSide(comparison["b"]) + "\n\n";
  std::vector<std::vector<std::string>> rows = {{"task", "pass@1 A -> B", "best speedup A", "best speedup B", "B/A", "change"}};
  for (const auto& task : comparison["tasks"]) {
    rows.push_back({task["name"].get<std::string>(), SidePass(task["a"]) + " -> " + SidePass(task["b"]),
                    SideSpeedup(task["a"]), SideSpeedup(task["b"]), Times(task["speedup_ratio"]),
                    Spaced(task["change"].get<std::string>())});
  }
  text += AlignedTable(rows) + "\n";
  const auto& summary = comparison["summary"];
  const auto& geomean = summary["geomean_speedup"];
  text += fmt::format("summary: pass@1 {}, fast_1 {}, geomean speedup {} -> {}", PercentDelta(summary["pass_at_1"]),
                      PercentDelta(summary["fast_1"]), SpeedupWithInterval(geomean["a"], geomean["a_ci95"]),
                      SpeedupWithInterval(geomean["b"], geomean["b_ci95"]));
  if (geomean["ratio"].is_number()) {
    text += fmt::format(" ({}, {})", Times(geomean["ratio"]), Spaced(geomean["change"].get<std::string>()));
  }
  // Older files have only the tasks' times added up; with tasks run at once the elapsed time is the one that counts.
  const bool elapsed = summary["elapsed_s"]["delta"].is_number();
  text += fmt::format(", efficiency@1 {}, wall time {}{}", PercentDelta(summary["efficiency_at_1"]),
                      SecondsDelta(elapsed ? summary["elapsed_s"] : summary["wall_s"]), elapsed ? "" : " (tasks added up)");
  text += "\nchanges:";
  std::string counted;
  for (Change change : kAllChanges) {
    const int64_t count = summary["changes"].value(ChangeName(change), int64_t{0});
    if (count > 0) counted += fmt::format("{} {} {}", counted.empty() ? "" : ",", count, Spaced(ChangeName(change)));
  }
  text += (counted.empty() ? " none" : counted) + "\n";
  for (const auto& note : summary["notes"]) text += "note: " + note.get<std::string>() + "\n";
  return text;
}

}  // namespace ksmith
