#include "eval/cuda_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>

#include "core/clock.h"
#include "eval/gpu_gate.h"
#include "eval/statistics.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;
using std::chrono::milliseconds;

constexpr size_t kGuardBytes = 256;
constexpr auto kSetupTimeout = milliseconds(60'000);  // context creation, module loading
constexpr auto kReplySlack = milliseconds(5000);      // copies of large cases, beyond the call
constexpr int64_t kMagnitudeMaxElements = 65536;
constexpr double kPhysicalSlack = 2.5;
constexpr double kGpuTargetRse = 0.005;
constexpr size_t kMinFlushBytes = size_t{64} << 20;
constexpr uint64_t kTimingSalt = 0x6707;
constexpr uint64_t kRecheckSalt = 0xec4ec5;
constexpr uint64_t kExtraCallsSalt = 0xca11'0001;
constexpr int kMinExtraCalls = 64;
constexpr int kExtraCallsRange = 448;

std::vector<std::string> WorkerEnvironment() {
  std::vector<std::string> environment;
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    if (const char* value = std::getenv(name); value && *value) {
      environment.push_back(std::string(name) + "=" + value);
    }
  }
  // Kernels are built for the GPU found (SASS), so nothing needs the PTX JIT or its disk cache.
  environment.push_back("CUDA_CACHE_DISABLE=1");
  return environment;
}

// The reference writes doubles: the same layout with every output twice as wide.
CaseLayout ReferenceLayout(const CaseLayout& layout) {
  CaseLayout wide = layout;
  for (auto& slot : wide.tensors) {
    if (slot.output) slot.bytes *= 2;
  }
  return wide;
}

std::string AbsoluteInputs(const std::string& inputs) {
  std::string result = inputs;
  for (size_t offset = 0; offset + sizeof(float) <= result.size(); offset += sizeof(float)) {
    float value;
    std::memcpy(&value, result.data() + offset, sizeof(float));
    value = std::fabs(value);
    std::memcpy(result.data() + offset, &value, sizeof(float));
  }
  return result;
}

// The input tensors as they now stand in a shared arena, in slot order.
std::string InputsOf(const GuardedArena& arena, const CaseLayout& layout) {
  std::string inputs;
  for (const auto& slot : layout.tensors) {
    if (slot.output) continue;
    inputs.append(static_cast<const char*>(arena.pointers()[slot.parameter]), slot.bytes);
  }
  return inputs;
}

// Adds `ms` to a running total in `details[group][key]`.
void AddMilliseconds(nlohmann::json& details, const char* group, const std::string& key, double ms) {
  auto& totals = details[group];
  if (!totals.is_object()) totals = nlohmann::json::object();
  totals[key] = totals.value(key, 0.0) + ms;
}

std::vector<double> Microseconds(const nlohmann::json& nanoseconds) {
  std::vector<double> values;
  for (const auto& value : nanoseconds) values.push_back(value.get<double>() / 1000.0);
  return values;
}

}  // namespace

CudaWorkers CudaWorkers::Start(const EvalOptions& options) {
  CudaWorkers workers;
  workers.scratch = std::make_unique<ScopedTempDir>("cuda-worker", options.scratch_parent);
  if (!workers.scratch->ok()) {
    workers.start_error = "cannot create a scratch folder";
    return workers;
  }
  WorkerOptions worker_options{options.cuda_worker_executable, workers.scratch->path(), 1, WorkerEnvironment()};
  auto candidate = WorkerProcess::Start(worker_options);
  auto reference = candidate.ok() ? WorkerProcess::Start(worker_options) : candidate.error();
  if (!candidate.ok() || !reference.ok()) {
    workers.start_error = (candidate.ok() ? reference.error() : candidate.error()).message;
    return workers;
  }
  workers.candidate = std::move(candidate.value());
  workers.reference = std::move(reference.value());
  return workers;
}

bool CudaSession::WorkerFailed(StageRecord& stage, WorkerProcess& worker, bool trusted) {
  const auto& failure = *worker.failure();
  if (trusted) {
    return Finish(stage, VerdictStatus::kInfraError, "the reference worker failed: " + failure.description);
  }
  const std::string output = worker.OutputTail(2000);
  if (!output.empty()) stage.details["candidate_output"] = output;
  switch (failure.kind) {
    case WorkerFailureKind::kTimedOut:
      return Finish(stage, VerdictStatus::kTimeout, failure.description);
    case WorkerFailureKind::kCrashed:
    case WorkerFailureKind::kExited:
      return Finish(stage, VerdictStatus::kRuntimeError, failure.description);
    case WorkerFailureKind::kProtocol:
      return Finish(stage, VerdictStatus::kIntegrityViolation, failure.description + " (forged or corrupted reply)");
    case WorkerFailureKind::kInfrastructure:
      return Finish(stage, VerdictStatus::kInfraError, failure.description);
  }
  return false;
}

bool CudaSession::Run(const std::filesystem::path& candidate, const std::filesystem::path& baseline,
                      const std::filesystem::path& reference) {
  canary_ = static_cast<uint32_t>(MixCounter(secret_seed_, 0xca4a, 1)) | 0x01010101u;
  if (!Setup(candidate, baseline, reference) || !Correctness() || !IdleCheck()) return false;
  if (options_.time && (!Time() || !Recheck() || !PhysicalLimit())) return false;
  if (!Close()) return false;
  verdict_.status = VerdictStatus::kPassed;
  verdict_.reason = fmt::format("correct on all {} cases", cases_.size());
  if (verdict_.timing) {
    verdict_.reason += fmt::format("; speedup {:.2f}x ({})", verdict_.timing->speedup.median,
                                   verdict_.timing->comparison);
  }
  return true;
}

bool CudaSession::Setup(const std::filesystem::path& candidate, const std::filesystem::path& baseline,
                        const std::filesystem::path& reference) {
  const auto start = Clock::now();
  auto& stage = Stage("sandbox");
  if (!workers_.start_error.empty()) return Finish(stage, VerdictStatus::kInfraError, workers_.start_error);
  const nlohmann::json limits = {{"cpu_seconds", 600}, {"file_bytes", uint64_t{64} << 20}};
  Message trusted;
  trusted.header = {{"type", "setup"}, {"reference", reference.string()}, {"sandbox", options_.sandbox},
                    {"scratch", workers_.scratch->path().string()},
                    {"readable", {reference.parent_path().string()}}, {"limits", limits}};
  Message setup;
  setup.header = {{"type", "setup"}, {"candidate", candidate.string()}, {"baseline", baseline.string()},
                  {"sandbox", options_.sandbox}, {"scratch", workers_.scratch->path().string()},
                  {"readable", {candidate.parent_path().string(), baseline.parent_path().string()}},
                  {"limits", limits}};
  auto trusted_reply = std::async(std::launch::async, [&] {
    return workers_.reference->Request(trusted, "ready", kSetupTimeout, "starting the reference worker");
  });
  auto reply = workers_.candidate->Request(setup, "ready", kSetupTimeout, "loading the candidate");
  auto reference_reply = trusted_reply.get();
  stage.seconds = SecondsSince(start);
  if (!reference_reply) return WorkerFailed(stage, *workers_.reference, true);
  if (reference_reply->type() != "ready") {
    return Finish(stage, VerdictStatus::kInfraError,
                  "the GPU reference could not be loaded: " + reference_reply->header.value("message", std::string("?")));
  }
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (reply->header.contains("protections")) {
    stage.details["protections"] = reply->header["protections"];
    verdict_.provenance["protections"] = reply->header["protections"];
  }
  if (reply->type() == "load_error" && !reply->header.contains("protections")) {
    // Before anything of the candidate's ran: the GPU itself is not usable.
    return Finish(stage, VerdictStatus::kInfraError, "the CUDA worker could not start: " +
                                                         reply->header.value("message", std::string("?")));
  }
  if (reply->type() != "ready") {
    return Finish(stage, VerdictStatus::kRuntimeError,
                  "the candidate could not be loaded: " + reply->header.value("message", std::string("?")));
  }
  const auto device = reply->header.value("device", nlohmann::json::object());
  l2_bytes_ = device.value("l2_bytes", size_t{0});
  verdict_.provenance["gpu"] = device;
  const auto protections = Protections::FromJson(reply->header["protections"]);
  stage.details["summary"] = fmt::format(
      "{}: seccomp {}, landlock {}, network namespace {}", device.value("name", std::string("GPU")),
      protections.seccomp ? "on" : "off",
      protections.landlock_abi > 0 ? "abi " + std::to_string(protections.landlock_abi) : "off",
      protections.network_namespace ? "on" : "off");
  return true;
}

GuardedArena* CudaSession::ArenaFor(StageRecord& stage, WorkerProcess& worker, ArenaMap& arenas,
                                    const CaseLayout& layout, bool trusted) {
  SharedArena& shared = arenas[layout.Key()];
  if (shared.arena) return shared.arena.get();
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(layout));
  if (!memory.ok()) {
    Finish(stage, VerdictStatus::kInfraError, memory.error().message);
    return nullptr;
  }
  Message announce;
  announce.header = layout.ToJson();
  announce.header["type"] = "arena";
  auto reply = worker.Request(announce, "arena_ready", kSetupTimeout, "sharing case memory", (*memory)->fd());
  if (!reply) {
    WorkerFailed(stage, worker, trusted);
    return nullptr;
  }
  if (reply->type() != "arena_ready") {
    Finish(stage, VerdictStatus::kInfraError, "worker error: " + reply->header.value("message", std::string("?")));
    return nullptr;
  }
  if (!reply->header.value("pinned", true)) {
    stage.details["unpinned_arenas"] = stage.details.value("unpinned_arenas", 0) + 1;
  }
  shared.arena = std::make_unique<GuardedArena>(layout, (*memory)->data());
  shared.memory = std::move(memory.value());
  return shared.arena.get();
}

bool CudaSession::RunReference(StageRecord& stage, const CaseLayout& layout, const std::string& inputs,
                               std::vector<std::vector<double>>& outputs) {
  GuardedArena* arena = ArenaFor(stage, *workers_.reference, reference_arenas_, layout, true);
  if (arena == nullptr) return false;
  if (auto status = arena->Prepare(inputs, canary_); !status.ok()) {
    return Finish(stage, VerdictStatus::kInfraError, status.error().message);
  }
  Message request;
  request.header = layout.ToJson();
  request.header["type"] = "run";
  request.header["target"] = "reference";
  auto reply = workers_.reference->Request(request, "result", options_.call_timeout + kReplySlack,
                                           "running the GPU reference");
  if (!reply) return WorkerFailed(stage, *workers_.reference, true);
  if (reply->type() != "result") {
    return Finish(stage, VerdictStatus::kInfraError,
                  "the GPU reference failed: " + reply->header.value("message", std::string("?")));
  }
  outputs.clear();
  for (const auto& slot : layout.tensors) {
    if (!slot.output) continue;
    const auto* values = static_cast<const double*>(arena->pointers()[slot.parameter]);
    outputs.emplace_back(values, values + slot.bytes / sizeof(double));
  }
  return true;
}

bool CudaSession::ComputeExpected(StageRecord& stage, PreparedCase& prepared) {
  const CaseLayout layout = ReferenceLayout(prepared.layout);
  if (!RunReference(stage, layout, prepared.inputs, prepared.expected)) return false;
  prepared.magnitude.clear();
  const DimValues shape = [&] {
    DimValues values;
    for (size_t i = 0; i < task_.dims.size(); ++i) {
      for (size_t p = 0; p < task_.bindings.size(); ++p) {
        if (task_.bindings[p].role == ParameterRole::kDim && task_.bindings[p].index == i) {
          values[task_.dims[i]] = prepared.layout.scalars[p];
        }
      }
    }
    return values;
  }();
  bool small = true;
  for (const auto& output : prepared.expected) small = small && static_cast<int64_t>(output.size()) <= kMagnitudeMaxElements;
  if (task_.Accumulation(shape) > 1 && small) {
    return RunReference(stage, layout, AbsoluteInputs(prepared.inputs), prepared.magnitude);
  }
  return true;
}

bool CudaSession::JudgeReply(StageRecord& stage, const Message& reply, const std::string& label) {
  if (reply.type() == "cuda_error") {
    stage.details["failed_case"] = label;
    return Finish(stage, VerdictStatus::kRuntimeError,
                  fmt::format("CUDA error at {}: {}", label, reply.header.value("message", std::string("?"))));
  }
  if (reply.type() != "result" && reply.type() != "timed") {
    return Finish(stage, VerdictStatus::kInfraError, "worker error: " + reply.header.value("message", std::string("?")));
  }
  const auto violations = reply.header.value("violations", std::vector<std::string>{});
  if (!violations.empty()) {
    stage.details["violations"] = violations;
    stage.details["failed_case"] = label;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("work outside the given stream at {}: {}", label, violations.front()));
  }
  if (reply.header.value("late_write", false)) {
    stage.details["failed_case"] = label;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("at {}: memory was still being written after the given stream completed "
                              "(work left running on another stream)", label));
  }
  return true;
}

bool CudaSession::RunCase(StageRecord& stage, const CaseSpec& spec, PreparedCase& prepared, bool after_timing,
                          int repeat) {
  GuardedArena* arena = ArenaFor(stage, *workers_.candidate, candidate_arenas_, prepared.layout, false);
  if (arena == nullptr) return false;
  if (auto status = arena->Prepare(prepared.inputs, canary_); !status.ok()) {
    return Finish(stage, VerdictStatus::kInfraError, status.error().message);
  }
  std::optional<GpuGate::Shared> gpu_shared(std::in_place, options_.gpu_gate);
  // The reference worker computes the answer while the candidate's worker runs the candidate.
  std::future<bool> expected;
  if (prepared.expected.empty()) {
    expected = std::async(std::launch::async, [&] { return ComputeExpected(stage, prepared); });
  }
  Message request;
  request.header = prepared.layout.ToJson();
  request.header["type"] = "run";
  request.header["target"] = "candidate";
  request.header["repeat"] = repeat;
  const auto timeout = options_.call_timeout * (1 + repeat / 16) + kReplySlack;
  const auto sent = Clock::now();
  auto reply = workers_.candidate->Request(request, "result", timeout, "running case " + spec.label);
  const auto answered = Clock::now();
  const bool reference_ok = !expected.valid() || expected.get();
  AddMilliseconds(stage.details, "evaluator_ms", "candidate_request",
                  1000 * std::chrono::duration<double>(answered - sent).count());
  AddMilliseconds(stage.details, "evaluator_ms", "reference_wait", 1000 * SecondsSince(answered));
  gpu_shared.reset();  // the rest happens on the host
  if (!reference_ok) return false;
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (!JudgeReply(stage, *reply, spec.label)) return false;
  const nlohmann::json phases = reply->header.value("phase_us", nlohmann::json::object());
  for (const auto& [phase, value] : phases.items()) {
    AddMilliseconds(stage.details, "worker_phase_ms", phase, value.get<double>() / 1000);
  }
  const std::string snapshot = arena->Snapshot();
  const CaseCheck check = CheckSnapshot(task_, prepared, snapshot, canary_);
  stage.details["worst_norm_error"] = std::max(stage.details.value("worst_norm_error", 0.0), check.worst_norm_error);
  if (check.problem == CaseProblem::kNone) return true;
  stage.details["failed_case"] = spec.label;
  const std::string launch = reply->header.contains("launch_error")
                                 ? " (the launch failed: " + reply->header["launch_error"].get<std::string>() + ")"
                                 : "";
  switch (check.problem) {
    case CaseProblem::kWrongOutput:
      if (after_timing) {
        return Finish(stage, VerdictStatus::kIntegrityViolation,
                      fmt::format("correct before timing but wrong after it (it behaves differently after "
                                  "many calls), at {}: {}", spec.label, check.description));
      }
      return Finish(stage, VerdictStatus::kWrongOutput,
                    fmt::format("wrong output at {}: {}{}", spec.label, check.description, launch));
    default:
      return Finish(stage, VerdictStatus::kIntegrityViolation,
                    fmt::format("at {}: the kernel {}", spec.label, check.description));
  }
}

bool CudaSession::Correctness() {
  const auto start = Clock::now();
  auto& stage = Stage("correctness");
  cases_ = PlanCases(task_, secret_seed_, options_.seeds, options_.large_elements);
  // Inputs of the next case are generated while the current one runs.
  auto prepare = [this](size_t index) {
    return std::async(std::launch::async, [this, index] { return PrepareCase(task_, cases_[index], kGuardBytes); });
  };
  std::future<PreparedCase> next = prepare(0);
  for (size_t i = 0; i < cases_.size(); ++i) {
    if (options_.progress && (i % 8 == 0 || i + 1 == cases_.size())) {
      options_.progress(fmt::format("correctness {}/{}", i + 1, cases_.size()));
    }
    const auto waiting = Clock::now();
    PreparedCase prepared = next.get();
    AddMilliseconds(stage.details, "evaluator_ms", "inputs_wait", 1000 * SecondsSince(waiting));
    if (i + 1 < cases_.size()) next = prepare(i + 1);
    if (!RunCase(stage, cases_[i], prepared, false)) {
      if (next.valid()) next.wait();
      stage.seconds = SecondsSince(start);
      return false;
    }
  }
  stage.seconds = SecondsSince(start);
  stage.details["cases"] = cases_.size();
  stage.details["summary"] = fmt::format(
      "{} cases ({} GPU shapes x {} distributions, random shapes, the bench shape), checked against the GPU "
      "reference; worst norm-wise error {:.2g}",
      cases_.size(), task_.eval_shapes.size(), task_.distributions.size(),
      stage.details.value("worst_norm_error", 0.0));
  return true;
}

bool CudaSession::IdleCheck() {
  const auto start = Clock::now();
  auto& stage = Stage("idle_check");
  GpuGate::Shared gpu_shared(options_.gpu_gate);
  Message request;
  request.header = {{"type", "idle"}, {"wait_ms", 100}};
  auto reply = workers_.candidate->Request(request, "idle_done", kSetupTimeout, "watching the idle GPU");
  stage.seconds = SecondsSince(start);
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (reply->type() == "cuda_error") return JudgeReply(stage, *reply, "the idle check");
  const auto violations = reply->header.value("violations", std::vector<std::string>{});
  if (!violations.empty()) {
    stage.details["violations"] = violations;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  "work was launched after the kernel's calls had returned: " + violations.front());
  }
  stage.details["summary"] = "no GPU work in the 100 ms after the last call";
  return true;
}

bool CudaSession::Time() {
  const auto start = Clock::now();
  auto& stage = Stage("timing");
  if (gpu_future_.valid()) {
    if (gpu_future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready && options_.progress) {
      options_.progress("waiting for the GPU's peaks to be measured (once per GPU)");
    }
    gpu_ = gpu_future_.get();
    if (gpu_) verdict_.provenance["gpu_facts"] = gpu_->ToJson();
  }
  if (options_.progress) options_.progress("timing against the baseline on the GPU");
  // Nothing else of this process runs on the GPU while a candidate is timed.
  GpuGate::Exclusive gpu_alone(options_.gpu_gate);
  const CaseSpec& bench = cases_.back();
  const CaseLayout layout = MakeLayout(task_, bench.shape, kGuardBytes);
  GuardedArena* arena = ArenaFor(stage, *workers_.candidate, candidate_arenas_, layout, false);
  if (arena == nullptr) return false;
  const double accumulation = task_.Accumulation(bench.shape);
  const double epsilon = DTypeEpsilon(DType::kFloat32);
  const Tolerance tolerance = task_.ToleranceFor(DType::kFloat32);
  const double elementwise = tolerance.elem + epsilon * (16 * std::sqrt(accumulation) + accumulation);
  const double budget_s = options_.timing_budget_s;
  nlohmann::json config = {{"budget_s", budget_s},
                           {"target_rse", std::min(options_.target_rse, kGpuTargetRse)},
                           {"flush_bytes", std::max(2 * l2_bytes_, kMinFlushBytes)},
                           {"seed", DeriveSeed(secret_seed_, kTimingSalt)},
                           {"tolerance", 2 * elementwise},
                           {"scale", 0.0}};
  Message request;
  request.header = layout.ToJson();
  request.header["type"] = "time";
  request.header["config"] = config;
  const auto timeout = milliseconds(static_cast<int64_t>(budget_s * 1000)) + options_.call_timeout * 4 + kSetupTimeout;
  auto reply = workers_.candidate->Request(request, "timed", timeout, "timing on the GPU");
  stage.seconds = SecondsSince(start);
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (!JudgeReply(stage, *reply, "the bench shape while timed")) return false;
  const auto& header = reply->header;
  const auto mismatched = header.value("mismatched_elements", uint64_t{0});
  if (mismatched > 0) {
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("while timed, its output differed from the baseline's on {} elements (it "
                              "skips, caches or changes its work when called repeatedly)", mismatched));
  }
  // The outputs left in place are those of the last, mutated inputs: check them for real.
  PreparedCase last;
  last.layout = layout;
  last.inputs = InputsOf(*arena, layout);
  if (!ComputeExpected(stage, last)) return false;
  const CaseCheck check = CheckSnapshot(task_, last, arena->Snapshot(), canary_);
  stage.details["final_check_s"] = SecondsSince(start) - stage.seconds;
  stage.seconds = SecondsSince(start);
  if (check.problem != CaseProblem::kNone) {
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  "after timing, its output for the last timed inputs is wrong: " + check.description);
  }
  Timing timing;
  const auto candidate_us = Microseconds(header["candidate"]["cold_ns"]);
  const auto baseline_us = Microseconds(header["baseline"]["cold_ns"]);
  if (candidate_us.empty() || baseline_us.empty()) {
    return Finish(stage, VerdictStatus::kInfraError, "no timing sample survived (all throttled?)");
  }
  timing.candidate_us = MedianWithInterval(candidate_us);
  timing.baseline_us = MedianWithInterval(baseline_us);
  timing.speedup = PairedSpeedup(baseline_us, candidate_us);
  timing.comparison = timing.speedup.low > 1 ? "faster" : (timing.speedup.high < 1 ? "slower" : "tie");
  verdict_.timing = timing;
  for (const char* side : {"candidate", "baseline"}) {
    const auto& facts = header[side];
    const double cold_us = MedianWithInterval(Microseconds(facts["cold_ns"])).median;
    const double warm_us = facts.value("warm_ns", 0.0) / 1000.0;
    stage.details[side] = {{"cold_us", cold_us}, {"warm_us", warm_us},
                           {"warm_batch", facts.value("warm_batch", 1)},
                           {"samples", facts["cold_ns"].size()},
                           {"throttled_samples", facts.value("throttled_samples", 0)},
                           {"sm_clock_mhz", facts.value("clock_mhz_median", 0.0)}};
  }
  stage.details["rounds"] = header.value("rounds", 0);
  stage.details["blocking_kernel"] = header.value("blocking_kernel", true);
  stage.details["l2_flush_bytes"] = header.value("flush_bytes", size_t{0});
  stage.details["shape"] = task_.FormatShape(bench.shape);
  if (header.contains("note")) stage.details["note"] = header["note"];
  const double warm_us = stage.details["candidate"]["warm_us"].get<double>();
  const bool warm_differs = std::abs(warm_us - timing.candidate_us.median) > 0.05 * timing.candidate_us.median;
  stage.details["summary"] = fmt::format(
      "cold {:.2f} us vs baseline {:.2f} us{} over {} rounds: speedup {:.2f}x [{:.2f}, {:.2f}] ({})",
      timing.candidate_us.median, timing.baseline_us.median,
      warm_differs ? fmt::format(" (warm {:.2f} us)", warm_us) : "", header.value("rounds", 0),
      timing.speedup.median, timing.speedup.low, timing.speedup.high, timing.comparison);
  return true;
}

bool CudaSession::Recheck() {
  const auto start = Clock::now();
  auto& stage = Stage("recheck");
  // The first case and the largest eval shape, on new values. The bench shape was just checked
  // on fresh values at the end of timing.
  const auto largest = std::max_element(cases_.begin(), cases_.end() - 1, [this](const CaseSpec& a, const CaseSpec& b) {
    return MakeLayout(task_, a.shape, 0).SnapshotBytes() < MakeLayout(task_, b.shape, 0).SnapshotBytes();
  });
  std::vector<CaseSpec> specs = {cases_.front(), *largest};
  for (size_t i = 0; i < specs.size(); ++i) {
    specs[i].seed = DeriveSeed(secret_seed_, kRecheckSalt + i);
    specs[i].label += " (re-check, new values)";
    PreparedCase prepared = PrepareCase(task_, specs[i], kGuardBytes);
    if (!RunCase(stage, specs[i], prepared, true)) return false;
  }
  // A secret number of back-to-back calls, then a checked one with fresh values: a kernel that
  // changes after some count of calls cannot know when the count is reached.
  const auto smallest = std::min_element(cases_.begin(), cases_.end(), [this](const CaseSpec& a, const CaseSpec& b) {
    return MakeLayout(task_, a.shape, 0).SnapshotBytes() < MakeLayout(task_, b.shape, 0).SnapshotBytes();
  });
  const int extra_calls = kMinExtraCalls + static_cast<int>(MixCounter(secret_seed_, kExtraCallsSalt, 0) % kExtraCallsRange);
  CaseSpec spec = *smallest;
  spec.seed = DeriveSeed(secret_seed_, kExtraCallsSalt + 1);
  spec.label += " (re-check, after extra calls)";
  PreparedCase prepared = PrepareCase(task_, spec, kGuardBytes);
  if (!RunCase(stage, spec, prepared, true, extra_calls)) return false;
  stage.seconds = SecondsSince(start);
  stage.details["extra_calls"] = extra_calls;
  stage.details["summary"] = fmt::format(
      "correct after timing, on fresh values in the same buffers, and after {} more calls", extra_calls);
  return true;
}

bool CudaSession::PhysicalLimit() {
  auto& stage = Stage("physical_limit");
  Timing& timing = *verdict_.timing;
  if (!gpu_ || gpu_->copy_bandwidth_gbps <= 0 || gpu_->fp32_tflops <= 0) {
    stage.details["summary"] = "skipped: no measured GPU peaks (run `ksmith doctor`)";
    return true;
  }
  const DimValues& shape = cases_.back().shape;
  const double flops = static_cast<double>(task_.Flops(shape));
  const double bytes = static_cast<double>(task_.MinimumBytes(shape));
  // As on the CPU: a baseline faster than the measured peaks means the peaks read low.
  const double baseline_s = timing.baseline_us.median * 1e-6;
  const double bandwidth_gbps = std::max(gpu_->copy_bandwidth_gbps, bytes / baseline_s / 1e9);
  const double tflops = std::max(gpu_->fp32_tflops, flops / baseline_s / 1e12);
  const double compute_us = flops / (tflops * 1e6);
  const double memory_us = bytes / (bandwidth_gbps * 1e3);
  timing.floor_us = std::max(compute_us, memory_us);
  timing.bound_by = memory_us >= compute_us ? "memory" : "compute";
  timing.roofline_fraction = timing.floor_us / timing.candidate_us.median;
  stage.details = nlohmann::json{{"floor_us", timing.floor_us}, {"bound_by", timing.bound_by},
                                 {"copy_bandwidth_gbps", bandwidth_gbps}, {"fp32_tflops", tflops}};
  if (timing.candidate_us.median * kPhysicalSlack < timing.floor_us) {
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("measured {:.2f} us, but this GPU needs at least {:.2f} us to move {:.0f} bytes "
                              "and do {:.0f} flops: the time is not real",
                              timing.candidate_us.median, timing.floor_us, bytes, flops));
  }
  stage.details["summary"] = fmt::format("{:.0f}% of the {} limit", 100 * timing.roofline_fraction, timing.bound_by);
  return true;
}

bool CudaSession::Close() {
  auto& stage = Stage("close");
  const auto start = Clock::now();
  const bool reference_closed = workers_.reference->Close(kSetupTimeout);
  const bool closed = workers_.candidate->Close(kSetupTimeout);
  stage.seconds = SecondsSince(start);
  if (!closed) return WorkerFailed(stage, *workers_.candidate, false);
  if (!reference_closed) return WorkerFailed(stage, *workers_.reference, true);
  stage.details["summary"] = "both workers exited cleanly with nothing left unread";
  return true;
}

}  // namespace ksmith
