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
  return found != tolerances.end() ? found->second : Tolerance{};
}

std::string Task::ReferenceDeclaration() const {
  return WithDoubleOutputs(*this, reference_function).Declaration();
}

std::string Task::CudaDeclaration() const { return WithStream(signature).Declaration(); }

std::string Task::CudaReferenceDeclaration() const {
  return WithStream(WithDoubleOutputs(*this, cuda ? cuda->reference_function : reference_function))
      .Declaration();
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
