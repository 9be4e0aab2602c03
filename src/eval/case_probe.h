// One case as `ksmith tasks check` (eval/task_check.h) sees it: the reference's output measured,
// trivial outputs and the outputs of redrawn inputs judged exactly as a verdict judges a kernel.
#pragma once

#include <cstddef>
#include <vector>

#include "binary/shared_library.h"
#include "eval/cases.h"
#include "task/task.h"
#include "tensor/compare.h"

namespace ksmith {

/// What one case showed about one of its outputs.
struct OutputProbe {
  bool judged = false;            // floating point, with a finite reference
  bool exactly_constant = false;  // every element the same value: a deliberate edge case
  bool all_zero = false;          // every element exactly 0 (log_softmax over one column)
  size_t elements = 0;
  double std = 0;                 // of the exact output, over its elements
  double rms = 0;                 // unfloored
  double elem_bound = 0;          // the comparison's elementwise relative tolerance
  double floor = 0;               // the comparison's magnitude floor: eps x rms(inputs)
  double mean = 0;                // of the exact output
  Comparison zeros;               // the all-zeros output against the reference
  Comparison mean_everywhere;     // the mean in every element against the reference
};

/// What redrawing one input of a case changed.
struct InputProbe {
  bool still_passes = true;  // every output still passes against the original expected output
  double worst_error = 0;    // largest norm error over the outputs, relative to its bound
  double norm_error = 0;
  double norm_bound = 0;
};

/// Measures output `output` of `prepared` (whose expected values are computed) and judges the
/// all-zeros output and the mean in every element against it. Integer outputs are not judged.
OutputProbe ProbeOutput(const Task& task, const PreparedCase& prepared, size_t output, double input_rms);

/// Redraws input `input` alone (seed derived from `spec.seed`, same distribution), reruns
/// `reference` and judges every new output against the original expected one.
InputProbe ProbeInput(const Task& task, KernelEntry reference, const PreparedCase& prepared, const CaseSpec& spec,
                      size_t input, double input_rms);

}  // namespace ksmith
