// A task: what to compute, on which shapes, checked against what, compared with what.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "task/expression.h"
#include "task/signature.h"
#include "tensor/compare.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<std::string> shape;  // dim names, row-major
  InputDraw draw;                  // inputs only: how values are drawn (default: the case's distribution)
  /// int32 inputs only: {low, high} expressions over dims, high exclusive ("0", "num_classes").
  std::vector<std::string> integer_range;
};

enum class ParameterRole { kInput, kOutput, kDim };

/// One parameter of the signature, resolved against the declared tensors and dims.
struct ParameterBinding {
  ParameterRole role = ParameterRole::kDim;
  size_t index = 0;  // into inputs, outputs or dims
};

struct BaselineSpec {
  std::filesystem::path source;
  std::vector<std::string> libraries;  // linked as -l<name>
  std::string description;
  /// Folders the worker may also read (absolute): where a baseline's runtime lives outside the
  /// system folders, e.g. the torch of a virtual environment. The candidate can read them too.
  std::vector<std::filesystem::path> readable;
};

/// What the cuda backend needs beyond the CPU task: a GPU reference and GPU-sized shapes.
struct CudaTaskSpec {
  std::filesystem::path reference_source;  // reference.cu
  std::string reference_function;          // e.g. "softmax_reference_cuda"
  std::vector<DimValues> eval_shapes;      // hidden, sized for a GPU
  DimValues bench_shape;                   // timing shape (large enough to fill an H100)
};

/// A dim computed from the others ("oh" = "(h - kh) / stride + 1"): shapes give only the free dims,
/// so that no shape, written or drawn at random, can be inconsistent.
struct DerivedDim {
  std::string name;
  std::string expression;  // over free dims only; integer division rounds down
};

struct Task {
  std::filesystem::path directory;
  std::filesystem::path toml_path;
  std::string name;
  std::string category;
  int level = 1;
  std::string description;
  std::string pytorch;
  Signature signature;
  std::vector<ParameterBinding> bindings;  // one per signature parameter
  std::vector<std::string> dims;           // in signature order, derived ones included
  std::vector<DerivedDim> derived_dims;    // computed from the free dims, in this order
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string flops_expression;
  /// Whether `flops_expression` is work every correct kernel must do (a built-in task's count) or
  /// what the reference's operators do (an imported model's: torch.diag(a) @ b counts a whole
  /// matmul where a kernel needs a scaling), which is reported but never bounds a time.
  bool flops_are_minimum = true;
  std::string bytes_expression;
  std::string accumulation_expression = "1";
  std::vector<Distribution> distributions;
  std::vector<std::string> allowed_libraries;
  std::vector<DimValues> dev_shapes;
  std::vector<DimValues> eval_shapes;
  DimValues bench_shape;
  // False where only the listed shapes are known to be valid (an imported model whose sizes
  // constrain each other): verification then draws no random shapes.
  bool random_shapes = true;
  std::filesystem::path reference_source;
  std::string reference_function;
  std::map<std::string, BaselineSpec> baselines;  // by backend name
  std::map<std::string, std::filesystem::path> seeds;  // by backend: a kernel with @tune knobs, the tuner's starting point
  std::map<DType, Tolerance> tolerances;
  std::optional<CudaTaskSpec> cuda;  // absent: the task has no cuda version

  /// `free_dims` plus the derived dims; an error names a derived dim below 1 (a pooling window
  /// larger than its input, say).
  Result<DimValues> WithDerivedDims(DimValues free_dims) const;
  bool IsDerived(std::string_view dim) const;
  /// How `tensor`'s values are drawn at `shape`: its draw, with its integer range evaluated there.
  /// An error names a range that is empty or wider than kMaxIntegerSpan at that shape.
  Result<InputDraw> DrawAt(const TensorSpec& tensor, const DimValues& shape) const;
  /// Elements of a tensor at `shape`.
  int64_t Elements(const TensorSpec& tensor, const DimValues& shape) const;
  int64_t Flops(const DimValues& shape) const;
  int64_t MinimumBytes(const DimValues& shape) const;
  double Accumulation(const DimValues& shape) const;
  Tolerance ToleranceFor(DType dtype) const;
  /// The reference's declaration: the signature with `double*` outputs.
  std::string ReferenceDeclaration() const;
  /// The candidate's CUDA declaration: the signature plus a trailing `cudaStream_t stream`.
  std::string CudaDeclaration() const;
  /// The CUDA reference's declaration: outputs double*, trailing cudaStream_t stream.
  /// Names `cuda->reference_function`; only meaningful when `cuda` is set.
  std::string CudaReferenceDeclaration() const;
  /// "rows=4, cols=10" in signature order.
  std::string FormatShape(const DimValues& shape) const;
};

}  // namespace ksmith
