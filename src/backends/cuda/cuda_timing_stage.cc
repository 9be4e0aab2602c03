// The timing stages of a CUDA evaluation: the nvbench-method loop in the worker, the check of
// what it left behind, and the physical limit.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>
#include <optional>

#include "backends/cuda/cuda_session.h"
#include "core/clock.h"
#include "eval/gpu_gate.h"
#include "eval/physical_limit.h"
#include "eval/reuse_check.h"
#include "eval/statistics.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

using Clock = SteadyClock;
using std::chrono::milliseconds;

constexpr double kGpuTargetRse = 0.005;  // the nvbench default
constexpr size_t kMinFlushBytes = size_t{64} << 20;
constexpr uint64_t kTimingSalt = 0x6707;
constexpr uint64_t kSecondTimingSalt = 0x6708;  // the second baseline's rounds draw other inputs
constexpr size_t kMaxSecondTimingLogBytes = 8192;

// The input tensors as they now stand in a shared arena, in slot order.
std::string InputsOf(const GuardedArena& arena, const CaseLayout& layout) {
  std::string inputs;
  for (const auto& slot : layout.tensors) {
    if (slot.output) continue;
    inputs.append(static_cast<const char*>(arena.pointers()[slot.parameter]), slot.bytes);
  }
  return inputs;
}

// Whether the arena's input tensors hold exactly `inputs` (slot order), compared in place.
bool InputsAre(const GuardedArena& arena, const CaseLayout& layout, std::string_view inputs) {
  size_t offset = 0;
  for (const auto& slot : layout.tensors) {
    if (slot.output) continue;
    if (offset + slot.bytes > inputs.size() ||
        std::memcmp(arena.pointers()[slot.parameter], inputs.data() + offset, slot.bytes) != 0) {
      return false;
    }
    offset += slot.bytes;
  }
  return offset == inputs.size();
}

std::vector<double> Microseconds(const nlohmann::json& nanoseconds) {
  std::vector<double> values;
  for (const auto& value : nanoseconds) values.push_back(value.get<double>() / 1000.0);
  return values;
}

}  // namespace

Message CudaSession::TimingRequest(const CaseLayout& layout, uint64_t salt) const {
  const CaseSpec& bench = cases_.back();
  const double accumulation = task_.Accumulation(bench.shape);
  const DType output_dtype = task_.outputs.front().dtype;
  const double epsilon = ComparisonEpsilon(output_dtype);
  const Tolerance tolerance = task_.ToleranceFor(output_dtype);
  const double elementwise = tolerance.elem + epsilon * (16 * std::sqrt(accumulation) + accumulation);
  const double budget_s = options_.timing_budget_s;
  nlohmann::json config = {{"budget_s", budget_s},
                           {"target_rse", std::min(options_.target_rse, kGpuTargetRse)},
                           {"tie_band", options_.tie_band},
                           {"flush_bytes", std::max(2 * l2_bytes_, kMinFlushBytes)},
                           {"seed", DeriveSeed(secret_seed_, salt)},
                           {"final_seed", final_case_.seed},
                           {"distribution", static_cast<int>(bench.distribution)},
                           {"tolerance", 2 * elementwise},
                           {"scale", 0.0}};
  Message request;
  request.header = layout.ToJson();
  request.header["type"] = "time";
  request.header["config"] = config;
  // The bench case's inputs drawn in the worker (its held ones stay for every round), and the
  // last call's checked there against a second draw: only guards and outputs come back.
  if (DrawableOnDevice(layout)) request.header["draw"] = CaseDraw{bench.seed, bench.distribution}.ToJson();
  return request;
}

std::chrono::milliseconds CudaSession::TimingTimeout() const {
  return milliseconds(static_cast<int64_t>(options_.timing_budget_s * 1000)) + options_.call_timeout * 4 + kCudaSetupTimeout;
}

bool CudaSession::Time() {
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kTiming);
  if (gpu_future_.valid()) {
    if (gpu_future_.wait_for(std::chrono::seconds(0)) != std::future_status::ready && options_.progress) {
      options_.progress("waiting for the GPU's peaks to be measured (once per GPU)");
    }
    gpu_ = gpu_future_.get();
    if (gpu_) verdict_.provenance["gpu_facts"] = gpu_->ToJson();
  }
  if (options_.progress) options_.progress("timing against the baseline on the GPU");
  // Nothing else of this process runs on the GPU while a candidate is timed; the check of what
  // timing left behind shares it again, so that other verdicts' work goes on meanwhile.
  std::optional<GpuGate::Exclusive> gpu_alone(std::in_place, options_.gpu_gate);
  const CaseSpec& bench = cases_.back();
  CaseLayout layout = MakeLayout(task_, bench.shape, kCudaGuardBytes);
  layout.held_seed = bench.held_seed;  // the arena of the bench shape's cases, whose weights stay
  GuardedArena* arena = ArenaFor(stage, layout);
  if (arena == nullptr) return false;
  Message request = TimingRequest(layout, kTimingSalt);
  if (request.header.contains("draw")) arena->PrepareGuards(guard_key_);
  const auto timeout = TimingTimeout();
  auto reply = workers_.candidate->Request(request, "timed", timeout, "timing on the GPU");
  gpu_alone.reset();
  stage.seconds = SecondsSince(start);
  const CaseRef timed_case{.label = "the bench shape while timed", .shape = task_.FormatShape(bench.shape)};
  if (!reply) return WorkerFailed(stage, *workers_.candidate, false);
  if (!JudgeReply(stage, *reply, timed_case)) return false;
  const auto& header = reply->header;
  if (request.header.contains("draw") && !header.value("drew", false)) {
    return Finish(stage, VerdictStatus::kInfraError, kWorkerDidNotDraw, FailureKind::kInfrastructure);
  }
  TimingFacts& facts = stage.details.MutableTiming();
  facts.shape = timed_case.shape;
  const auto mismatched = header.value("mismatched_elements", uint64_t{0});
  if (mismatched > 0) {
    facts.mismatch = fmt::format("differed from the baseline's output on {} elements", mismatched);
    stage.details.MutableFailure(FailureKind::kTimedOutputDiffers).at = timed_case;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  fmt::format("while timed, its output differed from the baseline's on {} elements (it "
                              "skips, caches or changes its work when called repeatedly)", mismatched));
  }
  // The outputs left in place are those of the last call's inputs, drawn in the worker from
  // final_case_'s seed: the feed has the reference's answer for them. Should the inputs found
  // differ (the device's generator and the host's disagree, or the candidate changed them), the
  // reference answers the inputs as found, as before the feed.
  auto answered_ahead = feed_->Next();
  feed_.reset();
  if (!answered_ahead.ok()) {
    return Finish(stage, VerdictStatus::kInfraError, answered_ahead.error().message, FailureKind::kInfrastructure);
  }
  PreparedCase last = std::move(answered_ahead.value());
  // Found as drawn by the worker's second draw on the device, the inputs did not come back.
  const ArenaPart part = request.header.contains("draw") && header.value("inputs_as_drawn", false)
                             ? ArenaPart::kGuardsAndOutputs
                             : ArenaPart::kAll;
  if (part == ArenaPart::kAll && !InputsAre(*arena, layout, last.inputs)) {
    last = PreparedCase{.layout = layout, .inputs = InputsOf(*arena, layout)};
    stage.details.note = "the last timed call's inputs were not the ones drawn ahead; checked against the reference on the inputs found";
    GpuGate::Shared gpu_shared(options_.gpu_gate);
    if (Status answered = ComputeExpected(last); !answered.ok()) {
      return Finish(stage, VerdictStatus::kInfraError, answered.error().message, FailureKind::kInfrastructure);
    }
  }
  arena->SnapshotInto(snapshot_, part);
  const CaseCheck check = CheckSnapshot(task_, last, snapshot_, guard_key_, part);
  facts.final_check_s = SecondsSince(start) - stage.seconds;
  stage.seconds = SecondsSince(start);
  if (check.problem == CaseProblem::kGuardDamaged) {
    // The zones were filled before the first timed call and the rounds run in this arena: any
    // timed call may have written them.
    Failure& failure = stage.details.MutableFailure(FailureKind::kOutOfBounds);
    failure.at = timed_case;
    failure.guard = check.guard;
    return Finish(stage, VerdictStatus::kIntegrityViolation, "while timed, the kernel " + check.description);
  }
  if (check.problem != CaseProblem::kNone) {
    facts.mismatch = "the last timed output is wrong: " + check.description;
    stage.details.MutableFailure(FailureKind::kTimedOutputDiffers).at = timed_case;
    return Finish(stage, VerdictStatus::kIntegrityViolation,
                  "after timing, its output for the last timed inputs is wrong: " + check.description);
  }
  const auto candidate_us = Microseconds(header["candidate"]["cold_ns"]);
  const auto baseline_us = Microseconds(header["baseline"]["cold_ns"]);
  if (candidate_us.empty() || baseline_us.empty()) {
    return Finish(stage, VerdictStatus::kInfraError, "no timing sample survived (all throttled?)",
                  FailureKind::kInfrastructure);
  }
  verdict_.timing = MakeTiming(candidate_us, baseline_us, task_.baselines.at("cuda").description);
  const Timing& timing = *verdict_.timing;
  for (const char* side : {"candidate", "baseline"}) {
    const auto& measured = header[side];
    SideTiming& timed = (std::string_view(side) == "candidate" ? facts.candidate : facts.baseline).emplace();
    timed.cold_us = MedianWithInterval(Microseconds(measured["cold_ns"])).median;
    timed.warm_us = measured.value("warm_ns", 0.0) / 1000.0;
    timed.warm_batch = measured.value("warm_batch", 1);
    timed.samples = static_cast<int64_t>(measured["cold_ns"].size());
    timed.throttled_samples = measured.value("throttled_samples", 0);
    timed.sm_clock_mhz = measured.value("clock_mhz_median", 0.0);
    timed.reuse_us = ReusedMedianUs(ReuseTimes{0, Microseconds(measured.value("reuse_ns", nlohmann::json::array()))});
  }
  facts.rounds = header.value("rounds", 0);
  facts.budget_s = options_.timing_budget_s;
  facts.loop_s = header.value("elapsed_s", 0.0);
  facts.stopped_by = header.value("stopped_by", std::string("rounds"));
  facts.blocking_kernel = header.value("blocking_kernel", true);
  // Where the worker's timing call spent its time (set-up, rounds, reuse, warm, last call, ...).
  auto& phase_ms = stage.details.MutableCounters().worker_phase_ms;
  const nlohmann::json phase_us = header.value("phase_us", nlohmann::json::object());
  for (const auto& [phase, value] : phase_us.items()) {
    if (value.is_number()) phase_ms[phase] = value.get<double>() / 1000;
  }
  facts.l2_flush_bytes = header.value("flush_bytes", int64_t{0});
  if (header.contains("note") && header["note"].is_string()) {
    const std::string worker_note = header["note"].get<std::string>();
    stage.details.note = stage.details.note.empty() ? worker_note : worker_note + "; " + stage.details.note;
  }
  const ReuseTimes candidate_reuse{timing.candidate_us.median,
                                   Microseconds(header["candidate"].value("reuse_ns", nlohmann::json::array()))};
  const ReuseTimes baseline_reuse{timing.baseline_us.median,
                                  Microseconds(header["baseline"].value("reuse_ns", nlohmann::json::array()))};
  if (const auto skipped = JudgeReuse(candidate_reuse, baseline_reuse)) {
    return Finish(stage, VerdictStatus::kIntegrityViolation, *skipped, FailureKind::kFasterOnReusedInputs);
  }
  const double warm_us = facts.candidate->warm_us;
  const bool warm_differs = std::abs(warm_us - timing.candidate_us.median) > 0.05 * timing.candidate_us.median;
  stage.details.summary = fmt::format(
      "cold {:.2f} us vs baseline {:.2f} us{} over {} rounds: speedup {:.2f}x [{:.2f}, {:.2f}] ({})",
      timing.candidate_us.median, timing.baseline_us.median,
      warm_differs ? fmt::format(" (warm {:.2f} us)", warm_us) : "", header.value("rounds", 0),
      timing.speedup.median, timing.speedup.low, timing.speedup.high, timing.comparison);
  if (!stage.details.note.empty()) stage.details.summary += "; " + stage.details.note;
  return true;
}

void CudaSession::TimeAgainstSecondBaseline() {
  if (second_.library.empty() && second_.note.empty()) return;
  const auto start = Clock::now();
  auto& stage = Stage(StageId::kSecondTiming);
  if (second_.library.empty()) {
    stage.details.summary = second_.note;
    return;
  }
  if (options_.progress) options_.progress("timing against the second baseline (torch.compile) on the GPU");
  std::optional<GpuGate::Exclusive> gpu_alone(std::in_place, options_.gpu_gate);
  CaseLayout layout = MakeLayout(task_, cases_.back().shape, kCudaGuardBytes);
  layout.held_seed = cases_.back().held_seed;
  Message request = TimingRequest(layout, kSecondTimingSalt);
  request.header["against"] = "second_baseline";
  if (const auto found = candidate_arenas_.find(layout.Key()); found != candidate_arenas_.end() && found->second.arena) {
    found->second.arena->PrepareGuards(guard_key_);
  }
  auto reply = workers_.candidate->Request(request, "timed", TimingTimeout(), "timing against the second baseline");
  gpu_alone.reset();
  stage.seconds = SecondsSince(start);
  // Reported only: the verdict was decided against the first baseline.
  if (!reply || reply->type() != "timed") {
    const auto& failure = workers_.candidate->failure();
    stage.details.summary = "not measured: " + (reply     ? reply->header.value("message", reply->type())
                                                : failure ? failure->description
                                                          : std::string("the worker did not answer"));
    // What the compiled baseline's Python said (a trace that failed, a refused call).
    stage.details.log = workers_.candidate->OutputTail(kMaxSecondTimingLogBytes);
    return;
  }
  const auto& header = reply->header;
  if (const auto mismatched = header.value("mismatched_elements", uint64_t{0}); mismatched > 0) {
    // The candidate's outputs were checked against the reference already: here the second
    // baseline is what disagrees, and a speedup against a baseline that computes something else
    // means nothing. (One that wrote nothing at all the worker reported before the rounds.)
    stage.details.summary = fmt::format("not reported: the second baseline's output differed from the candidate's "
                                        "on {} elements", mismatched);
    return;
  }
  const auto candidate_us = Microseconds(header["candidate"]["cold_ns"]);
  const auto baseline_us = Microseconds(header["baseline"]["cold_ns"]);
  if (candidate_us.empty() || baseline_us.empty()) {
    stage.details.summary = "not measured: no timing sample survived";
    return;
  }
  verdict_.extensions.second_timing = MakeTiming(candidate_us, baseline_us, second_.description);
  const Timing& timing = *verdict_.extensions.second_timing;
  stage.details.summary = fmt::format("cold {:.2f} us vs second baseline {:.2f} us over {} rounds: speedup {:.2f}x "
                                      "[{:.2f}, {:.2f}] ({})", timing.candidate_us.median, timing.baseline_us.median,
                                      header.value("rounds", 0), timing.speedup.median, timing.speedup.low,
                                      timing.speedup.high, timing.comparison);
}

bool CudaSession::PhysicalLimit() {
  const MeasuredPeaks peaks =
      gpu_ ? MeasuredPeaks{gpu_->copy_bandwidth_gbps, gpu_->fp32_tflops * 1e3, gpu_->bf16_tensor_tflops * 1e3}
           : MeasuredPeaks{};
  return CheckPhysicalLimit(recorder_, *verdict_.timing, task_, cases_.back().shape, peaks, "this GPU");
}

}  // namespace ksmith
