// Every honest kernel in tests/kernels/honest/ (<task>_fast.cpp, <task>_slow.cpp) must pass, with a
// real timing: a speedup, a roofline fraction no better than physics allows, and provenance that
// records the secret seed's hash and a working sandbox.
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

struct HonestKernel {
  fs::path file;
  std::string task;
};

std::vector<HonestKernel> AllHonest() {
  std::vector<HonestKernel> kernels;
  for (const auto& file : FilesIn(HonestDir(), ".cpp")) {
    std::string task = file.stem().string();
    for (const std::string suffix : {"_fast", "_slow"}) {
      if (task.ends_with(suffix)) task.resize(task.size() - suffix.size());
    }
    kernels.push_back({file, task});
  }
  return kernels;
}

// The first 13 tasks have hand-written honest kernels, a fast and a slow one; every task's seed
// kernel (seed_kernels_test.cc) is a further honest kernel that must pass.
TEST(HonestSuite, CoversTheOriginalTasksFastAndSlowAndNamesRealTasks) {
  const auto kernels = AllHonest();
  EXPECT_GE(kernels.size(), 26u);
  const CliResult list = RunKsmith({"tasks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  std::set<std::string> tasks;
  for (const auto& task : list.Json()) tasks.insert(task.value("name", std::string()));
  for (const auto& kernel : kernels) {
    EXPECT_TRUE(tasks.contains(kernel.task)) << kernel.file << " names no task";
  }
  for (const char* name : {"vector_add", "relu", "gelu", "sigmoid", "leaky_relu", "transpose", "matmul",
                           "layernorm", "rmsnorm", "softmax", "log_softmax", "row_sum", "row_max"}) {
    for (const char* kind : {"_fast.cpp", "_slow.cpp"}) {
      EXPECT_TRUE(fs::exists(HonestDir() / (std::string(name) + kind))) << "no honest kernel " << name << kind;
    }
  }
}

void PrintTo(const HonestKernel& kernel, std::ostream* out) { *out << kernel.file.filename(); }

class HonestTest : public ::testing::TestWithParam<HonestKernel> {};

TEST_P(HonestTest, PassesWithARealTiming) {
  const HonestKernel& kernel = GetParam();
  const CliResult run = RunKsmith(
      {"eval", "--task", kernel.task, "--json", "--quiet", "--seeds", "2", kernel.file.string()});
  ASSERT_FALSE(run.timed_out) << run.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  ASSERT_EQ(verdict.value("status", std::string()), "passed")
      << "reason: " << verdict.value("reason", std::string()) << "\n" << run.Describe();
  for (const auto& stage : verdict.at("stages")) {
    EXPECT_EQ(stage.value("outcome", std::string()), "ok") << stage.dump();
  }
  for (const char* stage : {"audit", "build", "sandbox", "correctness", "determinism", "idle_check",
                            "timing", "recheck", "physical_limit"}) {
    EXPECT_NE(FindStage(verdict, stage), nullptr) << "no stage " << stage << "\n" << run.Describe();
  }

  ASSERT_TRUE(verdict.contains("speedup")) << run.Describe();
  ASSERT_TRUE(verdict["speedup"].is_number()) << run.Describe();
  EXPECT_GT(verdict["speedup"].get<double>(), 0.0);
  ASSERT_TRUE(verdict.contains("timing")) << run.Describe();
  EXPECT_GT(verdict["timing"].value("floor_us", 0.0), 0.0) << verdict["timing"].dump();
  ASSERT_TRUE(verdict.contains("roofline_fraction") && verdict["roofline_fraction"].is_number())
      << run.Describe();
  const double roofline = verdict["roofline_fraction"].get<double>();
  EXPECT_GT(roofline, 0.0);
  EXPECT_LE(roofline, 1.0) << "a passed verdict never claims more than the limit";

  const auto& provenance = verdict.at("provenance");
  ASSERT_TRUE(provenance.contains("secret_seed_sha256")) << provenance.dump();
  EXPECT_FALSE(provenance["secret_seed_sha256"].get<std::string>().empty());
  EXPECT_FALSE(provenance.value("seed_fixed_by_user", true));
  ASSERT_TRUE(provenance.contains("protections")) << provenance.dump();
  EXPECT_EQ(provenance["protections"].value("seccomp", false), true) << provenance.dump();
}

INSTANTIATE_TEST_SUITE_P(Kernels, HonestTest, ::testing::ValuesIn(AllHonest()),
                         [](const ::testing::TestParamInfo<HonestKernel>& info) {
                           return TestName(info.param.file);
                         });

}  // namespace
}  // namespace ksmith::it
