// The tune strategy's starting points, the seed kernels of every built-in task ([seed] in
// task.toml): both backends have one, their @tune knobs parse into small spaces, and the CPU seed
// is correct with its default setting and with a setting that changes every knob. That every CUDA
// setting compiles is checked by cuda_compile_test.cc; that it is correct needs a GPU.
#include <sstream>
#include <string>
#include <vector>

#include "agent/tune_knobs.h"
#include "cli_runner.h"
#include "kernel_header.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

// A tuner that spends one evaluation per setting can afford this many for a seed. Every CUDA
// setting is compiled in CI (cuda_compile_test.cc), so CUDA seeds stay at the smaller bound; a CPU
// seed may offer a larger space for evolve to search (the demo's add_layernorm has 36 settings).
constexpr size_t kMaxCudaSettings = 12;
constexpr size_t kMaxCpuSettings = 48;

TaskRegistry BuiltInRegistry() { return TaskRegistry(SourceDir() / "tasks"); }

std::vector<std::string> BuiltInTaskNames() {
  std::vector<std::string> names;
  auto entries = BuiltInRegistry().List();
  if (!entries.ok()) return names;
  for (const auto& entry : *entries) {
    if (TaskSelected(entry.name)) names.push_back(entry.name);
  }
  return names;
}

KnobSetting DefaultSetting(const std::vector<TuneKnob>& knobs) {
  KnobSetting setting;
  for (const auto& knob : knobs) setting.emplace_back(knob.name, knob.values[knob.default_index]);
  return setting;
}

// Every knob on the value after its default: the setting farthest from the one tried first.
KnobSetting EveryKnobChanged(const std::vector<TuneKnob>& knobs) {
  KnobSetting setting;
  for (const auto& knob : knobs) {
    setting.emplace_back(knob.name, knob.values[(knob.default_index + 1) % knob.values.size()]);
  }
  return setting;
}

// One verdict per line, in the order the candidates were given.
std::vector<nlohmann::json> Verdicts(const std::string& out) {
  std::vector<nlohmann::json> verdicts;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty()) verdicts.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return verdicts;
}

class SeedKernelTest : public ::testing::TestWithParam<std::string> {};

TEST(SeedKernels, EveryBuiltInTaskIsCovered) {
  EXPECT_GE(TaskNames(false).size(), 9u) << "no built-in tasks found under " << SourceDir() / "tasks";
}

TEST_P(SeedKernelTest, BothBackendsHaveASeedWithASmallKnobSpace) {
  auto task = BuiltInRegistry().Find(GetParam());
  ASSERT_TRUE(task.ok()) << task.error().message;
  for (const char* backend : {"cpu", "cuda"}) {
    ASSERT_TRUE(task->seeds.contains(backend)) << task->toml_path << " has no [seed] " << backend;
    const fs::path& source = task->seeds.at(backend);
    auto knobs = ParseTuneKnobs(Slurp(source));
    ASSERT_TRUE(knobs.ok()) << source << ": " << knobs.error().message;
    EXPECT_FALSE(knobs->empty()) << source << " declares no @tune knob: the tuner has nothing to search";
    const size_t max_settings = std::string(backend) == "cuda" ? kMaxCudaSettings : kMaxCpuSettings;
    EXPECT_LE(CountSettings(*knobs), max_settings) << source;
    for (const auto& knob : *knobs) {
      EXPECT_GE(knob.values.size(), 2u) << source << ": knob " << knob.name << " offers no choice";
    }
  }
}

TEST_P(SeedKernelTest, CpuSeedPassesWithItsDefaultAndWithEveryKnobChanged) {
  const std::string& name = GetParam();
  auto task = BuiltInRegistry().Find(name);
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_TRUE(task->seeds.contains("cpu"));
  const std::string source = Slurp(task->seeds.at("cpu"));
  auto knobs = ParseTuneKnobs(source);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  ASSERT_FALSE(knobs->empty());

  const std::vector<KnobSetting> settings = {DefaultSetting(*knobs), EveryKnobChanged(*knobs)};
  EXPECT_EQ(EnumerateSettings(*knobs, 1, 0).front(), settings[0]) << "the tuner tries the default first";
  TempDir scratch("seed-" + name);
  ASSERT_FALSE(scratch.path().empty());
  std::vector<std::string> args = {"eval", "--task", name, "--backend", "cpu", "--json", "--quiet",
                                   "--no-time", "--seeds", "1"};
  for (size_t i = 0; i < settings.size(); ++i) {
    const fs::path file = scratch.path() / (name + "_setting" + std::to_string(i) + ".cc");
    std::ofstream(file) << ApplyKnobs(source, settings[i]);
    args.push_back(file.string());
  }
  const CliResult run = RunKsmith(args);
  ASSERT_FALSE(run.timed_out) << run.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdicts = Verdicts(run.out);
  ASSERT_EQ(verdicts.size(), settings.size()) << run.Describe();
  for (size_t i = 0; i < settings.size(); ++i) {
    ASSERT_TRUE(verdicts[i].is_object()) << run.Describe();
    EXPECT_EQ(verdicts[i].value("status", std::string()), "passed")
        << name << " seed with " << FormatSetting(settings[i]) << ": "
        << verdicts[i].value("reason", std::string()) << "\n" << verdicts[i].dump().substr(0, 3000);
  }
}

INSTANTIATE_TEST_SUITE_P(BuiltInTasks, SeedKernelTest, ::testing::ValuesIn(BuiltInTaskNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ksmith::it
