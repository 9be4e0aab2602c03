// The build's limits against candidates that make the compiler run away (issue 27): a template
// recursion that eats memory, a constant evaluation that eats CPU. Each must end as a
// compile_error that names the limit it hit and its value, quickly, with the machine unharmed:
// the limits themselves protect it, set low here so that the tests are quick.
#include <string>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

struct LimitCase {
  std::string kernel;          // in tests/kernels/redteam/
  std::vector<std::string> flags;
  std::string limit;           // the build stage's limit_exceeded
  double value = 0;            // its limit_value
  std::string reason;          // part of the verdict's reason
};

void PrintTo(const LimitCase& limit_case, std::ostream* out) { *out << limit_case.kernel; }

class BuildLimitsTest : public ::testing::TestWithParam<LimitCase> {};

TEST_P(BuildLimitsTest, ARunawayCompilerIsACompileErrorThatNamesTheLimit) {
  const LimitCase& limit_case = GetParam();
  std::vector<std::string> args = {"eval", "--task", "vector_add", "--json", "--quiet", "--no-time"};
  args.insert(args.end(), limit_case.flags.begin(), limit_case.flags.end());
  args.push_back((RedteamDir() / limit_case.kernel).string());
  const CliResult run = RunKsmith(args, {}, 300);
  ASSERT_FALSE(run.timed_out) << run.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  EXPECT_EQ(verdict.value("status", std::string()), "compile_error") << run.Describe();
  EXPECT_NE(verdict.value("reason", std::string()).find(limit_case.reason), std::string::npos) << run.Describe();
  const auto* build = FindStage(verdict, "build");
  ASSERT_NE(build, nullptr) << run.Describe();
  const auto& details = (*build)["details"];
  EXPECT_EQ(details.value("limit_exceeded", std::string()), limit_case.limit) << build->dump(2);
  EXPECT_DOUBLE_EQ(details.value("limit_value", 0.0), limit_case.value) << build->dump(2);
  EXPECT_EQ(details["failure"].value("kind", std::string()), "build_limit") << build->dump(2);
  // The wall-clock limit (120 s) did not have to step in.
  EXPECT_LT(build->value("seconds", 0.0), 100.0) << build->dump(2);
}

INSTANTIATE_TEST_SUITE_P(
    Runaways, BuildLimitsTest,
    ::testing::Values(LimitCase{"compiler_memory_bomb_vector_add.cpp", {"--build-memory-gib", "0.5"}, "memory",
                                double(uint64_t{512} << 20), "the compiler exceeded the build's memory limit of 512 MiB"},
                      LimitCase{"compiler_cpu_burn_vector_add.cpp", {"--build-cpu-s", "3"}, "cpu_time", 3,
                                "the compiler exceeded the build's CPU time limit of 3 s"}),
    [](const ::testing::TestParamInfo<LimitCase>& info) { return info.param.limit == "memory" ? "Memory" : "CpuTime"; });

TEST(BuildLimits, AnHonestKernelBuildsUnderLimitsFarBelowTheDefaults) {
  // Given limits a sixteenth of the defaults, an honest kernel still builds: they leave room.
  const CliResult run = RunKsmith({"eval", "--task", "vector_add", "--json", "--quiet", "--no-time",
                                   "--build-memory-gib", "0.5", "--build-cpu-s", "8",
                                   (HonestDir() / "vector_add_fast.cpp").string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json().value("status", std::string()), "passed") << run.Describe();
}

TEST(BuildLimits, ALimitOutOfRangeIsAUsageError) {
  const CliResult run = RunKsmith({"eval", "--task", "vector_add", "--build-memory-gib", "0",
                                   (HonestDir() / "vector_add_fast.cpp").string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("build-memory-gib"), std::string::npos) << run.Describe();
}

}  // namespace
}  // namespace ksmith::it
