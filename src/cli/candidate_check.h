// What `eval` and `build` both check of a candidate file before anything is built: whether it can
// be judged for the task on the backend at all.
#pragma once

#include <string>

#include "task/task.h"

namespace ksmith {

/// Why the candidate at `path` cannot be judged for `task` on `backend` at all, with the fix; empty
/// when it can. A usage error, found before anything is built, as `optimize` finds it: a
/// KernelBench ModelNew for a task not imported from KernelBench, a GPU backend's source on a
/// backend that is not it (g++ would only say that cuda_runtime.h is missing).
std::string CandidateMismatch(const std::string& path, const std::string& backend, const Task& task);

}  // namespace ksmith
