// KernelBench's candidate format: a Python file that defines ModelNew for a problem imported from
// KernelBench (docs/kernelbench.md). Judged through eval/candidate_format.h: no C++ to audit; a
// build sandbox builds its extensions and kernels, and a shim that ksmith generates loads them into
// the worker; decided at the task's bench shape (the problem's own sizes, as far as they fit), with
// the hidden shapes a property (VerdictExtensions::generalization); torch.compile of the problem's Model as a
// second baseline where asked for (`--compiled-baseline`, on the GPU). Written by a model through
// agent/model_format.h, with the prompts of agent/kernelbench_prompt.h.
#pragma once

#include "agent/model_format.h"
#include "eval/candidate_format.h"

namespace ksmith {

/// How a KernelBench-format candidate is judged.
const CandidateFormat& KernelBenchFormat();

/// How a model writes one: ModelNew in one ```python block.
const ModelFormat& KernelBenchModelFormat();

}  // namespace ksmith
