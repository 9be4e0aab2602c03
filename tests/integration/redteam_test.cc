// Every hostile or broken kernel in tests/kernels/redteam/ must get the verdict its header names.
//
// Header of a red-team file (first lines, in this order):
//   // expect: <status>          required: the verdict's "status"
//   // tries: <what it attempts> required: one line for the reader
//   // cause: <text>             optional: must appear (case-insensitively) in the reason or in
//                                the failed stage, so the verdict names the real cause
//   // args: <flags>             optional: extra `ksmith eval` flags (replaces the default
//                                --timing-budget 0.3 when it sets its own budget)
// The task is the longest task name that the file name ends with: <class>_<task>.cpp.
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "kernel_header.h"

namespace ksmith::it {
namespace {

std::vector<RedteamKernel> AllKernels() {
  std::vector<RedteamKernel> kernels;
  for (const auto& file : FilesIn(RedteamDir(), ".cpp")) kernels.push_back(ParseKernel(file, ".cpp"));
  return kernels;
}

TEST(RedteamSuite, HasEnoughWellFormedKernelsOverSeveralTasks) {
  const auto kernels = AllKernels();
  EXPECT_GE(kernels.size(), 20u);
  std::set<std::string> tasks;
  std::set<std::string> statuses;
  for (const auto& kernel : kernels) {
    EXPECT_EQ(kernel.problem, "") << kernel.file;
    tasks.insert(kernel.task);
    statuses.insert(kernel.expect);
  }
  EXPECT_GE(tasks.size(), 5u);
  // Every failure status a candidate can earn is exercised (infra_error is never its fault).
  for (const char* status :
       {"compile_error", "runtime_error", "timeout", "wrong_output", "integrity_violation"}) {
    EXPECT_TRUE(statuses.count(status)) << "no red-team kernel expects " << status;
  }
  EXPECT_FALSE(statuses.count("passed")) << "a red-team kernel must not expect to pass";
}

// gtest prints parameters that fail; the file name says which.
void PrintTo(const RedteamKernel& kernel, std::ostream* out) { *out << kernel.file.filename(); }

class RedteamTest : public ::testing::TestWithParam<RedteamKernel> {};

TEST_P(RedteamTest, GetsTheExpectedVerdict) {
  const RedteamKernel& kernel = GetParam();
  ASSERT_EQ(kernel.problem, "") << kernel.file;
  std::vector<std::string> args = {"eval", "--task", kernel.task, "--json", "--quiet"};
  const bool own_budget =
      std::find(kernel.args.begin(), kernel.args.end(), "--timing-budget") != kernel.args.end();
  if (!own_budget) args.insert(args.end(), {"--timing-budget", "0.3"});
  args.insert(args.end(), kernel.args.begin(), kernel.args.end());
  args.push_back(kernel.file.string());
  const CliResult run = RunKsmith(args);
  SCOPED_TRACE(kernel.file.filename().string() + " tries: " + kernel.tries);
  ASSERT_FALSE(run.timed_out) << run.Describe();
  // An evaluation ran, whatever the verdict: exit 0 and one JSON object on stdout.
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << "stdout is not one JSON object (forged output?)\n"
                                   << run.Describe();
  EXPECT_EQ(verdict.value("status", std::string()), kernel.expect)
      << "reason: " << verdict.value("reason", std::string()) << "\n" << run.Describe();
  EXPECT_EQ(verdict.value("task", std::string()), kernel.task);
  EXPECT_FALSE(verdict.value("reason", std::string()).empty()) << run.Describe();

  const auto* failed = FailedStage(verdict);
  ASSERT_NE(failed, nullptr) << "a failing verdict must name the stage that failed\n" << run.Describe();
  if (!kernel.cause.empty()) {
    const std::string evidence = Lower(verdict.value("reason", std::string()) + "\n" + failed->dump());
    EXPECT_NE(evidence.find(Lower(kernel.cause)), std::string::npos)
        << "neither the reason nor the failed stage '" << failed->value("name", std::string())
        << "' names the cause '" << kernel.cause << "'\n" << run.Describe();
  }
  if (kernel.expect == "compile_error") {
    // The build log shows the signature the candidate must define, as the task declares it.
    const auto* build = FindStage(verdict, "build");
    ASSERT_NE(build, nullptr) << run.Describe();
    const CliResult show = RunKsmith({"tasks", "show", kernel.task, "--json"});
    const std::string signature = show.Json().value("signature", std::string("?"));
    const std::string log = build->at("details").value("log", std::string());
    EXPECT_NE(log.find(signature), std::string::npos)
        << "the build log does not show '" << signature << "'\n" << run.Describe();
  }
  // Nothing the candidate prints may reach the verdict as a verdict: no fake top-level fields.
  if (kernel.expect != "integrity_violation") {
    EXPECT_FALSE(verdict.contains("speedup")) << run.Describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, RedteamTest, ::testing::ValuesIn(AllKernels()),
                         [](const ::testing::TestParamInfo<RedteamKernel>& info) {
                           return TestName(info.param.file);
                         });

}  // namespace
}  // namespace ksmith::it
