// The opencl backend on this machine's OpenCL runtime (PoCL in CI): every task's OpenCL seed and
// baseline build and pass, honest kernels written in other people's habits pass, every red-team
// kernel in tests/kernels/opencl/redteam/ gets the verdict its header names, and the tuner runs.
//
// These tests fail, never skip, where no OpenCL device is found: CI installs PoCL
// (scripts/setup.sh), and a green run in which nothing was compiled is what they guard against.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/tune_knobs.h"
#include "cli_runner.h"
#include "kernel_header.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

fs::path OpenclKernels() { return SourceDir() / "tests" / "kernels" / "opencl"; }

// The built-in tasks that have an OpenCL version ([baseline.opencl]).
std::vector<std::string> OpenclTasks() {
  std::vector<std::string> names;
  TaskRegistry registry(SourceDir() / "tasks");
  auto entries = registry.List();
  if (!entries.ok()) return names;
  for (const auto& entry : *entries) {
    auto task = registry.Find(entry.name);
    if (task.ok() && task->baselines.contains("opencl") && TaskSelected(entry.name)) names.push_back(entry.name);
  }
  return names;
}

std::vector<nlohmann::json> VerdictLines(const std::string& out) {
  std::vector<nlohmann::json> verdicts;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) verdicts.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return verdicts;
}

TEST(OpenclRuntime, DoctorListsADevice) {
  const CliResult doctor = RunKsmith({"doctor", "--json"});
  ASSERT_EQ(doctor.exit_code, 0) << doctor.Describe();
  const auto opencl = doctor.Json()["opencl"];
  ASSERT_TRUE(opencl.value("available", false))
      << "no OpenCL device: install pocl-opencl-icd, ocl-icd-opencl-dev and opencl-c-headers (scripts/setup.sh does) "
         "and rebuild; "
      << opencl.dump();
  ASSERT_GE(opencl["devices"].size(), 1u);
  const auto& device = opencl["devices"][0];
  EXPECT_FALSE(device.value("name", std::string()).empty()) << device.dump();
  EXPECT_GE(device.value("max_work_group_size", 0), 1) << device.dump();
  const CliResult text = RunKsmith({"doctor"});
  EXPECT_NE(text.out.find("opencl       --devices 0: "), std::string::npos) << text.Describe();
}

TEST(OpenclTasks, AtLeastTwelveAcrossTheCategoriesAndTheTaskListShowsThem) {
  const CliResult list = RunKsmith({"tasks", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  std::set<std::string> categories;
  size_t with_opencl = 0;
  for (const auto& task : list.Json()) {
    const auto backends = task.value("backends", std::vector<std::string>{});
    if (std::find(backends.begin(), backends.end(), "opencl") == backends.end()) continue;
    ++with_opencl;
    categories.insert(task.value("category", std::string()));
  }
  EXPECT_GE(with_opencl, 12u);
  for (const char* category : {"elementwise", "reduction", "normalization", "gemm", "data_movement"}) {
    EXPECT_TRUE(categories.contains(category)) << "no OpenCL task in " << category;
  }
  const CliResult table = RunKsmith({"tasks"});
  EXPECT_NE(table.out.find("cpu,cuda,opencl"), std::string::npos) << table.Describe();
}

class OpenclTaskTest : public ::testing::TestWithParam<std::string> {};

// The seed with its default setting (timed) and with every knob changed, and the baseline as a
// candidate: each passes, so every OpenCL kernel the tasks ship is built and run.
TEST_P(OpenclTaskTest, SeedAndBaselinePass) {
  const std::string& name = GetParam();
  auto task = TaskRegistry(SourceDir() / "tasks").Find(name);
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_TRUE(task->seeds.contains("opencl")) << task->toml_path << " has [baseline.opencl] but no [seed] opencl";
  const std::string seed = Slurp(task->seeds.at("opencl"));
  auto knobs = ParseTuneKnobs(seed);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  ASSERT_FALSE(knobs->empty()) << "the OpenCL seed declares no @tune knob";
  KnobSetting changed;
  for (const auto& knob : *knobs) changed.emplace_back(knob.name, knob.values[(knob.default_index + 1) % knob.values.size()]);
  TempDir scratch("opencl-" + name);
  const fs::path changed_file = scratch.path() / (name + "_changed.cl");
  std::ofstream(changed_file) << ApplyKnobs(seed, changed);

  const CliResult untimed = RunKsmith({"eval", "--backend", "opencl", "--task", name, "--json", "--quiet", "--no-time",
                                       "--seeds", "1", changed_file.string(), task->baselines.at("opencl").source.string()});
  ASSERT_EQ(untimed.exit_code, 0) << untimed.Describe();
  const auto verdicts = VerdictLines(untimed.out);
  ASSERT_EQ(verdicts.size(), 2u) << untimed.Describe();
  for (const auto& verdict : verdicts) {
    EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.dump().substr(0, 3000);
    EXPECT_EQ(verdict.value("backend", std::string()), "opencl");
  }

  const CliResult timed = RunKsmith({"eval", "--backend", "opencl", "--task", name, "--json", "--quiet", "--seeds", "1",
                                     "--timing-budget", "0.2", task->seeds.at("opencl").string()});
  ASSERT_EQ(timed.exit_code, 0) << timed.Describe();
  const auto verdict = timed.Json();
  EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.dump().substr(0, 3000);
  ASSERT_TRUE(verdict.contains("timing")) << verdict.dump().substr(0, 3000);
  EXPECT_GT(verdict["timing"]["candidate_us"].value("median", 0.0), 0.0) << verdict["timing"].dump();
  EXPECT_GT(verdict["timing"]["baseline_us"].value("median", 0.0), 0.0) << verdict["timing"].dump();
  // On a GPU the samples are the device's event times; on a CPU device, whose kernels run in the
  // worker's process, the evaluator's clock (never shorter than the worker's).
  const auto* timing_stage = FindStage(verdict, "timing");
  ASSERT_NE(timing_stage, nullptr);
  const std::string summary = timing_stage->at("details").value("summary", std::string());
  const double inner_us = timing_stage->at("details").value("candidate_inner_median_us", -1.0);
  const double median_us = verdict["timing"]["candidate_us"].value("median", 0.0);
  if (summary.find("timed by the device's events") != std::string::npos) {
    EXPECT_DOUBLE_EQ(inner_us, median_us) << timing_stage->dump();
  } else {
    EXPECT_NE(summary.find("timed from outside the worker"), std::string::npos) << summary;
    EXPECT_GE(median_us, inner_us) << timing_stage->dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Tasks, OpenclTaskTest, ::testing::ValuesIn(OpenclTasks()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Honest kernels in habits other than the seeds' (vload4, grid-stride loops, register-blocked
// tiles, two launches sharing the output): <task>_<anything>.cl.
std::vector<fs::path> HonestKernels() { return FilesIn(OpenclKernels() / "honest", ".cl"); }

std::string TaskOfHonest(const fs::path& file) {
  std::string best;
  for (const auto& task : TaskNames(false)) {
    if (file.filename().string().starts_with(task + "_") && task.size() > best.size()) best = task;
  }
  return best;
}

class OpenclHonestTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(OpenclHonestTest, PassesWithATiming) {
  const fs::path& file = GetParam();
  const std::string task = TaskOfHonest(file);
  ASSERT_FALSE(task.empty()) << file << " names no task";
  const CliResult run = RunKsmith({"eval", "--backend", "opencl", "--task", task, "--json", "--quiet", "--seeds", "2",
                                   "--timing-budget", "0.2", file.string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.dump().substr(0, 3000);
  EXPECT_TRUE(verdict.contains("timing")) << verdict.dump().substr(0, 3000);
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpenclHonestTest, ::testing::ValuesIn(HonestKernels()),
                         [](const ::testing::TestParamInfo<fs::path>& info) { return TestName(info.param); });

std::vector<RedteamKernel> RedteamKernels() {
  std::vector<RedteamKernel> kernels;
  for (const auto& file : FilesIn(OpenclKernels() / "redteam", ".cl")) kernels.push_back(ParseKernel(file, ".cl"));
  return kernels;
}

TEST(OpenclRedteamSuite, CoversEveryFailureACandidateCanEarn) {
  const auto kernels = RedteamKernels();
  EXPECT_GE(kernels.size(), 10u);
  std::set<std::string> statuses;
  for (const auto& kernel : kernels) {
    EXPECT_EQ(kernel.problem, "") << kernel.file;
    statuses.insert(kernel.expect);
  }
  for (const char* status : {"compile_error", "runtime_error", "timeout", "wrong_output", "integrity_violation"}) {
    EXPECT_TRUE(statuses.count(status)) << "no OpenCL red-team kernel expects " << status;
  }
}

void PrintTo(const RedteamKernel& kernel, std::ostream* out) { *out << kernel.file.filename(); }

class OpenclRedteamTest : public ::testing::TestWithParam<RedteamKernel> {};

TEST_P(OpenclRedteamTest, GetsTheExpectedVerdict) {
  const RedteamKernel& kernel = GetParam();
  ASSERT_EQ(kernel.problem, "") << kernel.file;
  std::vector<std::string> args = {"eval", "--backend", "opencl", "--task", kernel.task, "--json", "--quiet",
                                   "--timing-budget", "0.3"};
  args.insert(args.end(), kernel.args.begin(), kernel.args.end());
  args.push_back(kernel.file.string());
  const CliResult run = RunKsmith(args);
  SCOPED_TRACE(kernel.file.filename().string() + " tries: " + kernel.tries);
  ASSERT_FALSE(run.timed_out) << run.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  EXPECT_EQ(verdict.value("status", std::string()), kernel.expect)
      << "reason: " << verdict.value("reason", std::string()) << "\n" << run.Describe();
  const auto* failed = FailedStage(verdict);
  ASSERT_NE(failed, nullptr) << run.Describe();
  if (!kernel.cause.empty()) {
    const std::string evidence = Lower(verdict.value("reason", std::string()) + "\n" + failed->dump());
    EXPECT_NE(evidence.find(Lower(kernel.cause)), std::string::npos)
        << "neither the reason nor the failed stage names '" << kernel.cause << "'\n" << run.Describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpenclRedteamTest, ::testing::ValuesIn(RedteamKernels()),
                         [](const ::testing::TestParamInfo<RedteamKernel>& info) { return TestName(info.param.file); });

// A .cl file given to the cpu backend is a usage error that names the fix, before any compiler runs.
TEST(OpenclCli, AnOpenclSourceOnTheCpuBackendSaysAddBackendOpencl) {
  const fs::path seed = SourceDir() / "tasks" / "elementwise" / "relu" / "seed_opencl.cl";
  const CliResult run = RunKsmith({"eval", "--task", "relu", "--backend", "cpu", "--no-time", seed.string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("add --backend opencl"), std::string::npos) << run.Describe();
}

// The tuner searches an OpenCL seed's knobs with no model, and the best kernel it writes passes.
TEST(OpenclTune, TheTunerFindsAPassingSetting) {
  TempDir out("opencl-tune");
  const CliResult run = RunKsmith({"optimize", "--backend", "opencl", "--task", "relu", "--strategy", "tune",
                                   "--max-candidates", "3", "--timing-budget", "0.2", "--seeds", "1", "--db",
                                   (out.path() / "runs.db").string(), "--output-dir", (out.path() / "out").string(),
                                   "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  EXPECT_EQ(summary.value("candidates", 0), 3) << summary.dump();
  EXPECT_GE(summary.value("passed", 0), 1) << summary.dump();
  EXPECT_EQ(summary.value("backend", std::string()), "opencl") << summary.dump();
  bool written = false;
  for (const auto& entry : fs::directory_iterator(out.path() / "out")) written = written || entry.path().extension() == ".cl";
  EXPECT_TRUE(written) << "no best kernel (.cl) in " << (out.path() / "out");
}

}  // namespace
}  // namespace ksmith::it
