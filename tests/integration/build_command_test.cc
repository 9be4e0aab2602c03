// `ksmith build`: a real CUDA kernel built with the real nvcc, on a machine that needs no GPU,
// reports its registers and shared memory; a kernel that does not compile is said as eval says
// it; the cpu backend only builds.
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

// Where NvccCompiler looks for nvcc: $KSMITH_NVCC, PATH, /usr/local/cuda/bin/nvcc.
bool HaveNvcc() {
  if (const char* configured = std::getenv("KSMITH_NVCC"); configured && *configured) return fs::exists(configured);
  return std::system("command -v nvcc >/dev/null 2>&1") == 0 || fs::exists("/usr/local/cuda/bin/nvcc");
}

fs::path HonestCuda(const std::string& name) { return SourceDir() / "tests" / "kernels" / "cuda" / "honest" / name; }

TEST(BuildCommand, ReportsRegistersAndSharedMemoryOfARealCudaKernel) {
  if (!HaveNvcc()) GTEST_SKIP() << "no nvcc here: ksmith build --backend cuda needs the CUDA toolkit";
  const CliResult run = RunKsmith({"build", "--backend", "cuda", "--task", "matmul", "--arch", "sm_90a", "--json",
                                   HonestCuda("matmul_fast.cu").string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto report = run.Json();
  ASSERT_TRUE(report.is_object()) << run.Describe();
  EXPECT_EQ(report["status"], "built");
  EXPECT_EQ(report["target"]["arch"], "sm_90a");
  ASSERT_GE(report["kernels"].size(), 1u) << run.Describe();
  const auto& kernel = report["kernels"][0];
  EXPECT_GT(kernel["registers"].get<int>(), 0);
  EXPECT_LE(kernel["registers"].get<int>(), 255);
  EXPECT_GT(kernel["shared_memory_bytes"].get<int64_t>(), 0);  // its two shared tiles
  EXPECT_EQ(kernel["arch"], "sm_90a");
  EXPECT_TRUE(kernel.contains("spill_store_bytes"));
  EXPECT_TRUE(kernel.contains("stack_frame_bytes"));
  // The SASS summary, or why there is none (a toolkit without cuobjdump).
  if (report.contains("sass_error")) {
    EXPECT_NE(report["sass_error"].get<std::string>().find("cuobjdump"), std::string::npos);
  } else {
    EXPECT_GT(kernel["sass"]["instructions"].get<int64_t>(), 0) << run.Describe();
    EXPECT_GT(kernel["sass"]["fma"].get<int64_t>(), 0) << run.Describe();
  }

  const CliResult text = RunKsmith({"build", "--task", "matmul", "--arch", "sm_90a", HonestCuda("matmul_fast.cu").string()});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_NE(text.out.find("built "), std::string::npos) << text.Describe();
  EXPECT_NE(text.out.find("registers " + std::to_string(kernel["registers"].get<int>())), std::string::npos)
      << text.Describe();
}

TEST(BuildCommand, ACompileErrorIsSaidAsEvalSaysItAndExitsOne) {
  if (!HaveNvcc()) GTEST_SKIP() << "no nvcc here: ksmith build --backend cuda needs the CUDA toolkit";
  const fs::path broken = fs::temp_directory_path() / ("ksmith-build-broken-" + std::to_string(::getpid()) + ".cu");
  std::ofstream(broken) << "#include <cstdint>\n#include <cuda_runtime.h>\n"
                           "extern \"C\" void relu(const float* x, float* y, int64_t n, cudaStream_t s) { undeclared(); }\n";
  const CliResult run = RunKsmith({"build", "--task", "relu", "--arch", "sm_90a", "--json", broken.string()});
  fs::remove(broken);
  EXPECT_EQ(run.exit_code, 1) << run.Describe();
  const auto report = run.Json();
  ASSERT_TRUE(report.is_object()) << run.Describe();
  EXPECT_EQ(report.value("status", ""), "compile_error") << run.Describe();
  EXPECT_FALSE(report.value("built", true));
  const nlohmann::json* build = nullptr;
  ASSERT_TRUE(report.contains("stages")) << run.Describe();
  for (const auto& stage : report.at("stages")) {
    if (stage.value("name", "") == "build") build = &stage;
  }
  ASSERT_NE(build, nullptr) << run.Describe();
  EXPECT_EQ(build->value("outcome", ""), "failed");
  EXPECT_NE(build->at("details").dump().find("undeclared"), std::string::npos) << run.Describe();
  EXPECT_NE(run.err.find("ksmith: error:"), std::string::npos) << run.Describe();
  EXPECT_NE(run.err.find("fix the source"), std::string::npos) << run.Describe();
}

TEST(BuildCommand, TheCpuBackendBuildsAndSaysItReportsNoKernels) {
  const CliResult run = RunKsmith({"build", "--backend", "cpu", "--task", "relu", (HonestDir() / "relu_slow.cpp").string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.out.find("built "), std::string::npos) << run.Describe();
  EXPECT_NE(run.out.find("no per-kernel resources"), std::string::npos) << run.Describe();
}

TEST(BuildCommand, ACudaSourceOnTheCpuBackendIsAUsageErrorWithTheFix) {
  // As eval says it, before any compiler runs (g++ would only say that cuda_runtime.h is missing).
  const fs::path kernel = SourceDir() / "tests" / "kernels" / "cuda" / "honest" / "relu_fast.cu";
  const CliResult run = RunKsmith({"build", "--backend", "cpu", "--task", "relu", kernel.string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("add --backend cuda"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace ksmith::it
