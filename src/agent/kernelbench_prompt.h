// What a model is told when it writes KernelBench's format: a Python file defining ModelNew for an
// imported KernelBench problem, judged by ksmith (kernelbench/ and docs/kernelbench.md).
#pragma once

#include <string>
#include <string_view>

#include "agent/prompt.h"

namespace ksmith {

/// The role, what the evaluator does with a ModelNew, the rules it enforces, and the answer
/// format (a short explanation, then one ```python block with the whole file).
std::string BuildKernelBenchSystemPrompt(const PromptContext& context);

/// The problem's own source, the sizes ModelNew is judged and timed at, the input distributions,
/// the tolerance, the baseline and the device; `starting_point` (a ModelNew) when not empty.
std::string BuildKernelBenchTaskPrompt(const PromptContext& context, std::string_view starting_point);

}  // namespace ksmith
