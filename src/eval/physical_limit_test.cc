// The physical limit on built-in tasks: the limit is the measured peaks plus their noise margin,
// nothing passes above 100% of it, the compute peak follows the input type, and a second
// measurement can save an honest kernel from a stale, low one.
#include "eval/physical_limit.h"

#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Task BuiltIn(const std::string& category, const std::string& name) {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / category / name);
  if (!task.ok()) throw std::runtime_error(task.error().message);
  return *task;
}

// A candidate timed at `candidate_us`, with a baseline far slower, so that the baseline's own rate
// never raises the limit.
Timing Timed(double candidate_us) {
  Timing timing;
  timing.candidate_us.median = candidate_us;
  timing.baseline_us.median = 1e9;
  return timing;
}

// The time at which vector_add's bench shape moves its bytes at exactly `gbps`.
double MicrosecondsAt(const Task& task, double gbps) {
  return static_cast<double>(task.MinimumBytes(task.bench_shape)) / (gbps * 1e3);
}

TEST(PhysicalLimit, AKernelAtTheMeasuredPeakPassesAndOneBeyondTheMarginDoesNot) {
  const Task task = BuiltIn("elementwise", "vector_add");
  const MeasuredPeaks peaks{1000, 1e6, 0};
  Verdict verdict;
  VerdictRecorder recorder(verdict);

  Timing at_peak = Timed(MicrosecondsAt(task, 1000));
  EXPECT_TRUE(CheckPhysicalLimit(recorder, at_peak, task, task.bench_shape, peaks, "this GPU"));
  EXPECT_EQ(at_peak.bound_by, "memory");
  EXPECT_NEAR(at_peak.roofline_fraction, 1 / kPeakNoiseMargin, 1e-9) << "the fraction is of the limit";

  Timing within_margin = Timed(MicrosecondsAt(task, 1000 * (kPeakNoiseMargin - 0.01)));
  EXPECT_TRUE(CheckPhysicalLimit(recorder, within_margin, task, task.bench_shape, peaks, "this GPU"));
  EXPECT_LE(within_margin.roofline_fraction, 1.0);

  Timing beyond = Timed(MicrosecondsAt(task, 1000 * (kPeakNoiseMargin + 0.01)));
  EXPECT_FALSE(CheckPhysicalLimit(recorder, beyond, task, task.bench_shape, peaks, "this GPU"));
  EXPECT_EQ(verdict.status, VerdictStatus::kIntegrityViolation);
  ASSERT_TRUE(verdict.stages.back().details.failure.has_value());
  EXPECT_EQ(verdict.stages.back().details.failure->kind, FailureKind::kTimeNotReal);
  EXPECT_GT(beyond.roofline_fraction, 1.0);
}

TEST(PhysicalLimit, ASecondMeasurementDecidesBeforeATimeIsCalledImpossible) {
  const Task task = BuiltIn("elementwise", "vector_add");
  const MeasuredPeaks stale{500, 1e6, 0};  // measured while the machine was busy
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  int measured = 0;
  const auto remeasure = [&measured] {
    ++measured;
    return MeasuredPeaks{1000, 0, 0};
  };
  Timing honest = Timed(MicrosecondsAt(task, 900));
  EXPECT_TRUE(CheckPhysicalLimit(recorder, honest, task, task.bench_shape, stale, "this machine", remeasure));
  EXPECT_EQ(measured, 1);
  EXPECT_NE(verdict.stages.back().details.note.find("measured again"), std::string::npos);

  Timing fast = Timed(MicrosecondsAt(task, 400));  // within the stale limit: no second look
  EXPECT_TRUE(CheckPhysicalLimit(recorder, fast, task, task.bench_shape, stale, "this machine", remeasure));
  EXPECT_EQ(measured, 1);

  Timing impossible = Timed(MicrosecondsAt(task, 5000));
  EXPECT_FALSE(CheckPhysicalLimit(recorder, impossible, task, task.bench_shape, stale, "this machine", remeasure));
  EXPECT_EQ(measured, 2);
}

TEST(PhysicalLimit, DisturbedTimingGetsTheWiderMarginAndSaysSo) {
  const Task task = BuiltIn("elementwise", "vector_add");
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  Timing timing = Timed(MicrosecondsAt(task, 2000));  // twice the peak: only a disturbed run allows it
  EXPECT_TRUE(CheckPhysicalLimit(recorder, timing, task, task.bench_shape, {1000, 1e6, 0}, "this machine", {},
                                 kDisturbedPeakMargin));
  EXPECT_LE(timing.roofline_fraction, 1.0);
  EXPECT_NE(verdict.stages.back().details.note.find("disturbed"), std::string::npos);
  Timing quiet = Timed(MicrosecondsAt(task, 2000));
  EXPECT_FALSE(CheckPhysicalLimit(recorder, quiet, task, task.bench_shape, {1000, 1e6, 0}, "this machine"));
}

TEST(PhysicalLimit, TheBaselinesOwnRateRaisesALowMeasurement) {
  const Task task = BuiltIn("elementwise", "vector_add");
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  Timing timing = Timed(MicrosecondsAt(task, 1100));
  timing.baseline_us.median = MicrosecondsAt(task, 1000);  // the baseline ran at 1000 GB/s
  EXPECT_TRUE(CheckPhysicalLimit(recorder, timing, task, task.bench_shape, {100, 1e6, 0}, "this GPU"));
  EXPECT_NE(verdict.stages.back().details.note.find("look low"), std::string::npos);
}

TEST(PhysicalLimit, TheComputePeakFollowsTheInputType) {
  const MeasuredPeaks gpu{3000, 50'000, 700'000};
  EXPECT_DOUBLE_EQ(ComputePeakGflops(gpu, DType::kBFloat16), 700'000);
  EXPECT_DOUBLE_EQ(ComputePeakGflops(gpu, DType::kFloat16), 700'000);
  // fp32 through three TF32 products at half the BF16 rate beats the FMA units on this GPU.
  EXPECT_NEAR(ComputePeakGflops(gpu, DType::kFloat32), 700'000.0 / 6, 1e-6);
  const MeasuredPeaks cpu{30, 200, 0};
  EXPECT_DOUBLE_EQ(ComputePeakGflops(cpu, DType::kFloat32), 200);
  EXPECT_GT(ComputePeakGflops(cpu, DType::kBFloat16), 10 * 200) << "unmeasured matrix units: a loose bound";

  // A 16-bit GEMM is held to the tensor units: a time the FMA peak would forbid passes.
  const Task fp16 = BuiltIn("gemm", "matmul_fp16");
  const double flops = static_cast<double>(fp16.Flops(fp16.bench_shape));
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  Timing tensor_speed = Timed(flops / (300'000 * 1e3));  // 300 TFLOP/s
  EXPECT_TRUE(CheckPhysicalLimit(recorder, tensor_speed, fp16, fp16.bench_shape, gpu, "this GPU"));
  Timing beyond = Timed(flops / (900'000 * 1e3));
  EXPECT_FALSE(CheckPhysicalLimit(recorder, beyond, fp16, fp16.bench_shape, gpu, "this GPU"));
}

TEST(PhysicalLimit, WithoutMeasuredPeaksTheStageIsSkipped) {
  const Task task = BuiltIn("elementwise", "vector_add");
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  Timing timing = Timed(0.001);
  EXPECT_TRUE(CheckPhysicalLimit(recorder, timing, task, task.bench_shape, {}, "this machine"));
  EXPECT_EQ(timing.floor_us, 0);
  EXPECT_NE(verdict.stages.back().details.summary.find("skipped"), std::string::npos);
}

TEST(PhysicalLimit, FlopsCountedFromTheReferencesOperatorsAreNeverALimit) {
  // matmul's flops as a minimum bound a kernel at ten times the compute peak; the same count taken
  // from a reference's operators (an imported model's torch.diag(a) @ b counts a matmul where a
  // kernel needs a scaling) bounds nothing beyond the bytes.
  Task task = BuiltIn("gemm", "matmul");
  const MeasuredPeaks peaks{1e6, 1000, 0};  // bytes are cheap here: compute decides
  const double compute_us = static_cast<double>(task.Flops(task.bench_shape)) / (1000 * 1e3);
  Verdict verdict;
  VerdictRecorder recorder(verdict);
  Timing minimum = Timed(compute_us / 10);
  EXPECT_FALSE(CheckPhysicalLimit(recorder, minimum, task, task.bench_shape, peaks, "this machine"));
  task.flops_are_minimum = false;
  Timing reference = Timed(compute_us / 10);
  EXPECT_TRUE(CheckPhysicalLimit(recorder, reference, task, task.bench_shape, peaks, "this machine"));
  EXPECT_EQ(reference.bound_by, "memory");
}

}  // namespace
}  // namespace ksmith
