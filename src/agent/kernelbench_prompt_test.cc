// The prompts for KernelBench's format: ModelNew in Python, what the evaluator does with it, the
// problem's own source and the size it is judged at.
#include "agent/kernelbench_prompt.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "task/registry.h"

namespace ksmith {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

// A built-in task dressed as an imported one: the prompts read only its fields.
Task KernelBenchLikeTask() {
  TaskRegistry registry(std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks");
  auto task = registry.Find("relu");
  if (!task.ok()) throw std::runtime_error(task.error().message);
  task->category = "kernelbench";
  task->pytorch = "class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n"
                  "batch_size = 16\ndim = 16384\n";
  return *task;
}

TEST(KernelBenchPrompt, TheSystemPromptAsksForModelNewInOnePythonBlock) {
  const Task task = KernelBenchLikeTask();
  const std::string cpu = BuildKernelBenchSystemPrompt({task, "cpu", {}});
  EXPECT_TRUE(Contains(cpu, "class ModelNew(torch.nn.Module)"));
  EXPECT_TRUE(Contains(cpu, "load_inline"));
  EXPECT_TRUE(Contains(cpu, "Keep Model's parameters"));
  EXPECT_TRUE(Contains(cpu, "no custom kernel"));
  EXPECT_TRUE(Contains(cpu, "exactly one fenced code block, ```python"));
  EXPECT_EQ(cpu.find("extern \"C\""), std::string::npos) << "ksmith's own contract is not this format's";
  EXPECT_EQ(cpu.find("Triton"), std::string::npos) << "no Triton on the CPU";
  const std::string cuda = BuildKernelBenchSystemPrompt({task, "cuda", {}});
  EXPECT_TRUE(Contains(cuda, "Triton"));
  EXPECT_TRUE(Contains(cuda, "torch.cuda.current_stream()"));
  EXPECT_TRUE(Contains(cuda, "on the default stream (a launch with no stream argument)"))
      << "KernelBench's commonest honest launch is accepted, and the prompt says so";
  EXPECT_TRUE(Contains(cuda, "no `cudaStreamPerThread`"));
  EXPECT_TRUE(Contains(cuda, "no_implicit_headers=True")) << "the form that builds in seconds";
  EXPECT_TRUE(Contains(cuda, "#include <pybind11/pybind11.h>` alone"));
  EXPECT_EQ(cpu.find("no_implicit_headers"), std::string::npos) << "the CPU's C++ has no nvcc to spare";
}

TEST(KernelBenchPrompt, TheTaskPromptShowsTheProblemTheJudgedSizeAndTheBaseline) {
  const Task task = KernelBenchLikeTask();
  const std::string prompt =
      BuildKernelBenchTaskPrompt({task, "cpu", {}}, "class ModelNew(nn.Module):\n    pass\n");
  EXPECT_TRUE(Contains(prompt, "```python\nclass Model(nn.Module):"));
  EXPECT_TRUE(Contains(prompt, "ModelNew is judged and timed at " + task.FormatShape(task.bench_shape)));
  EXPECT_TRUE(Contains(prompt, "reported, not required"));
  EXPECT_TRUE(Contains(prompt, "A correct ModelNew to improve on:\n```python\nclass ModelNew"));
  EXPECT_TRUE(Contains(prompt, "one ```python block"));
  EXPECT_EQ(prompt.find("Define exactly this function"), std::string::npos);
  for (const auto& shape : task.eval_shapes) {
    if (shape != task.bench_shape) {
      EXPECT_EQ(prompt.find(task.FormatShape(shape)), std::string::npos);
    }
  }
}

TEST(KernelBenchPrompt, TheNativeFormatKeepsKsmithsOwnPrompts) {
  const Task task = KernelBenchLikeTask();
  EXPECT_TRUE(Contains(BuildSystemPrompt({task, "cpu", {}}), "extern \"C\""));
  EXPECT_TRUE(Contains(BuildTaskPrompt({task, "cpu", {}}, ""), "Define exactly this function"));
}

}  // namespace
}  // namespace ksmith
