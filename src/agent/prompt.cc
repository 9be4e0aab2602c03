#include "agent/prompt.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agent/model_format.h"
#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// The code fence's tag, also the one ExtractKernel accepts.
std::string FenceTag(const PromptContext& context) { return TraitsOf(context.backend).fence_language; }

std::string_view WithoutTrailingSpace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && (text.front() == '\n' || text.front() == '\r')) text.remove_prefix(1);
  return text;
}

}  // namespace

std::string DescribeDistribution(std::string_view name) {
  if (name == "normal") return "normal: standard normal values";
  if (name == "uniform") return "uniform: uniform in (-1, 1)";
  if (name == "large") return "large: normal values scaled by 1000 (|x| up to several thousand)";
  if (name == "positive") return "positive: uniform in (0, 1)";
  if (name == "ties") return "ties: small integers from -4 to 4 (many equal values)";
  return std::string(name);
}

DimValues TimedShape(const PromptContext& context) { return TraitsOf(context.backend).prompt.timed_shape(context.task); }

std::string RenderDeviceFacts(const nlohmann::json& facts, std::string_view backend) {
  if (!facts.is_object() || facts.empty()) return "- Not measured: plan for a typical modern machine.\n";
  return TraitsOf(std::string(backend)).prompt.device_facts(facts);
}

std::string BuildSystemPrompt(const PromptContext& context) {
  return ModelFormatOf(context.format).SystemPrompt(context);
}

std::string BuildTaskPrompt(const PromptContext& context, std::string_view starting_point) {
  std::string text = ModelFormatOf(context.format).TaskPrompt(context, starting_point);
  if (!context.knowledge.empty()) text += "\n\n" + context.knowledge;
  return text;
}

std::string BuildNativeSystemPrompt(const PromptContext& context) {
  const BackendPrompt prompt = TraitsOf(context.backend).prompt;
  std::string text = fmt::format(
      "You are an expert performance engineer who writes fast, correct {} kernels.\n"
      "Each task gives you a function to implement, the exact declaration to define and the {} it runs "
      "on. ksmith, an automated evaluator, compiles your answer, verifies it against a double-precision "
      "reference on hidden shapes and inputs, and times it against a baseline. Its verdict comes back as "
      "the next message, and you then improve the kernel. A fast kernel that is wrong on any input is "
      "worth nothing; a correct kernel that is slower than the baseline is a start.\n\n",
      prompt.kernel_kind, prompt.device_noun);
  text += "Rules for the source file (breaking one fails the attempt):\n";
  text += prompt.rules;
  text +=
      "- Correct for every shape: the hidden shapes go from a single element to large sizes, including sizes that "
      "are not multiples of 8, 32 or 128. Do not assume or hard-code sizes, and handle the remainder of every "
      "blocked or vectorized loop.\n"
      "- Write every element of every output on every call. Never write to the inputs, and never read or write "
      "outside the given arrays.\n"
      "- Compute honestly: at least the precision of the tensors' dtype (fp32), with no lower-precision arithmetic "
      "(fp16, bf16, TF32) or approximation whose error exceeds the task's tolerance. Compute from the inputs on "
      "every call: no caching of results between calls, no behaviour that depends on how many times you are called.\n"
      "- No files, network, processes, environment variables, signals, clocks or timers; no exit or abort; no "
      "dynamic loading or raw system calls; no library that implements the operation (BLAS, cuBLAS, cuDNN, CUTLASS, "
      "Thrust and the like) unless the task allows it.\n\n";
  text += fmt::format(
      "How to answer:\n"
      "1. First a short explanation, a few sentences: the approach and why it is fast on this {}; after a "
      "verdict, what you change and why.\n"
      "2. Then exactly one fenced code block, ```{}, holding the complete source file that defines the "
      "function. Do not split the code over several blocks, do not add a main() or tests, and write "
      "nothing after the block.\n"
      "Optionally, declare tunable constants so that a search can try their values: a line "
      "`// @tune BLOCK: 64, 128, 256` followed by `#ifndef BLOCK` / `#define BLOCK 128` / `#endif`.\n",
      prompt.device_noun, FenceTag(context));
  return text;
}

std::string BuildNativeTaskPrompt(const PromptContext& context, std::string_view starting_point) {
  const Task& task = context.task;
  const BackendPrompt prompt = TraitsOf(context.backend).prompt;
  std::string text = fmt::format("# Task: {} ({}, level {}, backend {})\n\n{}\n", task.name, task.category, task.level,
                                 context.backend, Trim(task.description));
  if (!Trim(task.pytorch).empty()) {
    text += fmt::format("\nThe same function in PyTorch:\n```python\n{}\n```\n", Trim(task.pytorch));
  }
  text += fmt::format("\n## Define exactly this function\n```{}\n{};\n```\n", FenceTag(context), prompt.declaration(task));
  text += prompt.declaration_note;

  text += "\n## Tensors (contiguous, row-major)\n";
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) {
      text += fmt::format("- {} ({}): {} [{}]\n", tensor.name, list == &task.inputs ? "input, read-only" : "output",
                          DTypeName(tensor.dtype), fmt::join(tensor.shape, ", "));
    }
  }
  text += fmt::format("Sizes are int64_t parameters: {}.\n", fmt::join(task.dims, ", "));
  std::set<DType> types;
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) types.insert(tensor.dtype);
  }
  if (types.contains(DType::kFloat16) || types.contains(DType::kBFloat16)) {
    text += prompt.half_types;
    text += "Accumulate in fp32: outputs are held to fp32 accumulation plus one rounding to their type.\n";
  }

  text += "\n## Shapes and inputs\n";
  std::vector<std::string> dev_shapes;
  for (const auto& shape : task.dev_shapes) dev_shapes.push_back(task.FormatShape(shape));
  if (!dev_shapes.empty()) text += fmt::format("Examples to reason with: {}.\n", fmt::join(dev_shapes, "; "));
  // The order of magnitude only: the exact timed and verified shapes stay hidden, so a kernel
  // cannot be tuned to (or special-case) them.
  const DimValues timed = prompt.timed_shape(task);
  const bool timed_known = timed.size() == task.dims.size();
  int64_t timed_elements = 0;
  for (const auto* list : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *list) {
      if (timed_known) timed_elements = std::max(timed_elements, task.Elements(tensor, timed));
    }
  }
  text +=
      "Verification uses hidden shapes, from a single element to large sizes, including sizes that are "
      "not multiples of 8, 32 or 128, with several seeds";
  if (timed_elements > 0) {
    text += fmt::format("; the timed shape is large (its biggest tensor holds on the order of 10^{} elements)",
                        static_cast<int>(std::floor(std::log10(static_cast<double>(timed_elements)))));
  }
  text += ".\nInput distributions:\n";
  for (const Distribution distribution : task.distributions) {
    text += "- " + DescribeDistribution(DistributionName(distribution)) + "\n";
  }
  std::set<DType> output_types;
  for (const auto& tensor : task.outputs) output_types.insert(tensor.dtype);
  for (const DType dtype : output_types) {
    if (!IsFloatingPoint(dtype)) {
      text += fmt::format("Outputs of type {} are indices and must match the reference exactly.\n", DTypeName(dtype));
      continue;
    }
    const Tolerance tolerance = task.ToleranceFor(dtype);
    text += fmt::format(
        "Tolerance ({}): against the double-precision reference, a norm-wise relative error "
        "||out - ref|| / ||ref|| within about {:.2g} and each element within {:.2g} x (|ref| + rms(ref)), "
        "both plus {}. Every output element must be written.\n",
        DTypeName(dtype), tolerance.norm, tolerance.elem,
        task.accumulation_expression == "1"
            ? std::string("a small rounding allowance")
            : fmt::format("a rounding allowance that grows with the accumulation length ({})",
                          task.accumulation_expression));
  }
  text += task.allowed_libraries.empty()
              ? std::string("Libraries: none that implements the operation; write the computation yourself.\n")
              : fmt::format("Libraries you may call: {}.\n", fmt::join(task.allowed_libraries, ", "));

  text += "\n## What you are measured against\n";
  const auto baseline = task.baselines.find(context.backend);
  text += fmt::format(
      "Your kernel is timed against the baseline ({}) on the timed shape, with cold caches, both "
      "interleaved; the speedup (baseline time / your time) comes with a 95% interval, and a difference "
      "inside the noise counts as a tie.\n",
      baseline != task.baselines.end() && !baseline->second.description.empty() ? baseline->second.description
                                                                                : "a plain implementation");
  text +=
      fmt::format("Cost model: {} flops and at least {} bytes moved.", task.flops_expression, task.bytes_expression);
  const auto [peak_flops, peak_bytes] = prompt.peak_rates(context.device_facts);
  const double bytes = timed_known ? static_cast<double>(task.MinimumBytes(timed)) : 0.0;
  if (peak_flops > 0 && peak_bytes > 0 && bytes > 0) {
    // Only which side of the balance point: the intensity itself would give the timed size away.
    const double intensity = static_cast<double>(task.Flops(timed)) / bytes;
    const bool memory_bound = intensity < peak_flops / peak_bytes;
    text += fmt::format(
        " At the timed shape it does {} flops per byte than this {}'s balance point, so it is {}-bound: {}",
        memory_bound ? "fewer" : "more", prompt.device_noun, memory_bound ? "memory" : "compute",
        memory_bound ? "the floor is moving those bytes at the measured bandwidth; read and write each element "
                       "once, contiguously and vectorized, with every core busy.\n"
                     : "the floor is the FP32 rate; reuse data from caches or registers (tiling) and keep the "
                       "FMA units busy.\n");
  } else {
    text += "\n";
  }
  text += fmt::format("\n## The {}\n{}", prompt.device_noun, RenderDeviceFacts(context.device_facts, context.backend));

  if (!Trim(starting_point).empty()) {
    text += fmt::format("\n## Starting point\nA correct kernel to improve on:\n```{}\n{}\n```\n", FenceTag(context),
                        WithoutTrailingSpace(starting_point));
  }
  text += fmt::format("\nWrite the fastest correct kernel you can: a short explanation, then one ```{} block.\n",
                      FenceTag(context));
  return text;
}

}  // namespace ksmith
