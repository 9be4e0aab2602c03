// On a machine with an NVIDIA GPU: every task's CUDA seed kernel, the tuner's starting point, is an
// honest kernel that must pass, with its default setting and with every knob changed (both in one
// `ksmith eval` process, timed briefly). Tasks without hand-written honest CUDA kernels rely on this
// test for their "honest kernels pass" evidence. Without a GPU it skips and says why.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "../integration/cli_runner.h"
#include "../integration/kernel_header.h"
#include "agent/tune_knobs.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

std::string WhyNoGpu() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  return {};
}

KnobSetting ShiftedSetting(const std::vector<TuneKnob>& knobs, size_t shift) {
  KnobSetting setting;
  for (const auto& knob : knobs) {
    setting.emplace_back(knob.name, knob.values[(knob.default_index + shift) % knob.values.size()]);
  }
  return setting;
}

class CudaSeedKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaSeedKernel, PassesWithItsDefaultAndWithEveryKnobChanged) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  const std::string& name = GetParam();
  auto task = TaskRegistry(SourceDir() / "tasks").Find(name);
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_TRUE(task->seeds.contains("cuda")) << name << " has no [seed] cuda";
  const std::string source = Slurp(task->seeds.at("cuda"));
  auto knobs = ParseTuneKnobs(source);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  const std::vector<KnobSetting> settings = {ShiftedSetting(*knobs, 0), ShiftedSetting(*knobs, 1)};
  TempDir scratch("cuda-seed-" + name);
  std::vector<std::string> args = {"eval", "--backend", "cuda", "--task", name, "--json",
                                   "--quiet", "--seeds", "1", "--timing-budget", "0.2"};
  for (size_t i = 0; i < settings.size(); ++i) {
    const fs::path file = scratch.path() / (name + "_setting" + std::to_string(i) + ".cu");
    std::ofstream(file) << ApplyKnobs(source, settings[i]);
    args.push_back(file.string());
  }
  const CliResult run = RunKsmith(args, {}, 900);
  ASSERT_FALSE(run.timed_out) << run.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  std::istringstream lines(run.out);
  size_t index = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const auto verdict = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(verdict.is_object()) << line.substr(0, 300);
    ASSERT_LT(index, settings.size()) << run.Describe();
    EXPECT_EQ(verdict.value("status", std::string()), "passed")
        << name << " seed with " << FormatSetting(settings[index]) << ": "
        << verdict.value("reason", std::string()) << "\n" << verdict.dump().substr(0, 3000);
    ++index;
  }
  EXPECT_EQ(index, settings.size()) << run.Describe();
}

INSTANTIATE_TEST_SUITE_P(Tasks, CudaSeedKernel, ::testing::ValuesIn(TaskNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ksmith::it
