// Which tasks a benchmark runs: a suite is every built-in task ("all"), one level of them ("level1",
// by the tasks' `level` field), one category of any root ("normalization", "kernelbench" for the
// imported KernelBench problems), a comma-separated list of task names, or a folder of task folders.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "task/registry.h"

namespace ksmith {

/// Task names (or, for a folder suite, task folder paths) in a stable order. An unknown suite is
/// a kInvalidArgument error naming the suites and categories there are; a level no task has is
/// one naming the levels there are.
Result<std::vector<std::string>> ResolveSuite(const std::string& suite, const TaskRegistry& registry);

}  // namespace ksmith
