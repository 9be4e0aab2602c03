// KernelBench-format candidates: a Python file defining ModelNew (torch ops, a compiled extension)
// judged on an imported KernelBench task. ksmith turns it into a shim with the task's signature
// that runs ModelNew inside the sandboxed worker, beside the torch-eager baseline.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "task/task.h"

namespace ksmith {

/// The C++ the worker loads for ModelNew on `task`: its kernelbench.json's candidate shim (CUDA's
/// where `cuda`) with the candidate's Python embedded. Fails, saying why, for a task that was not
/// imported from KernelBench, or a source the generated quoting cannot hold.
Result<std::string> RenderKernelBenchCandidate(const Task& task, std::string_view python_source,
                                               std::string_view candidate_name, bool cuda);

}  // namespace ksmith
