#include "agent/kernelbench_prompt.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// ModelNew runs in PyTorch on CUDA (else on the CPU).
bool IsGpu(const PromptContext& context) { return TraitsOf(context.backend).torch_device == "cuda"; }

// A `.cu` that includes torch's headers spends about a minute in nvcc parsing them; one with CUDA's
// headers alone builds in about a second, and a pybind11-only binding in a few (docs/benchmarks.md,
// "Builds in seconds"). The verdict comes back that much sooner, so the prompt asks for this form.
constexpr const char* kFastBuildForm =
    "- Build fast (seconds, not a minute): keep torch's headers out of CUDA code. Put kernels and `extern \"C\"` "
    "launchers taking raw pointers, sizes and a `cudaStream_t` (as `std::uintptr_t`) in `cuda_sources` with CUDA "
    "and standard headers only; bind them in `cpp_sources` with `#include <pybind11/pybind11.h>` alone; call "
    "`load_inline(..., functions=[...], no_implicit_headers=True, with_pytorch_error_handling=False)`; in forward "
    "make outputs with torch (`torch.empty_like`), `.contiguous()` the inputs, and pass `t.data_ptr()` and "
    "`torch.cuda.current_stream().cuda_stream`. For example:\n"
    "  cuda_sources: `#include <cuda_runtime.h>` `#include <cstdint>` ... `extern \"C\" void relu_launch(std::uintptr_t "
    "x, std::uintptr_t y, long long n, std::uintptr_t stream) { relu_kernel<<<blocks, 256, 0, "
    "(cudaStream_t)stream>>>((const float*)x, (float*)y, n); }`\n"
    "  cpp_sources: `#include <pybind11/pybind11.h>` `#include <cstdint>` `extern \"C\" void relu_launch(std::uintptr_t, "
    "std::uintptr_t, long long, std::uintptr_t);` `void relu(std::uintptr_t x, std::uintptr_t y, long long n, "
    "std::uintptr_t s) { relu_launch(x, y, n, s); }`\n"
    "  forward: `y = torch.empty_like(x); module.relu(x.data_ptr(), y.data_ptr(), x.numel(), "
    "torch.cuda.current_stream().cuda_stream); return y`\n";

}  // namespace

std::string BuildKernelBenchSystemPrompt(const PromptContext& context) {
  const bool gpu = IsGpu(context);
  std::string text = fmt::format(
      "You are an expert performance engineer who writes fast, correct {} kernels for PyTorch models.\n"
      "Each task is a KernelBench problem: a PyTorch `Model` with `get_inputs()` and `get_init_inputs()`. You "
      "write `ModelNew`, a drop-in replacement that computes the same outputs faster with custom kernels. "
      "ksmith, an automated evaluator, builds your file, gives ModelNew the same weights as Model, checks its "
      "outputs against a double-precision reference on fresh inputs, and times it against Model in PyTorch "
      "eager. Its verdict comes back as the next message, and you then improve the file. A fast ModelNew "
      "that is wrong on any input is worth nothing.\n\n",
      gpu ? "CUDA" : "CPU");
  text += "Rules (breaking one fails the attempt):\n";
  text += fmt::format(
      "- One Python file that defines `class ModelNew(torch.nn.Module)`, built as `ModelNew(*get_init_inputs())` "
      "and called with the tensors of `get_inputs()`, returning what Model returns.\n"
      "- Custom kernels: {}. Compile them when the file is imported (at module level), not inside `forward`: "
      "the file is built once in a sandbox that may run the compiler, and verified in one that runs no programs.\n"
      "- Keep Model's parameters: the same names and shapes (for example `linear.weight`), or the same order; "
      "ksmith sets their values after the constructor (not the initial ones) and keeps them the same in every "
      "call at a size, so derive from them in `forward` (once, if you like), never in `__init__`.\n",
      gpu ? "CUDA C++ through `torch.utils.cpp_extension.load_inline`, or Triton (`@triton.jit`)"
          : "C++ through `torch.utils.cpp_extension.load_inline`");
  if (gpu) {
    text += kFastBuildForm;
    text += "- All work on the current CUDA stream (`torch.cuda.current_stream()`, "
            "`at::cuda::getCurrentCUDAStream()` in C++) or, as KernelBench runs it, on the default stream (a launch "
            "with no stream argument); finished when those are: no other streams (no `cudaStreamPerThread`, no "
            "streams of your own), no work left running after forward returns.\n";
  }
  text +=
      "- Return new tensors (not views of the inputs), plain `torch.Tensor`s, in the inputs' precision (float32): "
      "no fp16, bf16 or TF32 arithmetic whose error exceeds the tolerance.\n"
      "- Compute from the inputs on every call: no caching of results, no behaviour that depends on how many "
      "times you are called; never write to the inputs.\n"
      "- Leave the process as you found it: no changes to torch's functions, flags, threads or default dtype, "
      "no environment variables, threads, files, network or processes. Falling back to PyTorch ops is allowed "
      "but counted: a ModelNew that runs no kernel of its own is labelled \"no custom kernel\".\n\n";
  text +=
      "How to answer:\n"
      "1. First a short explanation, a few sentences: the approach and why it is fast; after a verdict, what "
      "you change and why.\n"
      "2. Then exactly one fenced code block, ```python, holding the complete file (imports, kernel sources, "
      "ModelNew). Do not define Model, get_inputs or get_init_inputs, and write nothing after the block.\n";
  return text;
}

std::string BuildKernelBenchTaskPrompt(const PromptContext& context, std::string_view starting_point) {
  const Task& task = context.task;
  const bool gpu = IsGpu(context);
  std::string text = fmt::format("# Task: {} (KernelBench level {}, backend {})\n\n{}\n", task.name, task.level,
                                 context.backend, Trim(task.description));
  text += fmt::format("\n## The problem\n```python\n{}\n```\n", Trim(task.pytorch));
  text += "\n## Sizes and inputs\n";
  const DimValues timed = TimedShape(context);
  if (!timed.empty()) {
    text += fmt::format(
        "ModelNew is judged and timed at {} (the problem's module-level sizes, halved together where they do "
        "not fit the evaluator). Whether it also works at other sizes is reported, not required.\n",
        task.FormatShape(timed));
  }
  text += "Inputs are drawn fresh for every check from:\n";
  for (const Distribution distribution : task.distributions) {
    text += "- " + DescribeDistribution(DistributionName(distribution)) + "\n";
  }
  for (const auto& tensor : task.outputs) {
    if (!IsFloatingPoint(tensor.dtype)) {
      text += fmt::format("Output {} holds indices and must match the reference exactly.\n", tensor.name);
      continue;
    }
    const Tolerance tolerance = task.ToleranceFor(tensor.dtype);
    text += fmt::format("Tolerance for {}: a norm-wise relative error against the double-precision reference within "
                        "about {:.2g}, each element within {:.2g} x (|ref| + rms(ref)), plus a rounding allowance.\n",
                        tensor.name, tolerance.norm, tolerance.elem);
  }
  const auto baseline = task.baselines.find(context.backend);
  text += fmt::format(
      "\n## What you are measured against\n{}, timed beside ModelNew with cold caches, interleaved; the speedup "
      "(Model's time / ModelNew's) comes with a 95% interval, and a difference inside the noise is a tie.\n",
      baseline != task.baselines.end() && !baseline->second.description.empty() ? baseline->second.description
                                                                                : "Model in PyTorch eager");
  text += fmt::format("\n## The {}\n{}", gpu ? "GPU" : "machine",
                      RenderDeviceFacts(context.device_facts, context.backend));
  if (!Trim(starting_point).empty()) {
    text += fmt::format("\n## Starting point\nA correct ModelNew to improve on:\n```python\n{}\n```\n",
                        Trim(starting_point));
  }
  text += "\nWrite the fastest correct ModelNew you can: a short explanation, then one ```python block.\n";
  return text;
}

}  // namespace ksmith
