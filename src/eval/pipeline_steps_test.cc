// The steps the pipeline shares across backends: here, what a crashed KernelBench-format
// candidate's verdict says it raised, and the labels its state report gives.
#include "eval/pipeline_steps.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

TEST(StateReportLabels, NamesCallsWithoutCustomCodeAndTheRestoredSettings) {
  const auto labels = StateReportLabels(nlohmann::json{
      {"custom_code", {{"calls", 10}, {"calls_without_custom_code", 10}}},
      {"restored", {"its Python set torch.backends.cudnn.benchmark", "its Python set grad mode"}},
      {"changes", nlohmann::json::array()}});
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_TRUE(labels[0].starts_with("no custom kernel (none of its 10 calls")) << labels[0];
  EXPECT_EQ(labels[1], "changed process state only its own calls read (restored, not failed): its Python set "
                       "torch.backends.cudnn.benchmark; its Python set grad mode");
  // A C++ candidate's reply has neither.
  EXPECT_TRUE(StateReportLabels(nlohmann::json{{"changes", nlohmann::json::array()}}).empty());
}

TEST(RaisedPythonException, NamesTheLastExceptionLineWithoutTheRunnersModule) {
  const std::string output =
      "Error in cpuinfo: failed to parse processor information from /proc/cpuinfo\n"
      "Traceback (most recent call last):\n"
      "  File \"<string>\", line 425, in _check_outputs\n"
      "ksmith_kb_runner_d44976f1495408c7.CandidateError: output 0 shares memory with input x\n"
      "ksmith: error: the candidate of task kb_l0_003_fixed_reshape failed: the model raised an exception\n";
  EXPECT_EQ(RaisedPythonException(output), "CandidateError: output 0 shares memory with input x");
  EXPECT_EQ(RaisedPythonException("ksmith_kb_d44976f1495408c7.candidate.CandidateError: ModelNew's parameters do "
                                   "not match\n"),
            "CandidateError: ModelNew's parameters do not match");
  EXPECT_EQ(RaisedPythonException("Traceback (most recent call last):\nPermissionError: [Errno 13] Permission "
                                  "denied: '/tmp/cache.pt'\n"),
            "PermissionError: [Errno 13] Permission denied: '/tmp/cache.pt'");
  EXPECT_EQ(RaisedPythonException("torch.cuda.OutOfMemoryError: CUDA out of memory"),
            "torch.cuda.OutOfMemoryError: CUDA out of memory");
}

TEST(RaisedPythonException, IsEmptyWhereNoPythonRaised) {
  EXPECT_EQ(RaisedPythonException(""), "");
  EXPECT_EQ(RaisedPythonException("Segmentation fault\nksmith: error: something else\n"), "");
  EXPECT_EQ(RaisedPythonException("Error in cpuinfo: failed to parse processor information\n"), "");
}

// CUPTI's attribution of a KernelBench candidate's runs: a run that launched only torch's and
// cuBLAS's kernels is a run without a custom kernel; the label names where the kernels came from.
TEST(LaunchedKernelsLabel, CountsRunsWithoutAKernelOfItsOwnAndNamesTheLibraries) {
  LaunchedKernels fallback;
  fallback.Add(nlohmann::json{{"own_kernels", 1}, {"launched_by", {{"ksmith_ext_relu.so", 1}}}});
  fallback.Add(nlohmann::json{{"own_kernels", 0}, {"launched_by", {{"libtorch_cuda.so", 2}}}});
  fallback.Add(nlohmann::json{{"kernels", 3}});  // not attributed: not counted
  EXPECT_EQ(fallback.runs, 2);
  EXPECT_EQ(LaunchedKernelsLabel(fallback),
            "custom kernel in some calls only (CUPTI: 1 of 2 checked runs launched no kernel from its own code: a "
            "fallback; kernels by launching library: ksmith_ext_relu.so 1, libtorch_cuda.so 2)");

  LaunchedKernels torch_only;
  torch_only.Add(nlohmann::json{{"own_kernels", 0}, {"launched_by", {{"libtorch_cuda.so", 1}, {"libcublasLt.so.12", 2}}}});
  EXPECT_TRUE(LaunchedKernelsLabel(torch_only).starts_with("no custom kernel (CUPTI: none of its 1 checked runs"))
      << LaunchedKernelsLabel(torch_only);

  LaunchedKernels own;
  own.Add(nlohmann::json{{"own_kernels", 2}, {"launched_by", {{"__triton_launcher.so", 2}}}});
  EXPECT_EQ(LaunchedKernelsLabel(own), "");
  EXPECT_EQ(LaunchedKernelsLabel(LaunchedKernels{}), "");
}

// The share of GPU time in the candidate's own kernels, over every counted run: a ModelNew whose
// own kernel does a sliver of the work while torch does the rest has a small share.
TEST(LaunchedKernels, TimeShareSumsOwnKernelTimeOverCountedRuns) {
  LaunchedKernels launched;
  EXPECT_FALSE(launched.TimeShare().has_value());
  launched.Add(nlohmann::json{{"own_kernels", 1}, {"launched_by", {{"ext.so", 1}}}, {"device_ns", 1000}, {"own_device_ns", 100}});
  launched.Add(nlohmann::json{{"own_kernels", 1}, {"launched_by", {{"ext.so", 1}}}, {"device_ns", 3000}, {"own_device_ns", 300}});
  launched.Add(nlohmann::json{{"kernels", 3}, {"device_ns", 5000}});  // not attributed: not counted
  const auto share = launched.TimeShare();
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->own_ns, 400);
  EXPECT_EQ(share->total_ns, 4000);
  EXPECT_EQ(share->runs, 2);
  EXPECT_DOUBLE_EQ(share->share(), 0.1);
  // It travels in the verdict's JSON and back.
  Verdict verdict;
  verdict.status = VerdictStatus::kPassed;
  verdict.extensions.kernel_time_share = share;
  const nlohmann::json json = verdict.ToJson();
  EXPECT_DOUBLE_EQ(json.at("kernel_time_share").at("share").get<double>(), 0.1);
  const auto read = Verdict::FromJson(json);
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read->extensions.kernel_time_share.has_value());
  EXPECT_EQ(read->extensions.kernel_time_share->own_ns, 400);
}

}  // namespace
}  // namespace ksmith
