#include "task/task.h"

#include <stdexcept>

namespace ksmith {
namespace {

// Expressions are validated when the task loads, so a failure here is a bug.
int64_t MustEvaluate(const std::string& expression, const DimValues& shape) {
  auto value = EvaluateExpression(expression, shape);
  if (!value.ok()) throw std::logic_error(value.error().message);
  return *value;
}

Signature WithDoubleOutputs(const Task& task, const std::string& function) {
  Signature reference = task.signature;
  reference.function = function;
  for (size_t i = 0; i < task.bindings.size(); ++i) {
    if (task.bindings[i].role == ParameterRole::kOutput) reference.parameters[i].base_type = "double";
  }
  return reference;
}

// The task's signature spells tensors with their CPU types (_Float16, uint16_t for bf16); a
// CUDA kernel sees __half and __nv_bfloat16.
Signature WithCudaTypes(const Task& task, Signature signature) {
  for (size_t i = 0; i < task.bindings.size(); ++i) {
    const auto& binding = task.bindings[i];
    if (binding.role == ParameterRole::kDim) continue;
    const auto& tensor = binding.role == ParameterRole::kInput ? task.inputs[binding.index] : task.outputs[binding.index];
    signature.parameters[i].base_type = DTypeCudaType(tensor.dtype);
  }
  return signature;
}

Signature WithStream(Signature signature) {
  signature.parameters.push_back(SignatureParameter{"stream", "cudaStream_t", false, false});
  return signature;
}

}  // namespace

Result<DimValues> Task::WithDerivedDims(DimValues free_dims) const {
  DimValues shape = free_dims;
  for (const auto& derived : derived_dims) {
    auto value = EvaluateExpression(derived.expression, free_dims);
    if (!value.ok()) return value.error();
    if (*value < 1) {
      return MakeError(ErrorKind::kInvalidArgument, "derived dim {} = {} is {} at {}", derived.name,
                       derived.expression, *value, FormatShape(free_dims));
    }
    shape[derived.name] = *value;
  }
  return shape;
}

bool Task::IsDerived(std::string_view dim) const {
  for (const auto& derived : derived_dims) {
    if (derived.name == dim) return true;
  }
  return false;
}

Result<InputDraw> Task::DrawAt(const TensorSpec& tensor, const DimValues& shape) const {
  InputDraw draw = tensor.draw;
  if (tensor.integer_range.size() != 2) return draw;
  auto low = EvaluateExpression(tensor.integer_range[0], shape);
  if (!low.ok()) return low.error();
  auto high = EvaluateExpression(tensor.integer_range[1], shape);
  if (!high.ok()) return high.error();
  if (*high <= *low || *high - *low > kMaxIntegerSpan) {
    return MakeError(ErrorKind::kInvalidArgument, "input {}: range [{}, {}) is {} at {} (it must hold 1 to 2^24 values)",
                     tensor.name, tensor.integer_range[0], tensor.integer_range[1],
                     *high <= *low ? "empty" : "too wide", FormatShape(shape));
  }
  draw.integers = IntegerRange{*low, *high};
  return draw;
}

int64_t Task::Elements(const TensorSpec& tensor, const DimValues& shape) const {
  int64_t count = 1;
  for (const auto& dim : tensor.shape) count *= shape.at(dim);
  return count;
}

int64_t Task::Flops(const DimValues& shape) const { return MustEvaluate(flops_expression, shape); }

int64_t Task::MinimumBytes(const DimValues& shape) const {
  return MustEvaluate(bytes_expression, shape);
}

double Task::Accumulation(const DimValues& shape) const {
  return static_cast<double>(MustEvaluate(accumulation_expression, shape));
}

Tolerance Task::ToleranceFor(DType dtype) const {
  const auto found = tolerances.find(dtype);
  if (found != tolerances.end()) return found->second;
  if (DTypeBytes(dtype) == 2) {
    // One rounding of the result to the 16-bit type (half an ulp, doubled for margin) on top of
    // the fp32 accumulation bounds (ComparisonEpsilon): what PyTorch's half kernels deliver.
    const double epsilon = DTypeEpsilon(dtype);
    return Tolerance{epsilon, 2 * epsilon};
  }
  return Tolerance{};
}

std::string Task::ReferenceDeclaration() const {
  return WithDoubleOutputs(*this, reference_function).Declaration();
}

std::string Task::CudaDeclaration() const { return WithStream(WithCudaTypes(*this, signature)).Declaration(); }

std::string Task::CudaReferenceDeclaration() const {
  Signature reference = WithCudaTypes(*this, WithDoubleOutputs(*this, cuda ? cuda->reference_function : reference_function));
  for (size_t i = 0; i < bindings.size(); ++i) {
    if (bindings[i].role == ParameterRole::kOutput) reference.parameters[i].base_type = "double";
  }
  return WithStream(std::move(reference)).Declaration();
}

std::string Task::FormatShape(const DimValues& shape) const {
  std::string text;
  for (const auto& dim : dims) {
    const auto value = shape.find(dim);
    if (value == shape.end()) continue;  // a derived dim not yet computed
    if (!text.empty()) text += ", ";
    text += dim + "=" + std::to_string(value->second);
  }
  return text;
}

}  // namespace ksmith
