// `ksmith tasks check`: can a task tell a right kernel from a wrong one? Checks in the style of
// robust-kbench, run on the task's own CPU reference, for tasks a wrong kernel could pass:
//
//  - near_constant_output: on every case an output's standard deviation is at most the
//    comparison's elementwise tolerance times its rms, so a constant comes within tolerance (for
//    a 1-element output, a loss, its value across the cases).
//  - trivial_output_passes: the all-zeros output, or the output's mean in every element, passes
//    the verdict's comparison on every case of some shape, or on most cases of the task.
//  - input_ignored: redrawing one input (and nothing else) leaves outputs that still pass
//    against the original expected outputs on every case: the task barely depends on it.
//  - output_too_small: an output's rms is below the magnitude floor of the comparison (rounding
//    noise of the inputs) on every case of some shape, or on most cases: the floor then sets the
//    comparison's scale, and the tolerance is far looser than the task intends.
//  - baseline_wrong: the task's CPU baseline, judged as a verdict judges a candidate, fails a
//    case. A speedup is only honest against a baseline that computes the task.
//
// The shape-level checks leave out cases where the trivial answer is the right one: an exact
// output of all zeros (log_softmax over one column) for zeros and the floor, one value repeated
// (a 1-element output, softmax over one column, the max of a row of ties) for the mean. Such
// shapes are deliberate edge cases, not loopholes; a task whose every case is such a constant is
// still flagged near_constant_output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cpu/compiler.h"
#include "binary/shared_library.h"
#include "core/result.h"
#include "task/task.h"

namespace ksmith {

inline constexpr const char* kNearConstantOutput = "near_constant_output";
inline constexpr const char* kTrivialOutputPasses = "trivial_output_passes";
inline constexpr const char* kInputIgnored = "input_ignored";
inline constexpr const char* kOutputTooSmall = "output_too_small";
inline constexpr const char* kBaselineWrong = "baseline_wrong";

struct TaskFinding {
  std::string check;         // one of the k... names above
  std::string tensor;        // the output concerned, or the input for input_ignored
  std::string shape;         // "rows=4, cols=10", or "every shape" for task-wide findings
  std::string distribution;  // the distributions on which it held, comma-separated
  std::string detail;        // the numbers

  bool about_input() const { return check == kInputIgnored; }
  nlohmann::json ToJson() const;
};

struct TaskCheckOptions {
  int seeds = 2;  // per shape and distribution
  /// Eval shapes with a tensor larger than this, or costing more flops, are skipped (dev shapes
  /// never are): the small shapes reach every code path of a reference, and the whole suite
  /// must be checked in CI within a few seconds a task (the double references are naive loops).
  int64_t max_tensor_elements = int64_t{1} << 20;
  int64_t max_flops = 50'000'000;
};

struct TaskCheckReport {
  std::string task;
  int shapes = 0;
  int cases = 0;
  std::vector<TaskFinding> findings;
  /// "agreed", "skipped: <why>", "disagreed: <where>" or "failed: <why>" (the GPU reference did
  /// not build or run); set by whoever runs the GPU cross-check.
  std::string gpu_crosscheck = "skipped: not run";
  std::string error;  // the checks could not run at all (the CPU reference does not build)

  bool ok() const;
  /// {name, ok, shapes, cases, findings: [{check, output|input, shape, distribution, detail}],
  /// gpu_crosscheck}, plus error when set.
  nlohmann::json ToJson() const;
};

/// A task's own CPU kernel (reference or baseline), built and loaded; the entry is valid while
/// `library` lives.
struct LoadedKernel {
  std::unique_ptr<SharedLibrary> library;
  KernelEntry entry = nullptr;
  KernelFinish finish = nullptr;  // a baseline's kKernelFinishSymbol, where it has one
};

/// Builds reference.cc with `compiler` (cached by content) and loads it. A reference that does
/// not compile is kInvalidArgument with the compiler's log: the task is broken.
Result<LoadedKernel> LoadCpuReference(const Task& task, const CpuCompiler& compiler);
/// The same for the task's [baseline.cpu], linked with its libraries.
Result<LoadedKernel> LoadCpuBaseline(const Task& task, const CpuCompiler& compiler);

/// The shapes checked: the dev shapes, then every CPU and [cuda] eval shape within the options'
/// limits, each shape once.
std::vector<DimValues> CheckedShapes(const Task& task, const TaskCheckOptions& options);

/// Runs the four checks on every checked shape x distribution x seed with `reference`.
/// Deterministic: the seeds are fixed, so a finding can be reproduced.
TaskCheckReport CheckTaskReference(const Task& task, KernelEntry reference, const TaskCheckOptions& options);

/// Runs `baseline` in this process on every checked shape x distribution (one seed) and judges
/// it as a verdict judges a candidate (outputs, untouched inputs): one baseline_wrong finding per
/// output or input that went wrong, naming the first case.
std::vector<TaskFinding> CheckTaskBaseline(const Task& task, KernelEntry reference, KernelEntry baseline,
                                           const TaskCheckOptions& options, KernelFinish finish = nullptr);

}  // namespace ksmith
