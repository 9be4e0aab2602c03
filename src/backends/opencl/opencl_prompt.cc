#include "backends/opencl/opencl_prompt.h"

#include <regex>

#include <fmt/format.h>

#include "backends/opencl/opencl_form.h"
#include "eval/prompt_text.h"

namespace ksmith {
namespace {

// The OpenCL device's facts (OpenclBackend::DeviceFacts: the device, and "host", this machine's).
std::string DeviceFactsText(const nlohmann::json& facts) {
  std::string text;
  const bool gpu = FactText(facts, "type") == "gpu";
  text += fmt::format("- OpenCL device: {} ({}, {}), a {}", FactText(facts, "name"), FactText(facts, "platform"),
                      FactText(facts, "version"), gpu ? "GPU" : "CPU: work-items run on its cores");
  if (const double units = FactNumber(facts, "compute_units"); units > 0) text += fmt::format(", {:.0f} compute units", units);
  if (const double mhz = FactNumber(facts, "clock_mhz"); mhz > 0) text += fmt::format(" at up to {:.0f} MHz", mhz);
  text += "\n";
  if (const double group = FactNumber(facts, "max_work_group_size"); group > 0) {
    text += fmt::format("- At most {:.0f} work-items per work-group", group);
    if (const double local = FactNumber(facts, "local_memory_bytes"); local > 0) {
      text += fmt::format("; {} of local memory per work-group", FormatBytes(static_cast<uint64_t>(local)));
    }
    text += "\n";
  }
  if (const double memory = FactNumber(facts, "global_memory_bytes"); memory > 0) {
    text += "- Global memory: " + FormatBytes(static_cast<uint64_t>(memory)) + "\n";
  }
  const nlohmann::json host = facts.is_object() && facts.contains("host") ? facts["host"] : nlohmann::json();
  const double bandwidth = FactNumber(host, "memory_bandwidth_gbs");
  const double gflops = FactNumber(host, "fp32_gflops");
  if (!gpu && bandwidth > 0 && gflops > 0) {
    text += fmt::format("- Measured peaks of this CPU (all cores): memory bandwidth {} GB/s, FP32 {} GFLOP/s\n",
                        Rate(bandwidth), Rate(gflops));
  }
  return text;
}

// A whole OpenCL candidate: `// @launch` lines, and a `__kernel` definition of every kernel they name.
bool IsOpenclCandidate(std::string_view code) {
  auto launches = ParseLaunches(code);
  if (!launches.ok()) return false;
  const std::string text(code);
  for (const auto& launch : *launches) {
    const std::regex definition("(__kernel|\\bkernel)\\s+void\\s+" + launch.kernel + "\\s*\\(");
    if (!std::regex_search(text, definition)) return false;
  }
  return true;
}

}  // namespace

BackendPrompt OpenclPrompt() {
  BackendPrompt prompt;
  prompt.kernel_kind = "OpenCL C";
  prompt.device_noun = "device";
  prompt.rules =
      "- One OpenCL C file (OpenCL C 1.2) holding the `__kernel` functions to launch, and any helper functions, "
      "macros and constants they use; no #include.\n"
      "- Every launched kernel takes exactly the task's arguments, in order, as the declaration below shows: "
      "pointers as `__global` buffers (`const` for inputs), sizes (int64_t) as `long`. Name the kernels as you like.\n"
      "- Say what runs, in order, with one line per launch: `// @launch <kernel> global=(<size>[, <size>[, <size>]]) "
      "local=(<size>[, ...])`. Each size is an integer expression (+ - * / and parentheses) over the integer "
      "parameters and the file's integer `#define`s. A global size is rounded up to a multiple of its local size, so "
      "check bounds in the kernel. Launches run in order on one queue: a later one sees what an earlier one wrote. "
      "There is no scratch buffer: keep intermediate values in local memory, or in an output a later launch "
      "overwrites.\n"
      "- The evaluator owns every host call (buffers, arguments, launches, copies): no host code, no printf, no "
      "inline assembly.\n"
      "An OpenCL file has this shape:\n"
      "```opencl\n"
      "// @launch scale global=(n) local=(WG)\n"
      "#define WG 256\n"
      "__kernel void scale(__global const float* x, __global float* y, long n) {\n"
      "  const long i = get_global_id(0);\n"
      "  if (i < n) y[i] = 2.0f * x[i];\n"
      "}\n"
      "```\n";
  prompt.declaration_note =
      "Every kernel you launch takes these arguments in this order (its name is yours), and the file says how each "
      "is launched with a `// @launch` line.\n";
  prompt.half_types = "fp16 is OpenCL C's `half`. ";
  prompt.parallel_units = "compute units";
  prompt.tile_memory = "local-memory";
  prompt.declaration = [](const Task& task) { return KernelDeclaration(task, task.signature.function); };
  prompt.device_facts = DeviceFactsText;
  prompt.peak_rates = [](const nlohmann::json& facts) {
    // Only a CPU device has measured peaks (this machine's); a GPU's are not measured through OpenCL.
    if (FactText(facts, "type") == "gpu" || !facts.is_object() || !facts.contains("host")) return std::pair{0.0, 0.0};
    return std::pair{FactNumber(facts["host"], "fp32_gflops") * 1e9, FactNumber(facts["host"], "memory_bandwidth_gbs") * 1e9};
  };
  prompt.timed_shape = [](const Task& task) { return task.bench_shape; };
  prompt.is_candidate = IsOpenclCandidate;
  prompt.candidate_description = "OpenCL C with `// @launch` lines and the `__kernel` functions they name";
  return prompt;
}

}  // namespace ksmith
