// On a machine with an NVIDIA GPU: every honest CUDA kernel passes and every CUDA red-team
// kernel gets the verdict its header names. Each task's kernels go to one `ksmith eval` process,
// so the evaluator also survives all of them in a row (crashes, hangs and illegal addresses
// included) and reports each. Without a GPU these tests skip and say why.
#include <gtest/gtest.h>

#include <set>

#include "../integration/cli_runner.h"
#include "../integration/cuda_kernels.h"

namespace ksmith::it {
namespace {

std::string WhyNoGpu() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  return {};
}

class CudaTaskKernels : public ::testing::TestWithParam<std::string> {};

// Runs `kernels` in one `ksmith eval` process; returns each verdict by candidate path.
std::map<std::string, nlohmann::json> EvaluateAll(const std::string& task, const std::vector<RedteamKernel>& kernels,
                                                  const std::vector<std::string>& extra_args) {
  std::vector<std::string> args = {"eval", "--backend", "cuda", "--task", task, "--json", "--quiet"};
  const bool own_budget = std::find(extra_args.begin(), extra_args.end(), "--timing-budget") != extra_args.end();
  if (!own_budget) args.insert(args.end(), {"--timing-budget", "0.3"});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  for (const auto& kernel : kernels) args.push_back(kernel.file.string());
  const CliResult run = RunKsmith(args, {}, 1800);
  std::map<std::string, nlohmann::json> verdicts;
  EXPECT_FALSE(run.timed_out) << run.Describe();
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  // One candidate: one indented object; several: one object per line.
  if (auto whole = nlohmann::json::parse(run.out, nullptr, false); whole.is_object()) {
    verdicts[whole.value("candidate", std::string())] = whole;
    return verdicts;
  }
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    auto verdict = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(verdict.is_object()) << "not a JSON verdict: " << line.substr(0, 300);
    if (verdict.is_object()) verdicts[verdict.value("candidate", std::string())] = verdict;
  }
  EXPECT_EQ(verdicts.size(), kernels.size()) << run.Describe();
  return verdicts;
}

void ExpectVerdict(const RedteamKernel& kernel, const nlohmann::json& verdict) {
  SCOPED_TRACE(kernel.file.filename().string() + " tries: " + kernel.tries);
  EXPECT_EQ(verdict.value("status", std::string()), kernel.expect)
      << "reason: " << verdict.value("reason", std::string()) << "\n" << verdict.dump(1).substr(0, 6000);
  if (kernel.expect == "passed") {
    EXPECT_TRUE(verdict.contains("speedup")) << verdict.dump(1).substr(0, 3000);
    return;
  }
  const auto* failed = FailedStage(verdict);
  ASSERT_NE(failed, nullptr) << "a failing verdict must name the stage that failed\n" << verdict.dump(1);
  if (!kernel.cause.empty()) {
    const std::string evidence = Lower(verdict.value("reason", std::string()) + "\n" + failed->dump());
    EXPECT_NE(evidence.find(Lower(kernel.cause)), std::string::npos)
        << "neither the reason nor the failed stage names the cause '" << kernel.cause << "'\n"
        << verdict.dump(1).substr(0, 4000);
  }
}

// Kernels that need their own flags (`// args:`) get a process of their own.
TEST_P(CudaTaskKernels, EveryKernelGetsItsVerdictInOneRun) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<RedteamKernel> kernels = CudaKernelsByTask().at(GetParam());
  std::vector<RedteamKernel> plain;
  std::vector<RedteamKernel> own;
  for (const auto& kernel : kernels) {
    ASSERT_EQ(kernel.problem, "") << kernel.file;
    (kernel.args.empty() ? plain : own).push_back(kernel);
  }
  auto verdicts = EvaluateAll(GetParam(), plain, {});
  for (const auto& kernel : own) verdicts.merge(EvaluateAll(GetParam(), {kernel}, kernel.args));
  for (const auto& kernel : kernels) ExpectVerdict(kernel, verdicts[kernel.file.string()]);
}

std::vector<std::string> TasksWithCudaKernels() {
  std::vector<std::string> tasks;
  for (const auto& [task, kernels] : CudaKernelsByTask()) tasks.push_back(task);
  return tasks;
}

INSTANTIATE_TEST_SUITE_P(Tasks, CudaTaskKernels, ::testing::ValuesIn(TasksWithCudaKernels()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(CudaDoctor, ReportsTheGpuAndItsMeasuredPeaks) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  const CliResult run = RunKsmith({"doctor", "--json"}, {}, 300);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto gpu = run.Json().value("gpu", nlohmann::json::object());
  EXPECT_FALSE(gpu.value("name", std::string()).empty()) << run.Describe();
  EXPECT_GT(gpu.value("copy_bandwidth_gbps", 0.0), 100.0) << run.Describe();
  EXPECT_GT(gpu.value("fp32_tflops", 0.0), 1.0) << run.Describe();
}

}  // namespace
}  // namespace ksmith::it
