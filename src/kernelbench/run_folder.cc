#include "kernelbench/run_folder.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <tuple>

#include <fmt/format.h>

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kMicrosecondsPerMillisecond = 1000.0;

// KernelBench's get_timing_stats fields, then ksmith's median and interval.
json RuntimeStats(const Estimate& estimate, const KernelBenchHardware& where) {
  return {{"mean", estimate.mean / kMicrosecondsPerMillisecond},
          {"std", estimate.stddev / kMicrosecondsPerMillisecond},
          {"min", estimate.min / kMicrosecondsPerMillisecond},
          {"max", estimate.max / kMicrosecondsPerMillisecond},
          {"num_trials", estimate.samples},
          {"hardware", where.hardware},
          {"device", where.device},
          {"median", estimate.median / kMicrosecondsPerMillisecond},
          {"ci95_low", estimate.low / kMicrosecondsPerMillisecond},
          {"ci95_high", estimate.high / kMicrosecondsPerMillisecond},
          {"unit", "ms"}};
}

// KernelBench's baseline record: its get_timing_stats fields only.
json BaselineRecord(const Estimate& estimate, const KernelBenchHardware& where) {
  json record = RuntimeStats(estimate, where);
  for (const char* ksmith_only : {"median", "ci95_low", "ci95_high", "unit"}) record.erase(ksmith_only);
  return record;
}

}  // namespace

Result<KernelBenchFolder> FindKernelBenchSamples(const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    return MakeError(ErrorKind::kInvalidArgument, "{} is not a folder of KernelBench candidates", folder.string());
  }
  static const std::regex kName(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  KernelBenchFolder found;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(error) || !name.ends_with(".py")) continue;
    std::smatch match;
    if (!std::regex_match(name, match, kName)) {
      found.ignored.push_back(name);
      continue;
    }
    found.samples.push_back({std::stoi(match[1]), std::stoi(match[2]), std::stoi(match[3]), entry.path()});
  }
  if (error) return MakeError(ErrorKind::kIo, "cannot list {}: {}", folder.string(), error.message());
  if (found.samples.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "{} holds no candidate named the way KernelBench names them "
                     "(level_<L>_problem_<P>_sample_<S>_kernel.py){}",
                     folder.string(), found.ignored.empty() ? "" : fmt::format("; it has {} other .py files", found.ignored.size()));
  }
  std::sort(found.samples.begin(), found.samples.end(), [](const auto& a, const auto& b) {
    return std::tie(a.level, a.problem, a.sample) < std::tie(b.level, b.problem, b.sample);
  });
  std::sort(found.ignored.begin(), found.ignored.end());
  return found;
}

std::string KernelBenchTaskPrefix(int level, int problem) { return fmt::format("kb_l{}_{:03d}_", level, problem); }

json KernelBenchResultEntry(const Verdict& verdict, int sample, const KernelBenchHardware& where) {
  const bool compiled = verdict.status != VerdictStatus::kCompileError && verdict.status != VerdictStatus::kInfraError;
  const bool correct = verdict.status == VerdictStatus::kPassed;
  json metadata = {{"ksmith_status", VerdictStatusName(verdict.status)},
                   {"ksmith_reason", verdict.reason},
                   {"ksmith_labels", verdict.labels},
                   {"task", verdict.task},
                   {"backend", verdict.backend}};
  json static_checks = json::array();
  for (const auto& finding : verdict.StaticFindings()) static_checks.push_back(finding.value("check", std::string()));
  metadata["ksmith_static_findings"] = std::move(static_checks);
  if (const auto& shapes = verdict.extensions.generalization) {
    // KernelBench's problems are fixed-shape: whether the kernel works at other sizes is a property.
    metadata["ksmith_generalizes"] = shapes->generalizes ? json(*shapes->generalizes) : json();
    metadata["ksmith_judged_at"] = shapes->decided_at;
  }
  json entry = {{"sample_id", sample}, {"compiled", compiled}, {"correctness", correct}, {"runtime", -1.0},
                {"runtime_stats", json::object()}, {"ref_runtime", -1.0}, {"speedup", -1.0}};
  if (correct && verdict.timing) {
    const Timing& timing = *verdict.timing;
    // Means, as KernelBench's runtime is (its analysis divides the baseline file's mean by it);
    // ksmith's medians, on which the verdict rests, are in runtime_stats and the speedup.
    entry["runtime"] = timing.candidate_us.mean / kMicrosecondsPerMillisecond;
    entry["ref_runtime"] = timing.baseline_us.mean / kMicrosecondsPerMillisecond;
    entry["speedup"] = timing.speedup.median;
    entry["runtime_stats"] = RuntimeStats(timing.candidate_us, where);
    metadata["ksmith_comparison"] = timing.comparison;  // faster, slower or tie: what fast_p should count
    metadata["ksmith_speedup_ci95"] = {timing.speedup.low, timing.speedup.high};
    metadata["ksmith_baseline"] = timing.baseline;
  }
  if (correct && verdict.extensions.second_timing) {
    // torch.compile beside eager (`--compiled-baseline`), as KernelBench's baseline scripts time both.
    const Timing& compiled_timing = *verdict.extensions.second_timing;
    entry["ref_runtime_compiled"] = compiled_timing.baseline_us.mean / kMicrosecondsPerMillisecond;
    entry["speedup_compiled"] = compiled_timing.speedup.median;
    metadata["ksmith_compiled_comparison"] = compiled_timing.comparison;
    metadata["ksmith_compiled_speedup_ci95"] = {compiled_timing.speedup.low, compiled_timing.speedup.high};
  }
  entry["metadata"] = std::move(metadata);
  return entry;
}

Result<std::string> KernelBenchProblemFile(const fs::path& task_directory) {
  const fs::path spec_path = task_directory / "kernelbench.json";
  std::ifstream in(spec_path);
  const json spec = in ? json::parse(in, nullptr, false) : json();
  if (!spec.is_object() || !spec.value("file", json()).is_string()) {
    return MakeError(ErrorKind::kParse, "{} does not name the problem's file (\"file\"): re-import the task with "
                     "`ksmith import kernelbench`", spec_path.string());
  }
  return fs::path(spec.at("file").get<std::string>()).filename().string();
}

void KernelBenchBaselineTimes::Add(int level, const std::string& problem_file, int sample, const Verdict& verdict,
                                   const KernelBenchHardware& where) {
  auto [found, inserted] = by_problem_.try_emplace({level, problem_file});
  Times& times = found->second;
  if (inserted) {
    // Every judged problem has an entry, or KernelBench's analysis would skip the problem and count
    // fast_p over fewer problems than were judged; it divides by the baseline only where the sample
    // was correct, so a problem none of whose samples passed keeps KernelBench's own "not timed": -1.
    json untimed = {{"mean", -1.0}, {"std", -1.0}, {"min", -1.0}, {"max", -1.0}, {"num_trials", 0},
                    {"hardware", where.hardware}, {"device", where.device},
                    {"ksmith_note", "not timed: no sample of this problem passed"}};
    times.eager = untimed;
    times.compiled = std::move(untimed);
  }
  // Only a passed verdict's baseline times are trusted: a candidate that failed may have slowed it.
  if (verdict.status != VerdictStatus::kPassed || !verdict.timing) return;
  if (times.timed && times.sample <= sample) return;
  times.timed = true;
  times.sample = sample;
  times.eager = BaselineRecord(verdict.timing->baseline_us, where);
  if (verdict.extensions.second_timing) {
    any_compiled_ = true;
    times.compiled = BaselineRecord(verdict.extensions.second_timing->baseline_us, where);
  }
}

json KernelBenchBaselineTimes::Collect(json Times::*field) const {
  json file = json::object();
  for (const auto& [key, times] : by_problem_) {
    if (!(times.*field).is_null()) file[fmt::format("level{}", key.first)][key.second] = times.*field;
  }
  return file;
}

json KernelBenchBaselineTimes::Eager() const { return Collect(&Times::eager); }
json KernelBenchBaselineTimes::Compiled() const { return any_compiled_ ? Collect(&Times::compiled) : json::object(); }

void AddKernelBenchResult(json& results, int problem, json entry) {
  if (!results.is_object()) results = json::object();
  json& list = results[std::to_string(problem)];
  if (!list.is_array()) list = json::array();
  const int sample = entry.value("sample_id", -1);
  for (auto& existing : list) {
    if (existing.value("sample_id", -2) == sample) {
      existing = std::move(entry);
      return;
    }
  }
  list.push_back(std::move(entry));
}

}  // namespace ksmith
