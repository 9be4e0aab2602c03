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

}  // namespace
}  // namespace ksmith
