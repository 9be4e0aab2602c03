// The compiled baseline's shim and where its warm step's caches go; the warm step itself runs in
// tests/integration/kernelbench_compiled_test.cc, and on the GPU in tests/gpu.
#include "kernelbench/compiled_baseline.h"

#include <gtest/gtest.h>

#include "kernelbench/analysis_test_support.h"

#include "kernelbench/scripts.h"
#include "kernelbench/shim.h"

namespace ksmith {
namespace {

nlohmann::json Relu() { return testing::ReluAnalysis(); }

Task View(int64_t dim) {
  Task task;
  task.bench_shape = {{"batch_size", 16}, {"dim", dim}};
  return task;
}

TEST(CompiledBaseline, TheCachesAreKeyedByTheProblemAndTheTimingShape) {
  const auto plan = PlanCompiledBaseline("/cache", Relu(), View(4096));
  EXPECT_EQ(plan.directory, std::filesystem::path("/cache") / "kernelbench-compiled" / plan.digest);
  EXPECT_EQ(PlanCompiledBaseline("/cache", Relu(), View(4096)).digest, plan.digest);
  EXPECT_NE(PlanCompiledBaseline("/cache", Relu(), View(8192)).digest, plan.digest);
  nlohmann::json other = Relu();
  other["source"] = "import torch\n";
  EXPECT_NE(PlanCompiledBaseline("/cache", other, View(4096)).digest, plan.digest);
}

TEST(CompiledBaseline, ItsShimRunsTheModelUnderTorchCompileFromTheWarmedCaches) {
  const auto plan = PlanCompiledBaseline("/cache", Relu(), View(4096));
  const nlohmann::json manifest = {{"programs", {{{"argv", {"ptxas", "--version"}}, {"returncode", 0}, {"output", "cHR4YXM="}}}}};
  auto source = RenderCompiledBaseline(Relu(), plan, manifest);
  ASSERT_TRUE(source.ok()) << source.error().message;
  // The task's signature with the caller's stream, and the finish hook that the worker calls
  // after each timed call, as for the eager baseline.
  EXPECT_NE(source->find("extern \"C\" void kb_l1_019_relu(const float* x, float* y, int64_t batch_size, int64_t dim, "
                         "cudaStream_t stream)"),
            std::string::npos);
  EXPECT_NE(source->find("void ksmith_finish(void* stream)"), std::string::npos);
  EXPECT_NE(source->find("kRole = \"cuda_compiled\""), std::string::npos);
  EXPECT_NE(source->find("class CompiledRunner(Runner)"), std::string::npos);
  // Where the caches are and what the tools answered travel in the spec it embeds.
  EXPECT_NE(source->find(plan.directory.string()), std::string::npos);
  EXPECT_NE(source->find("cHR4YXM="), std::string::npos);
  // Dynamo reads the source it traces from the copy inside the caches, which the worker may
  // read, not from the user's file, which it may not.
  EXPECT_EQ(plan.problem_file, plan.directory / "problem.py");
  EXPECT_NE(source->find("\"file\":\"" + plan.problem_file.string() + "\""), std::string::npos);
  // Never the candidate's guard or report: this is trusted code.
  EXPECT_EQ(source->find("ksmith_state_changes"), std::string::npos);
}

TEST(CompiledBaseline, ItsRoleIsNamedAndOnlyItsShimCarriesTheCompiledRunner) {
  EXPECT_TRUE(KernelBenchShimSpec(Relu(), "cuda_compiled").ok());
  EXPECT_FALSE(KernelBenchShimSpec(Relu(), "cuda_compile").ok());
  auto eager = KernelBenchShimSpec(Relu(), "cuda_baseline");
  auto compiled = KernelBenchShimSpec(Relu(), "cuda_compiled");
  ASSERT_TRUE(eager.ok() && compiled.ok());
  EXPECT_EQ(eager->package_modules, (std::vector<std::string>{"__init__", "runner", "shim"}));
  EXPECT_EQ(compiled->package_modules,
            (std::vector<std::string>{"__init__", "runner", "shim", "extensions", "compiled"}));
  // Each set of texts is a package of its own name, as each shim's copy is in one process.
  EXPECT_NE(eager->package_hash, compiled->package_hash);
}

// A reference and a baseline run the same modules, and so import one package; a candidate's adds
// its guard (candidate.py) and the loader of what its build sandbox built.
TEST(KernelBenchShimSpec, EachRoleCarriesTheModulesItRuns) {
  auto reference = KernelBenchShimSpec(Relu(), "reference");
  auto baseline = KernelBenchShimSpec(Relu(), "baseline");
  auto candidate = KernelBenchShimSpec(Relu(), "candidate");
  ASSERT_TRUE(reference.ok() && baseline.ok() && candidate.ok());
  EXPECT_EQ(reference->package_modules, baseline->package_modules);
  EXPECT_EQ(reference->package_hash, baseline->package_hash);
  EXPECT_EQ(candidate->package_modules,
            (std::vector<std::string>{"__init__", "runner", "shim", "extensions", "candidate"}));
  EXPECT_NE(candidate->package_hash, baseline->package_hash);
  EXPECT_EQ(candidate->package_hash.size(), 16u);
}

}  // namespace
}  // namespace ksmith
