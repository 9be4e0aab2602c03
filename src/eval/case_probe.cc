#include "eval/case_probe.h"

#include <algorithm>
#include <cmath>

#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

constexpr uint64_t kRedrawSalt = 0x4ed4a3'0000;

// `values` as a kernel that writes `dtype` would return them, widened to fp32 for the comparison.
std::vector<float> AsKernelOutput(DType dtype, const std::vector<double>& values) {
  std::vector<float> got(values.begin(), values.end());
  if (dtype != DType::kFloat32) {
    std::vector<char> stored(got.size() * DTypeBytes(dtype));
    StoreAs(dtype, got.data(), got.size(), stored.data());
    LoadAsFloat(dtype, stored.data(), got.size(), got.data());
  }
  return got;
}

}  // namespace

OutputProbe ProbeOutput(const Task& task, const PreparedCase& prepared, size_t output, double input_rms) {
  OutputProbe result;
  const DType dtype = task.outputs[output].dtype;
  const auto& expected = prepared.expected[output];
  if (!IsFloatingPoint(dtype) || expected.empty()) return result;
  double sum = 0;
  for (double value : expected) {
    if (!std::isfinite(value)) return result;
    sum += value;
  }
  const double count = static_cast<double>(expected.size());
  result.judged = true;
  result.mean = sum / count;
  double deviations = 0, squares = 0;
  for (double value : expected) {
    deviations += (value - result.mean) * (value - result.mean);
    squares += value * value;
  }
  const auto [low, high] = std::minmax_element(expected.begin(), expected.end());
  result.exactly_constant = *low == *high;
  result.all_zero = result.exactly_constant && *low == 0;
  result.elements = expected.size();
  result.rms = std::sqrt(squares / count);
  result.floor = ComparisonEpsilon(dtype) * input_rms;
  result.zeros = JudgeOutput(task, prepared, output, std::vector<float>(expected.size(), 0.0f).data(), input_rms);
  const std::vector<double> mean_everywhere(expected.size(), result.mean);
  result.mean_everywhere = JudgeOutput(task, prepared, output, AsKernelOutput(dtype, mean_everywhere).data(), input_rms);
  result.elem_bound = result.zeros.elem_bound;
  result.std = std::sqrt(deviations / count);
  return result;
}

InputProbe ProbeInput(const Task& task, KernelEntry reference, const PreparedCase& prepared, const CaseSpec& spec,
                      size_t input, double input_rms) {
  PreparedCase redrawn;
  redrawn.layout = prepared.layout;
  redrawn.inputs = prepared.inputs;
  size_t offset = 0;
  for (const auto& slot : redrawn.layout.tensors) {
    if (slot.output) continue;
    if (task.bindings[slot.parameter].index == input) {
      std::vector<float> values(slot.Elements());
      FillInput(values.data(), values.size(), slot.draw, spec.distribution,
                DeriveSeed(spec.seed, kRedrawSalt + input), slot.parameter);
      StoreAs(slot.dtype, values.data(), values.size(), redrawn.inputs.data() + offset);
    }
    offset += slot.bytes;
  }
  redrawn.expected = RunReference(task, reference, redrawn, InputVariant::kAsGiven);
  InputProbe result;
  for (size_t output = 0; output < task.outputs.size(); ++output) {
    const DType dtype = task.outputs[output].dtype;
    if (!IsFloatingPoint(dtype)) {  // indices: compared exactly, as verdicts do
      result.still_passes = result.still_passes && redrawn.expected[output] == prepared.expected[output];
      continue;
    }
    const Comparison comparison =
        JudgeOutput(task, prepared, output, AsKernelOutput(dtype, redrawn.expected[output]).data(), input_rms);
    result.still_passes = result.still_passes && comparison.passed;
    const double error = comparison.norm_bound > 0 ? comparison.norm_error / comparison.norm_bound : 0;
    if (error >= result.worst_error) {
      result.worst_error = error;
      result.norm_error = comparison.norm_error;
      result.norm_bound = comparison.norm_bound;
    }
  }
  return result;
}

}  // namespace ksmith
