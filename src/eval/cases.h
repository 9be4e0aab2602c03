// Correctness cases: which inputs a candidate sees, what it must return, and how a worker's
// snapshot of the buffers is judged (guards, untouched inputs, outputs against the reference).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary/shared_library.h"
#include "core/result.h"
#include "eval/stage_details.h"
#include "sandbox/layout.h"
#include "task/task.h"
#include "tensor/compare.h"

namespace ksmith {

struct CaseSpec {
  DimValues shape;
  Distribution distribution = Distribution::kNormal;
  uint64_t seed = 0;  // derived from the secret evaluation seed; never shown

  /// "rows=1, cols=7, normal, seed #2" (the seed's ordinal, not its value).
  std::string label;
  uint64_t held_seed = 0;  // of the held inputs (a model's weights): HeldSeed, one per verification
};

/// The seed of a verification's held inputs (a model's weights: InputDraw::held), from its secret
/// seed: every case, timing set and call of the verification draws them alike at a shape.
uint64_t HeldSeed(uint64_t secret_seed);

/// Every eval shape x every distribution x `seeds` seeds (one seed for shapes above
/// `large_elements`), then `random_shapes` shapes drawn from the secret seed (so that not even
/// the task file tells a kernel which shapes it will meet), then the bench shape once, so that
/// timing runs on a verified shape.
std::vector<CaseSpec> PlanCases(const Task& task, uint64_t secret_seed, int seeds,
                                int64_t large_elements, int random_shapes = 2);

/// A KernelBench candidate's deciding cases: the bench shape under every distribution, `seeds`
/// seeds each (one above `large_elements`).
std::vector<CaseSpec> PlanBenchShapeCases(const Task& task, uint64_t secret_seed, int seeds, int64_t large_elements);

/// The hidden shapes as a property of a candidate judged at the bench shape alone: every eval
/// shape under every distribution, one seed each, labelled "(hidden shape)".
std::vector<CaseSpec> PlanGeneralizationCases(const Task& task, uint64_t secret_seed);

/// A shape whose dims are drawn log-uniformly between 1 and the largest value each dim takes in
/// the eval shapes, small enough to check quickly; nullopt if none fits after a few draws.
std::optional<DimValues> RandomShape(const Task& task, uint64_t seed);

struct PreparedCase {
  CaseLayout layout;
  /// The draw the inputs are (PrepareCase's); none where they were found rather than drawn. A
  /// CUDA worker repeats it on the device instead of receiving the inputs.
  std::optional<CaseDraw> draw;
  std::string inputs;                         // input tensors' bytes, in slot order
  std::vector<std::vector<double>> expected;  // per output tensor, from the reference
  /// Per output tensor, the reference on the inputs' absolute values: for a sum of products,
  /// sum |terms|, the scale an honest fp32 sum's rounding error follows when the sum cancels.
  /// Empty for tasks without accumulation and for outputs over 65536 elements.
  std::vector<std::vector<double>> magnitude;
  /// InputRms, when it was computed ahead (by the case feed); CheckSnapshot computes it otherwise.
  std::optional<double> input_rms;
};

/// Where each tensor of `shape` goes; no data.
CaseLayout MakeLayout(const Task& task, const DimValues& shape, size_t guard_bytes);

/// The bytes of a layout's input tensors (PreparedCase::inputs) and the elements of its outputs.
size_t InputBytes(const CaseLayout& layout);
size_t OutputElements(const CaseLayout& layout);

/// Generates the inputs of `spec`. `guard_bytes` pads every tensor on both sides. The inputs are
/// drawn into `reuse_inputs`'s memory (a judged case's: every byte is overwritten).
PreparedCase PrepareCase(const Task& task, const CaseSpec& spec, size_t guard_bytes, std::string reuse_inputs = {});
/// PrepareCase in two steps: the layout and the draw, then (DrawCaseInputs) the inputs, so that
/// a GPU can answer the draw while the host draws the same values.
PreparedCase LayOutCase(const Task& task, const CaseSpec& spec, size_t guard_bytes);
void DrawCaseInputs(PreparedCase& prepared, std::string reuse_inputs = {});

/// The inputs the reference also runs on, to learn how exactly an honest fp32 kernel can meet
/// each output element (PreparedCase::magnitude).
enum class InputVariant {
  kAsGiven,
  kAbsolute,            // every element's sign cleared: sum |terms| where a sum cancels
  kNudgedAlternating,   // fp32 inputs times 1 + d and 1 - d, alternating by index
  kNudgedScattered,     // the same with signs from a hash of the index
};
/// The relative nudge d: two fp32 roundings, the size of what an honest kernel's own rounding
/// does to a quantity like (x - mean(x)).
inline constexpr double kInputNudge = 0x1p-22;

/// `inputs` (a case's input bytes in slot order) as `variant` says.
std::string VariantInputs(const CaseLayout& layout, const std::string& inputs, InputVariant variant);

/// Folds the reference's answer on `variant` into `magnitude` (per output, per element): the
/// answer's size for kAbsolute, and for a nudge |answer - expected| / kInputNudge, the change
/// fp32 rounding of the inputs' size can make. Where the answer hinges on a difference of
/// nearly equal inputs (layernorm of a row of two close values), no fp32 kernel can do better.
/// Returns whether some element grew past twice what it held before.
bool FoldMagnitude(InputVariant variant, const std::vector<std::vector<double>>& expected,
                   const std::vector<std::vector<double>>& answer, std::vector<std::vector<double>>& magnitude);

/// Whether `prepared` gets magnitudes: the task accumulates, and its outputs are few or the
/// reference's work on them (outputs times accumulation) is small.
bool WantsMagnitude(const Task& task, const PreparedCase& prepared);

/// Runs a reference on the given input bytes (a case's, transformed), into `answer`.
using RunOnInputs = std::function<Status(const std::string& inputs, std::vector<std::vector<double>>& answer)>;
/// Fills prepared.magnitude (prepared.expected must be there) through `run`: the absolute
/// values, the alternating nudge, and the scattered nudge only when the alternating one widened
/// some element past twice its absolute-value bound. A reference multilinear in its inputs
/// (sums, products, matmul) never does that, so its cases pay for two extra runs, not three.
Status ComputeMagnitude(PreparedCase& prepared, const RunOnInputs& run);

/// Runs the trusted reference on a copy of the case's inputs (in this process), and when
/// WantsMagnitude, on the variants ComputeMagnitude asks for (PreparedCase::magnitude). The
/// vectors already in `prepared.expected` (a judged case's, CaseBuffers) are reused for the answer.
void ComputeExpected(const Task& task, KernelEntry reference, PreparedCase& prepared);

/// ComputeExpected with the reference reading the inputs where they are, not a copy (the largest
/// cases' copies were a fifth of a cached CPU verdict). False when the reference wrote to them (an
/// imported model's in-place operation, say, as a fingerprint before and after shows): then
/// `prepared.inputs` are no longer the case's and `expected` is not its answer; draw the case
/// again and use ComputeExpected.
bool ComputeExpectedInPlace(const Task& task, KernelEntry reference, PreparedCase& prepared);

/// Runs the trusted reference on a copy of the case's inputs as `variant` says, writing its
/// outputs into `reuse`'s vectors where it has them.
std::vector<std::vector<double>> RunReference(const Task& task, KernelEntry reference,
                                              const PreparedCase& prepared, InputVariant variant,
                                              std::vector<std::vector<double>> reuse = {});

/// RMS over every input element, each read in its own dtype: the scale of the comparison's
/// magnitude floor.
double InputRms(const PreparedCase& prepared);

/// The dims of the case, read back from its layout's scalars.
DimValues CaseShape(const Task& task, const CaseLayout& layout);

/// The comparison a verdict makes of output `output` (`got`: what a kernel wrote, widened to
/// fp32): its dtype's tolerance and comparison epsilon, the case's accumulation length,
/// epsilon x `input_rms` as the magnitude floor, and the case's magnitudes.
Comparison JudgeOutput(const Task& task, const PreparedCase& prepared, size_t output, const float* got,
                       double input_rms);

enum class CaseProblem { kNone, kWrongOutput, kInputModified, kGuardDamaged, kMalformed };

struct CaseCheck {
  CaseProblem problem = CaseProblem::kNone;
  std::string description;
  double worst_norm_error = 0;  // over the case's outputs
  std::string output;           // kWrongOutput: the output tensor's name
  std::optional<Comparison> comparison;  // kWrongOutput of a floating-point output
  std::optional<GuardBreach> guard;      // kGuardDamaged: which zone, and where
};

/// Judges a worker's snapshot (every tensor with its guards, in slot order); `guard_key` is
/// the one GuardedArena::Prepare filled the guards from. With ArenaPart::kGuardsAndOutputs the
/// worker found the inputs as drawn on the device, and their bytes in `snapshot` are not read.
CaseCheck CheckSnapshot(const Task& task, const PreparedCase& prepared, std::string_view snapshot,
                        uint64_t guard_key, ArenaPart part = ArenaPart::kAll);

}  // namespace ksmith
