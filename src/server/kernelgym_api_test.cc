#include "server/kernelgym_api.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using json = nlohmann::json;

json Request() {
  return {{"task_id", "rl_batch_001"}, {"reference_code", "import torch\nclass Model: pass\n"},
          {"kernel_code", "import torch\nclass ModelNew: pass\n"}, {"backend", "cuda"},
          {"num_correct_trials", 5}, {"num_perf_trials", 100}, {"timeout", 300}, {"priority", "normal"},
          {"uuid", nullptr}, {"workflow", "kernelbench"}};
}

TEST(ParseKernelGymRequest, TakesItsFieldsAndSaysWhichItDoesNotFollow) {
  KernelGymRequest request;
  ASSERT_FALSE(ParseKernelGymRequest(Request(), {}, request));
  EXPECT_EQ(request.task_id, "rl_batch_001");
  EXPECT_EQ(request.backend, "cuda");
  EXPECT_EQ(request.num_correct_trials, 5);
  EXPECT_EQ(request.not_followed, (std::vector<std::string>{"num_perf_trials", "timeout", "priority"}));

  auto error_of = [](json body) {
    KernelGymRequest out;
    const auto error = ParseKernelGymRequest(body, {}, out);
    return error ? error->where : std::string("none");
  };
  json no_id = Request();
  no_id["task_id"] = "";
  EXPECT_EQ(error_of(no_id), "task_id");
  json no_reference = Request();
  no_reference.erase("reference_code");
  EXPECT_EQ(error_of(no_reference), "reference_code");
  json other_workflow = Request();
  other_workflow["workflow"] = "kernel_simple";
  EXPECT_EQ(error_of(other_workflow), "workflow");
  json trials = Request();
  trials["num_correct_trials"] = 50;
  EXPECT_EQ(error_of(trials), "num_correct_trials");
}

TEST(KernelGymResultResponse, MapsVerdictsToItsResultFields) {
  JobRecord job;
  job.id = "j-1";
  job.state = JobState::kQueued;
  EXPECT_EQ(KernelGymStatusResponse("t", job)["status"], "pending");
  job.state = JobState::kRunning;
  EXPECT_EQ(KernelGymStatusResponse("t", job)["status"], "processing");
  job.state = JobState::kDone;
  job.verdict = {{"status", "passed"},
                 {"speedup", 2.0},
                 {"timing", {{"candidate_us", {{"median", 500.0}}}, {"baseline_us", {{"median", 1000.0}}}}}};
  json result = KernelGymResultResponse("t", job);
  EXPECT_EQ(result["status"], "completed");
  EXPECT_EQ(result["compiled"], true);
  EXPECT_EQ(result["correctness"], true);
  EXPECT_EQ(result["decoy_kernel"], false);
  EXPECT_DOUBLE_EQ(result["kernel_runtime"].get<double>(), 0.5);  // ms, as KernelBench's
  EXPECT_DOUBLE_EQ(result["reference_runtime"].get<double>(), 1.0);
  EXPECT_TRUE(result["error_code"].is_null());

  job.verdict = {{"status", "compile_error"}, {"reason", "nvcc: error"}};
  result = KernelGymResultResponse("t", job);
  EXPECT_EQ(result["compiled"], false);
  EXPECT_EQ(result["error_code"], "COMPILATION_ERROR");
  EXPECT_EQ(result["error_message"], "nvcc: error");

  job.verdict = {{"status", "integrity_violation"}, {"reason", "timer moved"}};
  result = KernelGymResultResponse("t", job);
  EXPECT_EQ(result["decoy_kernel"], true);
  EXPECT_EQ(result["correctness"], false);

  job.verdict = {{"status", "infra_error"}};
  EXPECT_EQ(KernelGymResultResponse("t", job)["status"], "failed");
}

}  // namespace
}  // namespace ksmith
