// A candidate format as a model writes it: what the model is told, and how its candidate is read
// from its answer. The other face of eval/candidate_format.h (how a candidate is judged), which
// format() returns. ksmith's own contract is NativeModelFormat(); KernelBench's lives in
// kernelbench/kernelbench_format.h; formats/format_registry.h registers both. The agent asks the
// format it was given and never tests which one it holds.
#pragma once

#include <string>
#include <string_view>

#include "agent/code_extraction.h"
#include "agent/prompt.h"
#include "core/result.h"
#include "eval/candidate_format.h"
#include "task/task.h"

namespace ksmith {

class ModelFormat {
 public:
  virtual ~ModelFormat() = default;

  /// How candidates written in this format are judged; its name is the format's name.
  virtual const CandidateFormat& format() const = 0;
  /// The system prompt: the role, the rules the evaluator enforces, and the answer's form.
  virtual std::string SystemPrompt(const PromptContext& context) const = 0;
  /// The first user message; `starting_point` (a kernel to start from) is shown when not empty.
  virtual std::string TaskPrompt(const PromptContext& context, std::string_view starting_point) const = 0;
  /// The candidate in a model's answer for `backend`; kParse, saying what the answer held instead.
  virtual Result<ExtractedKernel> Extract(std::string_view answer, const Task& task, const std::string& backend) const = 0;
  /// Whether the task's seed kernels (written in ksmith's contract, with `@tune` knobs) are this
  /// format's starting point, and so whether the knob tuner can search them.
  virtual bool UsesTaskSeeds() const = 0;
  /// (optional) An explained error where `task` cannot be optimized in this format (KernelBench's
  /// needs a task imported from KernelBench). Default: every task can.
  virtual Status CheckTask(const Task& task) const {
    (void)task;
    return {};
  }
};

/// ksmith's own contract: a C++ or CUDA source that defines the task's function.
const ModelFormat& NativeModelFormat();

/// `format`, or the native format where it is null.
const ModelFormat& ModelFormatOf(const ModelFormat* format);

}  // namespace ksmith
