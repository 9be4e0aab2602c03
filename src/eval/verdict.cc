#include "eval/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/verdict_upgrade.h"

namespace ksmith {
namespace {

double NumberAt(const nlohmann::json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<double>() : 0.0;
}

// One timing (against the task's baseline, or the second one) as the verdict's JSON holds it.
nlohmann::json TimingToJson(const Timing& timing) {
  return {{"candidate_us", timing.candidate_us.ToJson()},
          {"baseline_us", timing.baseline_us.ToJson()},
          {"speedup", timing.speedup.ToJson()},
          {"comparison", timing.comparison},
          {"floor_us", timing.floor_us},
          {"bound_by", timing.bound_by},
          {"baseline", timing.baseline},
          {"alone", timing.alone}};
}

Timing TimingFromJson(const nlohmann::json& json) {
  Timing parsed;
  parsed.candidate_us = Estimate::FromJson(json.value("candidate_us", nlohmann::json()));
  parsed.baseline_us = Estimate::FromJson(json.value("baseline_us", nlohmann::json()));
  parsed.speedup = Estimate::FromJson(json.value("speedup", nlohmann::json()));
  parsed.comparison = json.value("comparison", std::string());
  parsed.floor_us = NumberAt(json, "floor_us");
  parsed.bound_by = json.value("bound_by", std::string());
  parsed.baseline = json.value("baseline", std::string());
  parsed.alone = json.value("alone", true);
  return parsed;
}

}  // namespace

const char* VerdictStatusName(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kPassed: return "passed";
    case VerdictStatus::kCompileError: return "compile_error";
    case VerdictStatus::kRuntimeError: return "runtime_error";
    case VerdictStatus::kTimeout: return "timeout";
    case VerdictStatus::kWrongOutput: return "wrong_output";
    case VerdictStatus::kIntegrityViolation: return "integrity_violation";
    case VerdictStatus::kInfraError: return "infra_error";
  }
  return "infra_error";
}

Result<VerdictStatus> ParseVerdictStatus(std::string_view name) {
  for (auto status : {VerdictStatus::kPassed, VerdictStatus::kCompileError, VerdictStatus::kRuntimeError,
                      VerdictStatus::kTimeout, VerdictStatus::kWrongOutput, VerdictStatus::kIntegrityViolation,
                      VerdictStatus::kInfraError}) {
    if (name == VerdictStatusName(status)) return status;
  }
  return MakeError(ErrorKind::kParse, "'{}' is not a verdict status", name);
}

nlohmann::json Verdict::ToJson() const {
  nlohmann::json json = {{"schema_version", schema_version},
                         {"status", VerdictStatusName(status)},
                         {"reason", reason},
                         {"task", task},
                         {"backend", backend},
                         {"candidate", candidate},
                         {"total_s", total_s}};
  nlohmann::json stage_list = nlohmann::json::array();
  for (const auto& stage : stages) {
    stage_list.push_back({{"name", stage.name}, {"outcome", stage.outcome},
                          {"seconds", stage.seconds}, {"started_s", stage.started_s}, {"details", stage.details.ToJson()}});
  }
  json["stages"] = stage_list;
  if (timing) {
    json["speedup"] = timing->speedup.median;
    json["speedup_ci95"] = {timing->speedup.low, timing->speedup.high};
    json["timing"] = TimingToJson(*timing);
    json["roofline_fraction"] = timing->roofline_fraction;
  }
  if (!labels.empty()) json["labels"] = labels;
  extensions.AddToJson(json);
  json["provenance"] = provenance;
  return json;
}

Result<Verdict> Verdict::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return MakeError(ErrorKind::kParse, "a verdict is a JSON object, not {}", json.type_name());
  const auto text = [&json](const char* key) {
    const auto found = json.find(key);
    return found != json.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  auto status = ParseVerdictStatus(text("status"));
  if (!status.ok()) return MakeError(ErrorKind::kParse, "not a verdict: {}", status.error().message);
  Verdict verdict;
  verdict.schema_version = json.value("schema_version", 1);
  verdict.status = *status;
  verdict.reason = text("reason");
  verdict.task = text("task");
  verdict.backend = text("backend");
  verdict.candidate = text("candidate");
  verdict.total_s = NumberAt(json, "total_s");
  if (const auto stages = json.find("stages"); stages != json.end() && stages->is_array()) {
    for (const auto& stage : *stages) {
      if (!stage.is_object()) continue;
      StageRecord record;
      record.name = stage.value("name", std::string());
      record.outcome = stage.value("outcome", std::string("ok"));
      record.seconds = NumberAt(stage, "seconds");
      record.started_s = NumberAt(stage, "started_s");
      if (const auto details = stage.find("details"); details != stage.end()) {
        record.details = StageDetails::FromJson(*details);
      }
      verdict.stages.push_back(std::move(record));
    }
  }
  if (const auto timing = json.find("timing"); timing != json.end() && timing->is_object()) {
    Timing parsed = TimingFromJson(*timing);
    parsed.roofline_fraction = NumberAt(json, "roofline_fraction");
    verdict.timing = std::move(parsed);
  }
  if (const auto provenance = json.find("provenance"); provenance != json.end() && provenance->is_object()) {
    verdict.provenance = *provenance;
  }
  if (const auto labels = json.find("labels"); labels != json.end() && labels->is_array()) {
    for (const auto& label : *labels) {
      if (label.is_string()) verdict.labels.push_back(label.get<std::string>());
    }
  }
  verdict.extensions = VerdictExtensions::FromJson(json);
  if (verdict.schema_version < 3) UpgradeOldVerdict(verdict);
  return verdict;
}

nlohmann::json Generalization::ToJson() const {
  nlohmann::json json = {{"decided_at", decided_at}, {"hidden_cases", hidden_cases}};
  json["generalizes"] = generalizes ? nlohmann::json(*generalizes) : nlohmann::json();
  if (!problem_sizes.empty()) json["problem_sizes"] = problem_sizes;
  if (!reason.empty()) json["reason"] = reason;
  return json;
}

Generalization Generalization::FromJson(const nlohmann::json& json) {
  Generalization parsed;
  const auto text = [&json](const char* key) {
    const auto found = json.find(key);
    return found != json.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  parsed.decided_at = text("decided_at");
  parsed.problem_sizes = text("problem_sizes");
  parsed.reason = text("reason");
  if (const auto found = json.find("generalizes"); found != json.end() && found->is_boolean()) {
    parsed.generalizes = found->get<bool>();
  }
  if (const auto found = json.find("hidden_cases"); found != json.end() && found->is_number_integer()) {
    parsed.hidden_cases = found->get<int64_t>();
  }
  return parsed;
}

std::string Generalization::Summary() const {
  if (!generalizes) {
    return reason.empty() ? "generalizes: not checked (the hidden shapes run once every other check passed)"
                          : "generalizes: not known: " + reason;
  }
  if (*generalizes) return fmt::format("generalizes: yes ({} cases at the task's hidden shapes)", hidden_cases);
  return "generalizes: no: " + reason;
}

nlohmann::json Verdict::StaticFindings() const {
  nlohmann::json findings = nlohmann::json::array();
  const StageRecord* build = FindStage(StageId::kBuild);
  if (build == nullptr || !build->details.build || !build->details.build->build_sandbox) return findings;
  for (const auto& finding : build->details.build->build_sandbox->value("static_findings", nlohmann::json::array())) {
    if (finding.is_object()) findings.push_back(finding);
  }
  return findings;
}

const StageRecord* Verdict::FindStage(StageId id) const {
  for (const auto& stage : stages) {
    if (stage.Is(id)) return &stage;
  }
  return nullptr;
}

const StageRecord* Verdict::FailedStage() const {
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    if (it->outcome == "failed") return &*it;
  }
  return nullptr;
}

StageRecord& VerdictRecorder::Stage(StageId id) {
  const double started_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - verdict_.started_at).count();
  verdict_.stages.push_back({std::string(StageName(id)), "ok", 0, StageDetails{}, started_s});
  return verdict_.stages.back();
}

bool VerdictRecorder::Finish(StageRecord& stage, VerdictStatus status, std::string reason, FailureKind kind) {
  stage.outcome = "failed";
  if (stage.details.summary.empty()) stage.details.summary = reason;
  if (kind != FailureKind::kUnspecified) stage.details.MutableFailure(kind);
  verdict_.status = status;
  verdict_.reason = std::move(reason);
  return false;
}

Timing MakeTiming(const std::vector<double>& candidate_us, const std::vector<double>& baseline_us,
                  std::string baseline) {
  Timing timing;
  timing.candidate_us = MedianWithInterval(candidate_us);
  timing.baseline_us = MedianWithInterval(baseline_us);
  timing.speedup = PairedSpeedup(baseline_us, candidate_us);
  timing.comparison = timing.speedup.low > 1 ? "faster" : (timing.speedup.high < 1 ? "slower" : "tie");
  timing.baseline = std::move(baseline);
  return timing;
}

void VerdictExtensions::AddToJson(nlohmann::json& verdict) const {
  if (second_timing) {
    verdict["second_speedup"] = second_timing->speedup.median;
    verdict["second_timing"] = TimingToJson(*second_timing);
  }
  if (generalization) verdict["generalization"] = generalization->ToJson();
  if (kernel_time_share) verdict["kernel_time_share"] = kernel_time_share->ToJson();
}

nlohmann::json KernelTimeShare::ToJson() const {
  return {{"own_ns", own_ns}, {"total_ns", total_ns}, {"runs", runs}, {"share", share()}};
}

KernelTimeShare KernelTimeShare::FromJson(const nlohmann::json& json) {
  KernelTimeShare parsed;
  parsed.own_ns = json.value("own_ns", int64_t{0});
  parsed.total_ns = json.value("total_ns", int64_t{0});
  parsed.runs = json.value("runs", int64_t{0});
  return parsed;
}

VerdictExtensions VerdictExtensions::FromJson(const nlohmann::json& verdict) {
  VerdictExtensions extensions;
  if (const auto second = verdict.find("second_timing"); second != verdict.end() && second->is_object()) {
    extensions.second_timing = TimingFromJson(*second);
  }
  if (const auto found = verdict.find("generalization"); found != verdict.end() && found->is_object()) {
    extensions.generalization = Generalization::FromJson(*found);
  }
  if (const auto found = verdict.find("kernel_time_share"); found != verdict.end() && found->is_object()) {
    extensions.kernel_time_share = KernelTimeShare::FromJson(*found);
  }
  return extensions;
}

std::string VerdictExtensions::RenderJudged() const {
  if (!generalization) return {};
  return fmt::format("  judged at {}{}; {}\n", generalization->decided_at,
                     generalization->problem_sizes.empty()
                         ? " (the problem's own sizes)"
                         : " (the problem's sizes, " + generalization->problem_sizes + ", halved to fit)",
                     generalization->Summary());
}

std::string VerdictExtensions::RenderTimings() const {
  if (!second_timing) return {};
  return fmt::format("  second baseline: speedup {:.3f}x (95% CI {:.3f}-{:.3f}, {}): candidate {:.1f} us, "
                     "baseline {:.1f} us: {}\n",
                     second_timing->speedup.median, second_timing->speedup.low, second_timing->speedup.high,
                     second_timing->comparison, second_timing->candidate_us.median,
                     second_timing->baseline_us.median, second_timing->baseline);
}

std::string Verdict::Render() const {
  std::string text = fmt::format("{}: {} (task {}, {})\n", VerdictStatusName(status), reason,
                                 task, backend);
  if (!labels.empty()) text += fmt::format("  labels: {}\n", fmt::join(labels, "; "));
  text += extensions.RenderJudged();
  std::vector<std::string> findings;
  for (const auto& finding : StaticFindings()) {
    const int line = finding.value("line", 0);
    findings.push_back(line > 0 ? fmt::format("{} (line {})", finding.value("check", std::string()), line)
                                : finding.value("check", std::string()));
  }
  if (!findings.empty()) {
    text += fmt::format("  static findings (KernelBench's checks; they inform, the run decides): {}\n",
                        fmt::join(findings, ", "));
  }
  for (const auto& stage : stages) {
    text += fmt::format("  {:<15} {:<7} {:7.3f} s", stage.name, stage.outcome, stage.seconds);
    if (!stage.details.summary.empty()) text += "  " + stage.details.summary;
    text += "\n";
  }
  if (timing) {
    text += fmt::format(
        "  speedup {:.3f}x (95% CI {:.3f}-{:.3f}, {}): candidate {:.1f} us, baseline {:.1f} us "
        "(medians of {} rounds)\n",
        timing->speedup.median, timing->speedup.low, timing->speedup.high, timing->comparison,
        timing->candidate_us.median, timing->baseline_us.median, timing->candidate_us.samples);
    if (!timing->baseline.empty()) text += "  baseline: " + timing->baseline + "\n";
    if (!timing->alone) text += "  timed beside other work (not alone on the device): not comparable\n";
    text += fmt::format("  roofline: {:.1f}% of this machine's {} limit ({:.1f} us)\n",
                        100.0 * timing->roofline_fraction, timing->bound_by, timing->floor_us);
  }
  text += extensions.RenderTimings();
  for (const auto& stage : stages) {
    if (stage.outcome != "failed") continue;
    if (!stage.details.log.empty()) text += "\n" + stage.details.log;
    if (!stage.details.expected_signature.empty()) {
      text += "\nThe candidate must define:\n  " + stage.details.expected_signature + "\n";
    }
  }
  return text;
}

}  // namespace ksmith
