// What a model is told: the task, the contract it must keep, the device it targets, and, on later
// turns, what the last verdicts said. Pure text rendering; the conversation's budget is elsewhere.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "task/task.h"

namespace ksmith {

class ModelFormat;  // agent/model_format.h

struct PromptContext {
  const Task& task;
  std::string backend;                // "cpu" or "cuda"
  nlohmann::json device_facts;        // MachineFacts::ToJson() or GpuFacts::ToJson(); may be null
  /// How the answer is written (agent/model_format.h): null for ksmith's function contract.
  const ModelFormat* format = nullptr;
  /// Notes from the knowledge base (knowledge/retrieval.h), shown after the task; may be empty.
  std::string knowledge;
};

/// The system prompt of the context's format (ModelFormat::SystemPrompt).
std::string BuildSystemPrompt(const PromptContext& context);

/// The first user message of the context's format (ModelFormat::TaskPrompt).
std::string BuildTaskPrompt(const PromptContext& context, std::string_view starting_point);

/// ksmith's contract's system prompt: the role, the candidate contract's rules for the backend,
/// and the answer format (one fenced block that defines the function, a short explanation
/// before it).
std::string BuildNativeSystemPrompt(const PromptContext& context);

/// ksmith's contract's first user message: description, the PyTorch snippet when the task has
/// one, the exact declaration to define, tensors with dtypes and shapes, dev shapes only (never
/// eval shapes), tolerance, the baseline it must beat, and the device's facts. `starting_point`
/// (a seed kernel or the best so far) is shown when not empty.
std::string BuildNativeTaskPrompt(const PromptContext& context, std::string_view starting_point);

/// The device's facts as a few lines a model can plan with (cores and caches, or SMs, shared
/// memory and registers, and the measured peaks). A null or empty `facts` says nothing was
/// measured; unknown fields are skipped.
std::string RenderDeviceFacts(const nlohmann::json& facts, std::string_view backend);

/// The shape a candidate is timed at on the context's backend (the task's GPU bench shape on CUDA).
DimValues TimedShape(const PromptContext& context);

/// What an input distribution of the task ("normal", "large", "ties"...) draws, in words.
/// Unknown names come back as they are.
std::string DescribeDistribution(std::string_view name);

}  // namespace ksmith
