#include "eval/stage_details.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <utility>

#include "core/json_fields.h"

namespace ksmith {
namespace {

using Json = nlohmann::json;
using json_fields::ReadFields;
using json_fields::WriteFields;

// What the JSON form of a rejected build's log ends with, before the declaration.
// The declaration says its own linkage (`extern "C"`, `__kernel`). Verdicts stored before 2026-12
// carry the older heading, which reading them back removes too.
constexpr const char* kDeclarationHeading = "\nThe candidate must define:\n  ";
constexpr const char* kOlderDeclarationHeading = "\nThe candidate must define, with C linkage:\n  ";

constexpr std::array<std::pair<FailureKind, const char*>, 26> kFailureKindNames = {{
    {FailureKind::kUnspecified, "unspecified"},
    {FailureKind::kUnusableSource, "unusable_source"},
    {FailureKind::kCompilerRejected, "compiler_rejected"},
    {FailureKind::kBuildLimit, "build_limit"},
    {FailureKind::kContractFinding, "contract_finding"},
    {FailureKind::kNotLoadable, "not_loadable"},
    {FailureKind::kWorkerCrashed, "worker_crashed"},
    {FailureKind::kWorkerExited, "worker_exited"},
    {FailureKind::kWorkerTimedOut, "worker_timed_out"},
    {FailureKind::kForgedReply, "forged_reply"},
    {FailureKind::kCudaError, "cuda_error"},
    {FailureKind::kWrongOutput, "wrong_output"},
    {FailureKind::kInputModified, "input_modified"},
    {FailureKind::kOutOfBounds, "out_of_bounds"},
    {FailureKind::kMalformedReply, "malformed_reply"},
    {FailureKind::kOtherStream, "other_stream"},
    {FailureKind::kLateWrite, "late_write"},
    {FailureKind::kWorkAfterReturn, "work_after_return"},
    {FailureKind::kProcessStateChanged, "process_state_changed"},
    {FailureKind::kForbiddenCall, "forbidden_call"},
    {FailureKind::kTimedOutputDiffers, "timed_output_differs"},
    {FailureKind::kWrongAfterTiming, "wrong_after_timing"},
    {FailureKind::kFasterOnReusedInputs, "faster_on_reused_inputs"},
    {FailureKind::kTimeNotReal, "time_not_real"},
    {FailureKind::kInfrastructure, "infrastructure"},
    {FailureKind::kCancelled, "cancelled"},
}};

}  // namespace

// --- Field lists: the schema, one place per struct ---------------------------------------------
// In ksmith itself, where argument-dependent lookup finds them (core/json_fields.h).

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, CaseRef> {
  io("label", self.label);
  io("shape", self.shape);
  io("distribution", self.distribution);
  io("smallest_dim", self.smallest_dim);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, OutputMismatch> {
  io("output", self.output);
  io("count", self.count);
  io("unwritten", self.unwritten);
  io("nonfinite", self.nonfinite);
  io("over_bound", self.over_bound);
  io("norm_error", self.norm_error);
  io("norm_bound", self.norm_bound);
  io("worst_index", self.worst_index);
  io("worst_got", self.worst_got);
  io("worst_ref", self.worst_ref);
  io("worst_abs_error", self.worst_abs_error);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, GuardBreach> {
  io("tensor", self.tensor);
  io("side", self.side);
  io("offset", self.offset);
  io("element", self.element);
  io("changed_bytes", self.changed_bytes);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, SideTiming> {
  io("cold_us", self.cold_us);
  io("warm_us", self.warm_us);
  io("warm_batch", self.warm_batch);
  io("samples", self.samples);
  io("throttled_samples", self.throttled_samples);
  io("sm_clock_mhz", self.sm_clock_mhz);
  io("reuse_us", self.reuse_us);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, BuildFacts> {
  io("cache_hit", self.cache_hit);
  io("compile_s", self.compile_s);
  io("compiler_sandboxed", self.compiler_sandboxed);
  io("command", self.command);
  io("resources", self.resources);
  io("sass", self.sass);
  io("vector_code", self.vector_code);
  io("shared_object", self.shared_object);
  io("build_sandbox", self.build_sandbox);
  io("limit_exceeded", self.limit_exceeded);
  io("limit_value", self.limit_value);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, CaseGroup> {
  io("shape", self.shape);
  io("distribution", self.distribution);
  io("smallest_dim", self.smallest_dim);
  io("cases", self.cases);
  io("failed", self.failed);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, CaseTally> {
  io("planned", self.planned);
  io("judged", self.judged);
  io("failed", self.failed);
  io("groups", self.groups);
  io("stopped", self.stopped);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, CheckFacts> {
  io("worst_norm_error", self.worst_norm_error);
  io("cases", self.cases);
  io("extra_calls", self.extra_calls);
  io("bitwise_identical", self.bitwise_identical);
  io("case_tally", self.tally);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, RequestCounters> {
  io("unpinned_arenas", self.unpinned_arenas);
  io("inputs_drawn_on_device", self.inputs_drawn_on_device);
  // Written only when counted, as before the types.
  if constexpr (std::is_const_v<Self>) {
    if (!self.evaluator_ms.empty()) io("evaluator_ms", self.evaluator_ms);
    if (!self.worker_phase_ms.empty()) io("worker_phase_ms", self.worker_phase_ms);
  } else {
    io("evaluator_ms", self.evaluator_ms);
    io("worker_phase_ms", self.worker_phase_ms);
  }
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, TimingFacts> {
  io("rounds", self.rounds);
  io("shape", self.shape);
  io("budget_s", self.budget_s);
  io("stopped_by", self.stopped_by);
  io("mismatch", self.mismatch);
  io("attempts", self.attempts);
  io("reuse_pairs", self.reuse_pairs);
  io("waited_s", self.waited_s);
  io("sets", self.sets);
  io("set_bytes", self.set_bytes);
  io("other_load_cores", self.other_load_cores);
  io("steal_cores", self.steal_cores);
  io("request_overhead_us", self.request_overhead_us);
  io("setup_s", self.setup_s);
  io("loop_s", self.loop_s);
  io("candidate_inner_median_us", self.candidate_inner_median_us);
  io("candidate", self.candidate);
  io("baseline", self.baseline);
  io("blocking_kernel", self.blocking_kernel);
  io("l2_flush_bytes", self.l2_flush_bytes);
  io("final_check_s", self.final_check_s);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, PhysicalLimitFacts> {
  io("floor_us", self.floor_us);
  io("bound_by", self.bound_by);
  io("bandwidth_gbps", self.bandwidth_gbps);
  io("fp32_gflops", self.fp32_gflops);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, ProfileFacts> {
  io("facts", self.facts);
  io("kernels", self.kernels);
}

namespace {

// Every key StageDetails owns: the rest of an object read goes to `unknown`.
bool IsKnownKey(const std::string& key) {
  static const std::vector<std::string> kKeys = {
      "summary", "note", "cancelled", "failure", "failed_case", "candidate_output", "log", "expected_signature",
      "diagnostics", "findings", "violations", "protections", "cpu_ms_while_idle",
      // build
      "cache_hit", "compile_s", "compiler_sandboxed", "command", "resources", "sass", "shared_object",
      "limit_exceeded", "limit_value",
      // checks and counters
      "worst_norm_error", "cases", "extra_calls", "bitwise_identical", "case_tally", "evaluator_ms", "worker_phase_ms",
      "unpinned_arenas", "inputs_drawn_on_device",
      // timing
      "rounds", "shape", "budget_s", "stopped_by", "mismatch", "attempts", "reuse_pairs", "waited_s", "sets", "set_bytes", "other_load_cores", "steal_cores",
      "request_overhead_us", "setup_s", "loop_s", "candidate_inner_median_us", "candidate", "baseline",
      "blocking_kernel", "l2_flush_bytes", "final_check_s",
      // physical limit, with the names version 1 used
      "floor_us", "bound_by", "bandwidth_gbps", "fp32_gflops", "memory_bandwidth_gbs", "copy_bandwidth_gbps",
      "fp32_tflops",
      // profile
      "facts", "kernels"};
  return std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end();
}

template <class Section>
std::optional<Section> ReadSection(const Json& json) {
  Section section;
  if (ReadFields(json, section) == 0) return std::nullopt;
  return section;
}

// Version 1 named the physical-limit peaks per backend (docs/verdict.md, Compatibility).
void ReadOldPeakNames(const Json& json, std::optional<PhysicalLimitFacts>& limit) {
  const auto number = [&json](const char* key) -> std::optional<double> {
    const auto found = json.find(key);
    if (found == json.end() || !found->is_number()) return std::nullopt;
    return found->get<double>();
  };
  const auto bandwidth = number("memory_bandwidth_gbs") ? number("memory_bandwidth_gbs") : number("copy_bandwidth_gbps");
  const auto tflops = number("fp32_tflops");
  if (!bandwidth && !tflops) return;
  if (!limit) limit.emplace();
  if (bandwidth && limit->bandwidth_gbps == 0) limit->bandwidth_gbps = *bandwidth;
  if (tflops && limit->fp32_gflops == 0) limit->fp32_gflops = *tflops * 1000;
}

}  // namespace

const char* FailureKindName(FailureKind kind) {
  for (const auto& [value, name] : kFailureKindNames) {
    if (value == kind) return name;
  }
  return "unspecified";
}

FailureKind ParseFailureKind(const std::string& name) {
  for (const auto& [value, known] : kFailureKindNames) {
    if (name == known) return value;
  }
  return FailureKind::kUnspecified;
}

// --- CaseRef, OutputMismatch, GuardBreach, Failure, CaseTally, SideTiming -----------------

Json CaseRef::ToJson() const { return json_fields::ToObject(*this); }
CaseRef CaseRef::FromJson(const Json& json) { return json_fields::FromObject<CaseRef>(json); }

CaseRef CaseRef::FromLabel(const std::string& label) {
  CaseRef ref;
  ref.label = label;
  size_t start = 0;
  while (start < label.size()) {
    size_t end = label.find(", ", start);
    if (end == std::string::npos) end = label.size();
    const std::string part = label.substr(start, end - start);
    const size_t equals = part.find('=');
    if (ref.distribution.empty() && equals != std::string::npos) {
      ref.shape += (ref.shape.empty() ? "" : ", ") + part;
      const int64_t value = std::atoll(part.c_str() + equals + 1);
      ref.smallest_dim = ref.smallest_dim == 0 ? value : std::min(ref.smallest_dim, value);
    } else if (ref.distribution.empty()) {
      ref.distribution = part;
    }
    start = end + 2;
  }
  return ref;
}

Json OutputMismatch::ToJson() const { return json_fields::ToObject(*this); }
OutputMismatch OutputMismatch::FromJson(const Json& json) { return json_fields::FromObject<OutputMismatch>(json); }

Json GuardBreach::ToJson() const { return json_fields::ToObject(*this); }
GuardBreach GuardBreach::FromJson(const Json& json) { return json_fields::FromObject<GuardBreach>(json); }

Json Failure::ToJson() const {
  Json json = {{"kind", FailureKindName(kind)}};
  if (at) json["case"] = at->ToJson();
  if (mismatch) json["mismatch"] = mismatch->ToJson();
  if (guard) json["guard"] = guard->ToJson();
  if (signal != 0) json["signal"] = signal;
  if (!cuda_error.empty()) json["cuda_error"] = cuda_error;
  if (!cuda_error_name.empty()) json["cuda_error_name"] = cuda_error_name;
  return json;
}

Failure Failure::FromJson(const Json& json) {
  Failure failure;
  if (const auto kind = json.find("kind"); kind != json.end() && kind->is_string()) {
    failure.kind = ParseFailureKind(kind->get<std::string>());
  }
  if (const auto at = json.find("case"); at != json.end() && at->is_object()) failure.at = CaseRef::FromJson(*at);
  if (const auto found = json.find("mismatch"); found != json.end() && found->is_object()) {
    failure.mismatch = OutputMismatch::FromJson(*found);
  }
  if (const auto found = json.find("guard"); found != json.end() && found->is_object()) {
    failure.guard = GuardBreach::FromJson(*found);
  }
  json_fields::Reader reader(json);
  reader("signal", failure.signal);
  reader("cuda_error", failure.cuda_error);
  reader("cuda_error_name", failure.cuda_error_name);
  return failure;
}

Json CaseGroup::ToJson() const { return json_fields::ToObject(*this); }
CaseGroup CaseGroup::FromJson(const Json& json) { return json_fields::FromObject<CaseGroup>(json); }

Json CaseTally::ToJson() const { return json_fields::ToObject(*this); }
CaseTally CaseTally::FromJson(const Json& json) { return json_fields::FromObject<CaseTally>(json); }

Json SideTiming::ToJson() const { return json_fields::ToObject(*this); }
SideTiming SideTiming::FromJson(const Json& json) { return json_fields::FromObject<SideTiming>(json); }

// --- StageDetails ----------------------------------------------------------------------------

Json StageDetails::ToJson() const {
  Json json = unknown.is_object() ? unknown : Json::object();
  if (!summary.empty()) json["summary"] = summary;
  if (!note.empty()) json["note"] = note;
  if (cancelled) json["cancelled"] = true;
  if (failure) {
    json["failure"] = failure->ToJson();
    if (failure->at) json["failed_case"] = failure->at->label;  // the label alone, as version 1 wrote it
  }
  if (!candidate_output.empty()) json["candidate_output"] = candidate_output;
  // The JSON log ends with the declaration, as it always has: readers of the log alone see it.
  if (!log.empty()) json["log"] = expected_signature.empty() ? log : log + kDeclarationHeading + expected_signature + "\n";
  if (!expected_signature.empty()) json["expected_signature"] = expected_signature;
  if (!diagnostics.empty()) json["diagnostics"] = json_fields::ToJsonValue(diagnostics);
  if (!findings.empty()) json["findings"] = json_fields::ToJsonValue(findings);
  if (!violations.empty()) json["violations"] = violations;
  if (protections) json["protections"] = protections->ToJson();
  if (cpu_ms_while_idle) json["cpu_ms_while_idle"] = *cpu_ms_while_idle;
  if (build) WriteFields(*build, json);
  if (check) WriteFields(*check, json);
  if (counters) WriteFields(*counters, json);
  if (timing) WriteFields(*timing, json);
  if (limit) WriteFields(*limit, json);
  if (profile) WriteFields(*profile, json);
  return json;
}

StageDetails StageDetails::FromJson(const Json& json) {
  StageDetails details;
  if (!json.is_object()) return details;
  try {
    json_fields::Reader reader(json);
    reader("summary", details.summary);
    reader("note", details.note);
    reader("cancelled", details.cancelled);
    reader("candidate_output", details.candidate_output);
    reader("log", details.log);
    reader("expected_signature", details.expected_signature);
    for (const char* heading : {kDeclarationHeading, kOlderDeclarationHeading}) {
      if (const size_t appended = details.log.rfind(heading); appended != std::string::npos) details.log.resize(appended);
    }
    reader("diagnostics", details.diagnostics);
    reader("findings", details.findings);
    reader("violations", details.violations);
    reader("protections", details.protections);
    reader("cpu_ms_while_idle", details.cpu_ms_while_idle);
    if (const auto found = json.find("failure"); found != json.end() && found->is_object()) {
      details.failure = Failure::FromJson(*found);
    }
    // Version 1 wrote only the label.
    if (const auto label = json.find("failed_case"); label != json.end() && label->is_string()) {
      if (!details.failure) details.failure.emplace();
      if (!details.failure->at) details.failure->at = CaseRef::FromLabel(label->get<std::string>());
    }
    details.build = ReadSection<BuildFacts>(json);
    details.check = ReadSection<CheckFacts>(json);
    details.counters = ReadSection<RequestCounters>(json);
    details.timing = ReadSection<TimingFacts>(json);
    details.limit = ReadSection<PhysicalLimitFacts>(json);
    ReadOldPeakNames(json, details.limit);
    details.profile = ReadSection<ProfileFacts>(json);
    for (const auto& [key, value] : json.items()) {
      if (!IsKnownKey(key)) details.unknown[key] = value;
    }
  } catch (const nlohmann::json::exception&) {
    // A member's own FromJson met a type it cannot take: keep what was read, and the rest as is.
    for (const auto& [key, value] : json.items()) {
      if (!IsKnownKey(key)) details.unknown[key] = value;
    }
  }
  return details;
}

Failure& StageDetails::MutableFailure(FailureKind kind) {
  if (!failure) failure.emplace();
  failure->kind = kind;
  return *failure;
}

CheckFacts& StageDetails::MutableCheck() {
  if (!check) check.emplace();
  return *check;
}

RequestCounters& StageDetails::MutableCounters() {
  if (!counters) counters.emplace();
  return *counters;
}

TimingFacts& StageDetails::MutableTiming() {
  if (!timing) timing.emplace();
  return *timing;
}

std::string StageDetails::FailedCaseLabel() const {
  return failure && failure->at ? failure->at->label : std::string();
}

}  // namespace ksmith
