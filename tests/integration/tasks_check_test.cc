// `ksmith tasks check` over the built-in suite: every task must be able to tell a right kernel
// from a wrong one (no near-constant or vanishing outputs, no ignored inputs, no shape where an
// all-zeros output passes). A task added to tasks/ is checked here without being named.
#include <string>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

TEST(TasksCheckCli, EveryBuiltInTaskIsOk) {
  const CliResult run = RunKsmith({"tasks", "check", "--json", "--no-gpu", "--quiet"});
  const auto json = run.Json();
  ASSERT_TRUE(json.is_array()) << run.Describe();
  const auto listed = RunKsmith({"tasks", "--json"}).Json();
  ASSERT_TRUE(listed.is_array());
  EXPECT_EQ(json.size(), listed.size()) << "every listed task is checked";
  for (const auto& report : json) {
    const std::string name = report.value("name", std::string("?"));
    EXPECT_TRUE(report.value("ok", false)) << name << " is flagged:\n" << report.dump(2);
    EXPECT_GT(report.value("cases", 0), 0) << name;
    EXPECT_EQ(report.value("gpu_crosscheck", std::string()), "skipped: --no-gpu") << name;
  }
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.err, "") << "--quiet prints no progress";
}

TEST(TasksCheckCli, ChecksNamedTasksOnlyAndPrintsATable) {
  const CliResult run = RunKsmith({"tasks", "check", "vector_add", "softmax", "--no-gpu"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.out.find("vector_add"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("softmax"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("matmul"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("2 tasks checked"), std::string::npos) << run.out;
  // One progress line per task, and one with its outcome.
  EXPECT_NE(run.err.find("[1/2] vector_add"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("[2/2] softmax"), std::string::npos) << run.err;
}

TEST(TasksCheckCli, UnknownTaskIsAUsageError) {
  const CliResult run = RunKsmith({"tasks", "check", "softmx", "--no-gpu"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("softmax"), std::string::npos) << "suggests the near name: " << run.Describe();
}

TEST(TasksCheckCli, GpuAndNoGpuExcludeEachOther) {
  const CliResult run = RunKsmith({"tasks", "check", "relu", "--gpu", "--no-gpu"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
}

TEST(TasksCheckCli, RequiredGpuCrossCheckFailsWithoutAGpu) {
  if (fs::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has a GPU";
  const CliResult run = RunKsmith({"tasks", "check", "relu", "--gpu"});
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  EXPECT_NE(run.err.find("no GPU"), std::string::npos) << run.Describe();
  // Without --gpu the cross-check is skipped, not failed.
  const CliResult skipped = RunKsmith({"tasks", "check", "relu", "--json", "--quiet"});
  ASSERT_EQ(skipped.exit_code, 0) << skipped.Describe();
  EXPECT_EQ(skipped.Json()[0].value("gpu_crosscheck", std::string()).rfind("skipped: no GPU", 0), 0u) << skipped.out;
}

TEST(TasksCheckCli, HelpExplainsEveryCheck) {
  const CliResult run = RunKsmith({"tasks", "check", "--help"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  for (const char* check : {"near_constant_output", "trivial_output_passes", "input_ignored", "output_too_small",
                            "GPU cross-check", "--no-gpu", "--quiet"}) {
    EXPECT_NE(run.out.find(check), std::string::npos) << check << " is not explained:\n" << run.out;
  }
}

}  // namespace
}  // namespace ksmith::it
