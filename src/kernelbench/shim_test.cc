// The generated shim: the task's signature, the embedded texts, and quoting it cannot break.
#include "kernelbench/shim.h"

#include <gtest/gtest.h>

#include "kernelbench/scripts.h"

namespace ksmith {
namespace {

ShimSpec Softmax() {
  ShimSpec spec;
  spec.task_name = "kb_l1_023_softmax";
  spec.role = "baseline";
  spec.how = "in float32";
  spec.function = "kb_l1_023_softmax";
  spec.parameters = "const float* x, float* y, int64_t batch_size, int64_t dim";
  spec.input_names = {"x"};
  spec.output_names = {"y"};
  spec.dim_names = {"batch_size", "dim"};
  spec.source_file = "/kb/level1/23_Softmax.py";
  spec.libpython = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
  spec.python_home = "/usr";
  spec.package_modules = {"__init__", "runner", "shim"};
  spec.package_hash = "0123456789abcdef";
  spec.spec_json = R"({"source": "import torch\n"})";
  return spec;
}

TEST(RenderShim, DefinesTheTaskFunctionAndPassesEveryBufferAndDim) {
  auto source = RenderShim(Softmax());
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_NE(source->find("extern \"C\" void kb_l1_023_softmax(const float* x, float* y, int64_t batch_size, "
                         "int64_t dim) {"),
            std::string::npos);
  EXPECT_NE(source->find("const void* const inputs[] = {x};"), std::string::npos);
  EXPECT_NE(source->find("void* const outputs[] = {y};"), std::string::npos);
  EXPECT_NE(source->find("const int64_t dims[] = {batch_size, dim};"), std::string::npos);
  EXPECT_NE(source->find("CallModel(inputs, 1, outputs, 1, dims, 2, nullptr);"), std::string::npos);
  // The problem and the package's modules travel inside the shim, so the task folder can move, and
  // the shim serves the modules to Python itself (the worker may read no file of ksmith's).
  for (const char* module : {"runner", "shim", "embedded"}) {
    const std::string text(KernelBenchModuleText(module));
    ASSERT_GT(text.size(), 200u) << module;
    EXPECT_NE(source->find("R\"ksmith_text(" + text + ")ksmith_text\""), std::string::npos) << module;
  }
  EXPECT_NE(source->find("\"runner\", R\"ksmith_text("), std::string::npos);
  EXPECT_EQ(source->find(std::string(KernelBenchModuleText("candidate")).substr(0, 200)), std::string::npos);
  EXPECT_NE(source->find("kPackage = \"ksmith_kb_0123456789abcdef\""), std::string::npos);
  EXPECT_NE(source->find(R"({"source": "import torch\n"})"), std::string::npos);
  EXPECT_NE(source->find("kRole = \"baseline\""), std::string::npos);
  // A baseline puts its outputs in place after the timed call; a reference has no such hook.
  EXPECT_NE(source->find("void ksmith_finish(void* stream)"), std::string::npos);
  ShimSpec reference = Softmax();
  reference.role = "reference";
  auto reference_source = RenderShim(reference);
  ASSERT_TRUE(reference_source.ok());
  EXPECT_EQ(reference_source->find("void ksmith_finish(void* stream)"), std::string::npos);
  // The CUDA worker warms the baseline's Python before its walls go up; the reference has its own
  // worker, whose first call is made while the candidate builds.
  EXPECT_NE(source->find("void ksmith_warm() {"), std::string::npos);
  EXPECT_EQ(reference_source->find("void ksmith_warm() {"), std::string::npos);
  // The reference, called from the evaluator's short-lived threads, runs Python on one thread of its
  // own; a timed role runs on its caller's thread.
  EXPECT_NE(reference_source->find("kOnPythonThread = true"), std::string::npos);
  EXPECT_NE(source->find("kOnPythonThread = false"), std::string::npos);
}

// A candidate's shim reports what its Python changed and what it raised, and exports its guard,
// which the worker runs after the baseline's timed calls too; a baseline's shim has none of them.
TEST(RenderShim, OnlyACandidateShimExportsItsStateReportAndGuard) {
  ShimSpec candidate = Softmax();
  candidate.role = "candidate";
  auto candidate_source = RenderShim(candidate);
  ASSERT_TRUE(candidate_source.ok()) << candidate_source.error().message;
  EXPECT_NE(candidate_source->find("const char* ksmith_state_changes()"), std::string::npos);
  EXPECT_NE(candidate_source->find("void ksmith_restore_state()"), std::string::npos);
  EXPECT_NE(candidate_source->find("\"ksmith_guard\""), std::string::npos);
  EXPECT_NE(candidate_source->find("const char* ksmith_candidate_raised()"), std::string::npos);
  auto baseline_source = RenderShim(Softmax());
  ASSERT_TRUE(baseline_source.ok());
  EXPECT_EQ(baseline_source->find("ksmith_state_changes()"), std::string::npos);
  EXPECT_EQ(baseline_source->find("ksmith_restore_state()"), std::string::npos);
  EXPECT_EQ(baseline_source->find("ksmith_candidate_raised()"), std::string::npos);
}

TEST(RenderShim, RefusesAProblemWhoseTextWouldEndTheQuotedString) {
  ShimSpec spec = Softmax();
  spec.spec_json = R"json({"source": "x = ')ksmith_text"'"})json";
  auto source = RenderShim(spec);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().message.find("ksmith_text"), std::string::npos);
}

TEST(RenderShim, RefusesAModuleThePackageLacks) {
  ShimSpec spec = Softmax();
  spec.package_modules.push_back("kb_runner");
  auto source = RenderShim(spec);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().message.find("no module kb_runner"), std::string::npos) << source.error().message;
  spec.package_modules.clear();
  EXPECT_FALSE(RenderShim(spec).ok());
}

TEST(RenderShim, ACudaShimPassesTheCallersStream) {
  ShimSpec spec = Softmax();
  spec.role = "cuda_baseline";
  spec.cuda = true;
  spec.parameters += ", cudaStream_t stream";
  auto source = RenderShim(spec);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_NE(source->find("#include <cuda_runtime.h>"), std::string::npos);
  EXPECT_NE(source->find("int64_t dim, cudaStream_t stream) {"), std::string::npos);
  EXPECT_NE(source->find("CallModel(inputs, 1, outputs, 1, dims, 2, static_cast<void*>(stream));"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
