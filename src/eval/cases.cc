#include "eval/cases.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "core/parallel.h"
#include "tensor/compare.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

int64_t LargestTensor(const Task& task, const DimValues& shape) {
  int64_t largest = 0;
  for (const auto& tensor : task.inputs) largest = std::max(largest, task.Elements(tensor, shape));
  for (const auto& tensor : task.outputs) largest = std::max(largest, task.Elements(tensor, shape));
  return largest;
}

constexpr int64_t kRandomShapeMaxElements = int64_t{1} << 20;
constexpr size_t kMagnitudeMaxElements = size_t{1} << 16;
// Past kMagnitudeMaxElements outputs, the variants still run where the reference's work (outputs
// times accumulation) is small: short rows are where an output's sensitivity to its inputs'
// rounding blows up (a two-column layer norm whose variance is near eps), and on 44819 x 2 an
// honest fp32 seed read 0.7% off on 4 of 89638 elements on the H200.
constexpr double kMagnitudeMaxWork = double{1 << 22};
constexpr int64_t kRandomShapeMaxFlops = int64_t{100'000'000};
constexpr int kRandomShapeDraws = 32;
constexpr uint64_t kRandomShapeSalt = 0x5a4e;
constexpr uint64_t kGeneralizationSalt = 0x6e0e'0000;
constexpr uint64_t kHeldSalt = 0x4e1d'0000'0000;

}  // namespace

std::optional<DimValues> RandomShape(const Task& task, uint64_t seed) {
  for (int draw = 0; draw < kRandomShapeDraws; ++draw) {
    DimValues shape;
    for (size_t d = 0; d < task.dims.size(); ++d) {
      if (task.IsDerived(task.dims[d])) continue;
      int64_t largest = 1;
      for (const auto& eval : task.eval_shapes) largest = std::max(largest, eval.at(task.dims[d]));
      const double u = UniformOpen01(seed, draw, d);
      shape[task.dims[d]] = std::clamp<int64_t>(
          static_cast<int64_t>(std::exp(u * std::log(static_cast<double>(largest) + 1.0))), 1, largest);
    }
    auto complete = task.WithDerivedDims(std::move(shape));
    if (!complete.ok()) continue;  // e.g. a pooling window larger than the drawn input
    const bool ranges_valid = std::ranges::all_of(task.inputs, [&](const TensorSpec& input) {
      return task.DrawAt(input, *complete).ok();
    });
    if (!ranges_valid) continue;  // an index range that is empty at the drawn dims
    if (LargestTensor(task, *complete) <= kRandomShapeMaxElements &&
        task.Flops(*complete) <= kRandomShapeMaxFlops) {
      return complete.value();
    }
  }
  return std::nullopt;
}

uint64_t HeldSeed(uint64_t secret_seed) { return DeriveSeed(secret_seed, kHeldSalt); }

std::vector<CaseSpec> PlanCases(const Task& task, uint64_t secret_seed, int seeds,
                                int64_t large_elements, int random_shapes) {
  std::vector<CaseSpec> cases;
  uint64_t ordinal = 0;
  auto add = [&](const DimValues& shape, Distribution distribution, int seed_index) {
    CaseSpec spec;
    spec.shape = shape;
    spec.distribution = distribution;
    spec.seed = DeriveSeed(secret_seed, ordinal++);
    spec.held_seed = HeldSeed(secret_seed);
    spec.label = fmt::format("{}, {}, seed #{}", task.FormatShape(shape),
                             DistributionName(distribution), seed_index + 1);
    cases.push_back(std::move(spec));
  };
  for (const auto& shape : task.eval_shapes) {
    const int shape_seeds = LargestTensor(task, shape) > large_elements ? 1 : seeds;
    for (Distribution distribution : task.distributions) {
      for (int s = 0; s < shape_seeds; ++s) add(shape, distribution, s);
    }
  }
  for (int r = 0; task.random_shapes && r < random_shapes; ++r) {
    const auto shape = RandomShape(task, DeriveSeed(secret_seed, kRandomShapeSalt + r));
    if (!shape) continue;
    add(*shape, task.distributions[static_cast<size_t>(r) % task.distributions.size()], 0);
    cases.back().label += " (random shape)";
  }
  add(task.bench_shape, task.distributions.front(), 0);
  return cases;
}

std::vector<CaseSpec> PlanBenchShapeCases(const Task& task, uint64_t secret_seed, int seeds, int64_t large_elements) {
  std::vector<CaseSpec> cases;
  const int shape_seeds = LargestTensor(task, task.bench_shape) > large_elements ? 1 : seeds;
  uint64_t ordinal = 0;
  for (Distribution distribution : task.distributions) {
    for (int s = 0; s < shape_seeds; ++s) {
      CaseSpec spec;
      spec.shape = task.bench_shape;
      spec.distribution = distribution;
      spec.seed = DeriveSeed(secret_seed, ordinal++);
      spec.held_seed = HeldSeed(secret_seed);
      spec.label = fmt::format("{}, {}, seed #{} (the bench shape)", task.FormatShape(spec.shape),
                               DistributionName(distribution), s + 1);
      cases.push_back(std::move(spec));
    }
  }
  return cases;
}

std::vector<CaseSpec> PlanGeneralizationCases(const Task& task, uint64_t secret_seed) {
  std::vector<CaseSpec> cases;
  uint64_t ordinal = 0;
  for (const auto& shape : task.eval_shapes) {
    for (Distribution distribution : task.distributions) {
      CaseSpec spec;
      spec.shape = shape;
      spec.distribution = distribution;
      spec.seed = DeriveSeed(secret_seed, kGeneralizationSalt + ordinal++);
      spec.held_seed = HeldSeed(secret_seed);
      spec.label = fmt::format("{}, {} (hidden shape)", task.FormatShape(shape), DistributionName(distribution));
      cases.push_back(std::move(spec));
    }
  }
  return cases;
}

CaseLayout MakeLayout(const Task& task, const DimValues& shape, size_t guard_bytes) {
  CaseLayout layout;
  layout.guard_bytes = guard_bytes;
  layout.scalars.assign(task.bindings.size(), 0);
  for (size_t i = 0; i < task.bindings.size(); ++i) {
    const auto& binding = task.bindings[i];
    if (binding.role == ParameterRole::kDim) {
      layout.scalars[i] = shape.at(task.dims[binding.index]);
      continue;
    }
    const bool output = binding.role == ParameterRole::kOutput;
    const TensorSpec& tensor = output ? task.outputs[binding.index] : task.inputs[binding.index];
    const size_t bytes = static_cast<size_t>(task.Elements(tensor, shape)) * DTypeBytes(tensor.dtype);
    InputDraw draw;
    if (!output) {
      // Declared shapes are checked when the task loads, random ones when drawn.
      auto resolved = task.DrawAt(tensor, shape);
      if (!resolved.ok()) throw std::logic_error(resolved.error().message);
      draw = *resolved;
    }
    layout.tensors.push_back({i, bytes, output, tensor.dtype, draw});
  }
  return layout;
}

size_t InputBytes(const CaseLayout& layout) {
  size_t bytes = 0;
  for (const auto& slot : layout.tensors) bytes += slot.output ? 0 : slot.bytes;
  return bytes;
}

size_t OutputElements(const CaseLayout& layout) {
  size_t elements = 0;
  for (const auto& slot : layout.tensors) elements += slot.output ? slot.Elements() : 0;
  return elements;
}

namespace {

// Whether a slot's bytes at `data` can be read and written as floats where they are.
bool FloatsInPlace(const TensorSlot& slot, const void* data) {
  return slot.dtype == DType::kFloat32 && reinterpret_cast<uintptr_t>(data) % alignof(float) == 0;
}

}  // namespace

PreparedCase PrepareCase(const Task& task, const CaseSpec& spec, size_t guard_bytes, std::string reuse_inputs) {
  PreparedCase prepared = LayOutCase(task, spec, guard_bytes);
  DrawCaseInputs(prepared, std::move(reuse_inputs));
  return prepared;
}

PreparedCase LayOutCase(const Task& task, const CaseSpec& spec, size_t guard_bytes) {
  PreparedCase prepared;
  prepared.layout = MakeLayout(task, spec.shape, guard_bytes);
  prepared.layout.held_seed = spec.held_seed;
  prepared.draw = CaseDraw{spec.seed, spec.distribution};
  return prepared;
}

void DrawCaseInputs(PreparedCase& prepared, std::string reuse_inputs) {
  const CaseDraw draw = prepared.draw.value();  // a case found, not drawn, has nothing to draw
  const size_t input_bytes = InputBytes(prepared.layout);
  // The same size again costs nothing: no pass zeroes gigabytes before they are drawn.
  prepared.inputs = std::move(reuse_inputs);
  ResizeFaultedIn(prepared.inputs, input_bytes);
  size_t offset = 0;
  std::vector<float> values;
  for (const auto& slot : prepared.layout.tensors) {
    if (slot.output) continue;
    char* destination = prepared.inputs.data() + offset;
    offset += slot.bytes;
    // An fp32 input is drawn where it goes: at a problem's own sizes a copy through a second
    // buffer costs seconds a case (docs/benchmarks.md, "At the problem's own sizes").
    if (FloatsInPlace(slot, destination)) {
      prepared.layout.FillSlot(slot, reinterpret_cast<float*>(destination), draw.distribution, draw.seed,
                               slot.parameter);
      continue;
    }
    // Drawn in fp32 and rounded to the tensor's dtype: a half-precision kernel and the reference
    // read the same rounded values.
    values.resize(slot.Elements());
    prepared.layout.FillSlot(slot, values.data(), draw.distribution, draw.seed, slot.parameter);
    StoreAs(slot.dtype, values.data(), values.size(), destination);
  }
}

std::string VariantInputs(const CaseLayout& layout, const std::string& inputs, InputVariant variant) {
  std::string result = inputs;
  if (variant == InputVariant::kAsGiven) return result;
  size_t offset = 0;
  uint64_t index = 0;  // over every input element, so that the signs differ between tensors too
  for (const auto& slot : layout.tensors) {
    if (slot.output) continue;
    char* data = result.data() + offset;
    offset += slot.bytes;
    if (!IsFloatingPoint(slot.dtype)) {  // indices and masks keep their values in every variant
      index += static_cast<uint64_t>(slot.Elements());
      continue;
    }
    if (variant == InputVariant::kAbsolute) {
      MakeAbsolute(slot.dtype, data, slot.Elements());
      continue;
    }
    // Only fp32 inputs: a 16-bit input cannot move by d.
    if (slot.dtype != DType::kFloat32) {
      index += static_cast<uint64_t>(slot.Elements());
      continue;
    }
    auto* values = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < slot.Elements(); ++i, ++index) {
      const bool up = variant == InputVariant::kNudgedAlternating ? index % 2 == 0 : (MixCounter(0x4e0d6e, index, 0) & 1) != 0;
      float value;
      std::memcpy(&value, &values[i], sizeof(value));
      value = static_cast<float>(static_cast<double>(value) * (up ? 1 + kInputNudge : 1 - kInputNudge));
      std::memcpy(&values[i], &value, sizeof(value));
    }
  }
  return result;
}

bool FoldMagnitude(InputVariant variant, const std::vector<std::vector<double>>& expected,
                   const std::vector<std::vector<double>>& answer, std::vector<std::vector<double>>& magnitude) {
  if (magnitude.size() < answer.size()) magnitude.resize(answer.size());
  bool widened = false;
  for (size_t output = 0; output < answer.size(); ++output) {
    auto& folded = magnitude[output];
    folded.resize(answer[output].size(), 0.0);
    for (size_t i = 0; i < answer[output].size(); ++i) {
      const double size = variant == InputVariant::kAbsolute
                              ? std::abs(answer[output][i])
                              : std::abs(answer[output][i] - expected.at(output).at(i)) / kInputNudge;
      // NaN (the answer is undefined) adds nothing: the comparison judges such elements itself.
      widened = widened || size > 2 * folded[i];
      if (size > folded[i]) folded[i] = size;
    }
  }
  return widened;
}

Status ComputeMagnitude(PreparedCase& prepared, const RunOnInputs& run) {
  prepared.magnitude.clear();
  std::vector<std::vector<double>> answer;
  for (const InputVariant variant :
       {InputVariant::kAbsolute, InputVariant::kNudgedAlternating, InputVariant::kNudgedScattered}) {
    if (Status ran = run(VariantInputs(prepared.layout, prepared.inputs, variant), answer); !ran.ok()) return ran;
    const bool widened = FoldMagnitude(variant, prepared.expected, answer, prepared.magnitude);
    // Past twice the absolute-value bound nowhere: the answer hinges on no difference of
    // inputs, and a second sign pattern would find nothing the first cancelled.
    if (variant == InputVariant::kNudgedAlternating && !widened) break;
  }
  return {};
}

bool WantsMagnitude(const Task& task, const PreparedCase& prepared) {
  size_t output_elements = 0;
  for (const auto& slot : prepared.layout.tensors) output_elements += slot.output ? slot.Elements() : 0;
  // Small outputs, or little work: on a large output with long rows, rms(ref) already gives a sum
  // that happens to cancel the typical size of the row sums as its scale, and more reference
  // runs would multiply the cost of the largest cases.
  const double accumulation = task.Accumulation(CaseShape(task, prepared.layout));
  if (accumulation <= 1) return false;
  return output_elements <= kMagnitudeMaxElements ||
         static_cast<double>(output_elements) * accumulation <= kMagnitudeMaxWork;
}

namespace {

// Runs `reference` on the input bytes at `inputs` (laid out as `layout` says), its outputs
// written into `reuse`'s vectors where it has them.
std::vector<std::vector<double>> RunReferenceOn(const Task& task, KernelEntry reference, const CaseLayout& layout,
                                                char* inputs, std::vector<std::vector<double>> reuse) {
  std::vector<void*> pointers(task.bindings.size(), nullptr);
  std::vector<std::vector<double>> outputs = std::move(reuse);
  size_t output_index = 0;
  size_t offset = 0;
  for (const auto& slot : layout.tensors) {
    if (slot.output) {
      if (outputs.size() <= output_index) outputs.emplace_back();
      auto& output = outputs[output_index++];
      output.assign(slot.Elements(), 0.0);  // within the capacity a judged case left: no new pages
      pointers[slot.parameter] = output.data();
    } else {
      pointers[slot.parameter] = inputs + offset;
      offset += slot.bytes;
    }
  }
  outputs.resize(output_index);
  reference(pointers.data(), layout.scalars.data());
  return outputs;
}

// The magnitudes of `prepared` (WantsMagnitude), each variant run on a private copy.
void ComputeMagnitudes(const Task& task, KernelEntry reference, PreparedCase& prepared) {
  prepared.magnitude.clear();
  if (!WantsMagnitude(task, prepared)) return;
  const Status computed = ComputeMagnitude(prepared, [&](const std::string& inputs, std::vector<std::vector<double>>& answer) {
    std::string copy = inputs;
    answer = RunReferenceOn(task, reference, prepared.layout, copy.data(), {});
    return Status();
  });
  (void)computed;  // an in-process reference cannot fail
}

}  // namespace

// A copy of the inputs (trusted code still cannot change what a result is compared against),
// transformed as `variant` says.
std::vector<std::vector<double>> RunReference(const Task& task, KernelEntry reference,
                                              const PreparedCase& prepared, InputVariant variant,
                                              std::vector<std::vector<double>> reuse) {
  std::string inputs = VariantInputs(prepared.layout, prepared.inputs, variant);
  return RunReferenceOn(task, reference, prepared.layout, inputs.data(), std::move(reuse));
}

// RMS over every floating-point input element, read in its own dtype. Integer inputs are labels
// and masks, not magnitudes: 4096 class labels would raise the comparison's floor 37-fold.
double InputRms(const PreparedCase& prepared) {
  double square_sum = 0;
  size_t count = 0;
  size_t offset = 0;
  std::vector<float> values;
  for (const auto& slot : prepared.layout.tensors) {
    if (slot.output) continue;
    if (!IsFloatingPoint(slot.dtype)) {
      offset += slot.bytes;
      continue;
    }
    const char* data = prepared.inputs.data() + offset;
    const size_t elements = slot.Elements();
    const float* floats = nullptr;
    if (FloatsInPlace(slot, data)) {
      floats = reinterpret_cast<const float*>(data);
    } else {
      values.resize(elements);
      LoadAsFloat(slot.dtype, data, elements, values.data());
      floats = values.data();
    }
    // In fixed blocks spread over the cores: the same sum on any machine, one block below 4 Mi.
    constexpr size_t kBlock = size_t{1} << 22;
    std::vector<double> block_squares((elements + kBlock - 1) / kBlock, 0.0);
    ParallelFor(block_squares.size(), [&](size_t block) {
      const size_t begin = block * kBlock;
      const size_t size = std::min(elements, begin + kBlock) - begin;
      const double rms = RootMeanSquare(floats + begin, size);
      block_squares[block] = rms * rms * static_cast<double>(size);
    });
    for (const double squares : block_squares) square_sum += squares;
    count += elements;
    offset += slot.bytes;
  }
  return count > 0 ? std::sqrt(square_sum / static_cast<double>(count)) : 0;
}

namespace {

// A 16-bit output widened to fp32, its unwritten (poisoned) elements carried over as the fp32
// poison so that the comparison reports them as unwritten, not as NaNs the kernel produced.
std::vector<float> WidenOutput(const TensorSlot& slot, std::string_view data) {
  std::vector<float> got(slot.Elements());
  LoadAsFloat(slot.dtype, data.data(), got.size(), got.data());
  if (DTypeBytes(slot.dtype) == 2) {
    const auto poison = static_cast<uint16_t>(DTypePoisonPattern(slot.dtype) & 0xffff);
    for (size_t i = 0; i < got.size(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, data.data() + 2 * i, 2);
      if (bits == poison) got[i] = std::bit_cast<float>(kPoisonBits);
    }
  }
  return got;
}

// Index outputs (argmax) must match exactly; empty when they do.
std::string CompareIndices(std::string_view data, const std::vector<double>& expected) {
  size_t wrong = 0;
  size_t unwritten = 0;
  size_t first = expected.size();
  int32_t first_got = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    int32_t got;
    std::memcpy(&got, data.data() + 4 * i, 4);
    if (static_cast<uint32_t>(got) == kPoisonBits) {
      ++unwritten;
    } else if (static_cast<double>(got) == expected[i]) {
      continue;
    }
    if (wrong++ == 0) {
      first = i;
      first_got = got;
    }
  }
  if (wrong == 0) return {};
  return fmt::format("{} of {} indices wrong ({} never written); first at element {}: got {}, expected {}",
                     wrong, expected.size(), unwritten, first, first_got, expected[first]);
}

}  // namespace

DimValues CaseShape(const Task& task, const CaseLayout& layout) {
  DimValues shape;
  for (size_t i = 0; i < task.bindings.size(); ++i) {
    if (task.bindings[i].role == ParameterRole::kDim) {
      shape[task.dims[task.bindings[i].index]] = layout.scalars[i];
    }
  }
  return shape;
}

Comparison JudgeOutput(const Task& task, const PreparedCase& prepared, size_t output, const float* got,
                       double input_rms) {
  const DType dtype = task.outputs[output].dtype;
  const auto& expected = prepared.expected.at(output);
  const double* magnitude = output < prepared.magnitude.size() ? prepared.magnitude[output].data() : nullptr;
  return CompareWithReferenceOnCores(got, expected.data(), expected.size(), task.ToleranceFor(dtype),
                                     ComparisonEpsilon(dtype), task.Accumulation(CaseShape(task, prepared.layout)),
                                     // Rounding to a 16-bit output is relative (the elementwise bound
                                     // covers it); where the exact answer vanishes, an honest kernel
                                     // leaves only its fp32 arithmetic's noise.
                                     ComparisonEpsilon(dtype) * input_rms, magnitude);
}

void ComputeExpected(const Task& task, KernelEntry reference, PreparedCase& prepared) {
  prepared.expected = RunReference(task, reference, prepared, InputVariant::kAsGiven, std::move(prepared.expected));
  ComputeMagnitudes(task, reference, prepared);
}

bool ComputeExpectedInPlace(const Task& task, KernelEntry reference, PreparedCase& prepared) {
  const uint64_t fingerprint = ParallelFingerprint(prepared.inputs.data(), prepared.inputs.size());
  prepared.expected = RunReferenceOn(task, reference, prepared.layout, prepared.inputs.data(),
                                     std::move(prepared.expected));
  if (ParallelFingerprint(prepared.inputs.data(), prepared.inputs.size()) != fingerprint) return false;
  ComputeMagnitudes(task, reference, prepared);
  return true;
}

namespace {

// Where zone `side` of a tensor of `bytes` bytes and `dtype` changed, as GuardBreach counts it.
GuardBreach DescribeBreach(const std::string& name, size_t bytes, DType dtype, size_t guard, GuardSide side,
                           const GuardDamage& damage) {
  GuardBreach breach;
  breach.tensor = name;
  breach.side = GuardSideName(side);
  const size_t nearest = damage.Nearest(side);
  breach.offset = side == GuardSide::kBefore ? -static_cast<int64_t>(guard - nearest)
                                             : static_cast<int64_t>(bytes + nearest);
  const auto element_bytes = static_cast<int64_t>(DTypeBytes(dtype));
  // Rounded down: the byte just before the start lies in element -1.
  breach.element = breach.offset >= 0 ? breach.offset / element_bytes
                                      : -((-breach.offset + element_bytes - 1) / element_bytes);
  breach.changed_bytes = static_cast<int64_t>(damage.changed);
  return breach;
}

std::string BreachText(const GuardBreach& breach, size_t bytes, size_t elements) {
  if (breach.side == "before") {
    return fmt::format("wrote before the start of '{}' (out of bounds): {} bytes of the guard zone before it "
                       "changed, the nearest {} bytes before its start (in {}[{}])",
                       breach.tensor, breach.changed_bytes, -breach.offset, breach.tensor, breach.element);
  }
  return fmt::format("wrote past the end of '{}' (out of bounds): {} bytes of the guard zone after it changed, "
                     "the nearest at byte {} past its end (in {}[{}] of a {}-element tensor)",
                     breach.tensor, breach.changed_bytes, breach.offset - static_cast<int64_t>(bytes), breach.tensor,
                     breach.element, elements);
}

}  // namespace

CaseCheck CheckSnapshot(const Task& task, const PreparedCase& prepared, std::string_view snapshot,
                        uint64_t guard_key, ArenaPart part) {
  CaseCheck check;
  if (snapshot.size() != prepared.layout.SnapshotBytes()) {
    check.problem = CaseProblem::kMalformed;
    check.description = fmt::format("the worker returned {} bytes, expected {}", snapshot.size(),
                                    prepared.layout.SnapshotBytes());
    return check;
  }
  const size_t guard = prepared.layout.guard_bytes;
  const GuardPattern guards(guard_key);
  const double input_rms = prepared.input_rms ? *prepared.input_rms : InputRms(prepared);
  size_t offset = 0;
  size_t input_offset = 0;
  size_t output_index = 0;
  for (size_t slot_index = 0; slot_index < prepared.layout.tensors.size(); ++slot_index) {
    const TensorSlot& slot = prepared.layout.tensors[slot_index];
    const std::string& name = task.signature.parameters[slot.parameter].name;
    const std::string_view data = snapshot.substr(offset + guard, slot.bytes);
    const std::string_view zones[] = {snapshot.substr(offset, guard),
                                      snapshot.substr(offset + guard + slot.bytes, guard)};
    offset += slot.bytes + 2 * guard;
    for (GuardSide side : {GuardSide::kBefore, GuardSide::kAfter}) {
      const GuardDamage damage = guards.Inspect(zones[side == GuardSide::kAfter], slot_index, side);
      if (!damage.any()) continue;
      check.problem = CaseProblem::kGuardDamaged;
      check.guard = DescribeBreach(name, slot.bytes, slot.dtype, guard, side, damage);
      check.description = BreachText(*check.guard, slot.bytes, slot.Elements());
      return check;
    }
    if (!slot.output) {
      const std::string_view sent(prepared.inputs.data() + input_offset, slot.bytes);
      input_offset += slot.bytes;
      if (part == ArenaPart::kGuardsAndOutputs) continue;
      if (const size_t first = ParallelFirstDifference(data.data(), sent.data(), slot.bytes); first < slot.bytes) {
        check.problem = CaseProblem::kInputModified;
        check.description = fmt::format("modified its input '{}' (first change at element {})",
                                         name, first / DTypeBytes(slot.dtype));
        return check;
      }
      continue;
    }
    const size_t index = output_index++;
    const auto& expected = prepared.expected.at(index);
    if (!IsFloatingPoint(slot.dtype)) {
      if (std::string wrong = CompareIndices(data, expected); !wrong.empty()) {
        check.problem = CaseProblem::kWrongOutput;
        check.output = name;
        check.description = fmt::format("output '{}': {}", name, wrong);
        return check;
      }
      continue;
    }
    // fp32 outputs are judged where they lie when aligned; others are widened to fp32 first.
    std::vector<float> widened;
    const float* got = nullptr;
    if (slot.dtype == DType::kFloat32 && reinterpret_cast<uintptr_t>(data.data()) % alignof(float) == 0) {
      got = reinterpret_cast<const float*>(data.data());
    } else {
      widened = WidenOutput(slot, data);
      got = widened.data();
    }
    const Comparison comparison = JudgeOutput(task, prepared, index, got, input_rms);
    check.worst_norm_error = std::max(check.worst_norm_error, comparison.norm_error);
    if (!comparison.passed) {
      check.problem = CaseProblem::kWrongOutput;
      check.output = name;
      check.comparison = comparison;
      check.description = fmt::format("output '{}': {}", name, comparison.Describe());
      return check;
    }
  }
  return check;
}

}  // namespace ksmith
