// Finding KernelBench-named candidates in a folder, and writing ksmith's verdicts in KernelBench's
// eval_results.json form.
#include "kernelbench/run_folder.h"

#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

void Touch(const fs::path& path) { std::ofstream(path) << "class ModelNew: pass\n"; }

TEST(FindKernelBenchSamples, ReadsLevelProblemAndSampleFromTheNamesInOrderAndListsTheOthers) {
  ScopedTempDir folder("kb-run");
  ASSERT_TRUE(folder.ok());
  for (const char* name : {"level_1_problem_19_sample_1_kernel.py", "level_1_problem_3_sample_0_kernel.py",
                           "level_1_problem_19_sample_0_kernel.py", "notes.py", "level_1_problem_x_sample_0_kernel.py",
                           "level_1_problem_2_sample_0_kernel.txt"}) {
    Touch(folder.path() / name);
  }
  fs::create_directory(folder.path() / "level_1_problem_4_sample_0_kernel.py");  // a folder, not a candidate
  auto found = FindKernelBenchSamples(folder.path());
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->samples.size(), 3u);
  EXPECT_EQ(found->samples[0].problem, 3);
  EXPECT_EQ(found->samples[1].problem, 19);
  EXPECT_EQ(found->samples[1].sample, 0);
  EXPECT_EQ(found->samples[2].sample, 1);
  EXPECT_EQ(found->samples[2].level, 1);
  EXPECT_EQ(found->samples[2].path.filename(), "level_1_problem_19_sample_1_kernel.py");
  EXPECT_EQ(found->ignored, (std::vector<std::string>{"level_1_problem_x_sample_0_kernel.py", "notes.py"}));
}

TEST(FindKernelBenchSamples, AFolderWithoutSamplesOrNoFolderIsAnErrorThatSaysThePattern) {
  ScopedTempDir folder("kb-run");
  ASSERT_TRUE(folder.ok());
  Touch(folder.path() / "kernel.py");
  auto empty = FindKernelBenchSamples(folder.path());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("level_<L>_problem_<P>_sample_<S>_kernel.py"), std::string::npos);
  EXPECT_NE(empty.error().message.find("1 other .py"), std::string::npos);
  EXPECT_FALSE(FindKernelBenchSamples(folder.path() / "missing").ok());
}

TEST(KernelBenchTaskPrefix, PadsTheProblemToThreeDigits) {
  EXPECT_EQ(KernelBenchTaskPrefix(1, 19), "kb_l1_019_");
  EXPECT_EQ(KernelBenchTaskPrefix(3, 100), "kb_l3_100_");
}

Verdict PassedVerdict() {
  Verdict verdict;
  verdict.status = VerdictStatus::kPassed;
  verdict.task = "kb_l1_019_relu";
  verdict.backend = "cuda";
  verdict.labels = {"no custom kernel (torch only)"};
  verdict.extensions.generalization = Generalization{.decided_at = "n=4096", .generalizes = false, .hidden_cases = 3};
  verdict.timing = MakeTiming({10, 11, 12, 10, 11}, {20, 22, 24, 20, 22}, "torch eager on the GPU");
  BuildFacts build;
  build.build_sandbox = nlohmann::json{{"static_findings", {{{"check", "no_kernel_code"}, {"line", 0}}}}};
  StageRecord& stage = verdict.stages.emplace_back();
  stage.name = StageName(StageId::kBuild);
  stage.details.build = build;
  return verdict;
}

TEST(KernelBenchResultEntry, APassedVerdictIsCompiledCorrectAndTimedInMilliseconds) {
  const auto entry = KernelBenchResultEntry(PassedVerdict(), 2);
  EXPECT_EQ(entry.at("sample_id"), 2);
  EXPECT_TRUE(entry.at("compiled").get<bool>());
  EXPECT_TRUE(entry.at("correctness").get<bool>());
  // Means of the samples {10, 11, 12, 10, 11} and {20, 22, 24, 20, 22} us, as KernelBench's runtime.
  EXPECT_NEAR(entry.at("runtime").get<double>(), 0.0108, 1e-12);
  EXPECT_NEAR(entry.at("ref_runtime").get<double>(), 0.0216, 1e-12);
  EXPECT_NEAR(entry.at("speedup").get<double>(), 2.0, 1e-9);
  EXPECT_EQ(entry.at("runtime_stats").at("num_trials"), 5);
  EXPECT_EQ(entry.at("metadata").at("ksmith_status"), "passed");
  EXPECT_EQ(entry.at("metadata").at("ksmith_labels").at(0), "no custom kernel (torch only)");
  EXPECT_TRUE(entry.at("metadata").contains("ksmith_comparison"));
  EXPECT_EQ(entry.at("metadata").at("ksmith_static_findings"), nlohmann::json::array({"no_kernel_code"}));
  EXPECT_EQ(entry.at("metadata").at("ksmith_generalizes"), false);
  EXPECT_EQ(entry.at("metadata").at("ksmith_judged_at"), "n=4096");
}

TEST(KernelBenchResultEntry, ATorchCompileTimingAddsItsReferenceRuntimeAndSpeedup) {
  Verdict verdict = PassedVerdict();
  EXPECT_FALSE(KernelBenchResultEntry(verdict, 0).contains("speedup_compiled"));  // not asked for
  verdict.extensions.second_timing = MakeTiming({10, 11, 12, 10, 11}, {5, 5, 6, 5, 6}, "torch.compile");
  const auto entry = KernelBenchResultEntry(verdict, 0);
  EXPECT_NEAR(entry.at("ref_runtime_compiled").get<double>(), 0.0054, 1e-12);
  EXPECT_NEAR(entry.at("speedup_compiled").get<double>(), 0.5, 0.05);
  EXPECT_EQ(entry.at("metadata").at("ksmith_compiled_comparison"), "slower");
  EXPECT_NEAR(entry.at("speedup").get<double>(), 2.0, 1e-9);  // eager's stays the speedup
}

TEST(KernelBenchResultEntry, OnlyACompileErrorIsNotCompiledAndNoFailureIsCorrectOrTimed) {
  for (auto status : {VerdictStatus::kCompileError, VerdictStatus::kWrongOutput, VerdictStatus::kIntegrityViolation,
                      VerdictStatus::kRuntimeError, VerdictStatus::kTimeout}) {
    Verdict verdict = PassedVerdict();  // timing kept: an integrity violation may have been timed
    verdict.status = status;
    verdict.reason = "why";
    const auto entry = KernelBenchResultEntry(verdict, 0);
    EXPECT_EQ(entry.at("compiled").get<bool>(), status != VerdictStatus::kCompileError) << VerdictStatusName(status);
    EXPECT_FALSE(entry.at("correctness").get<bool>());
    EXPECT_EQ(entry.at("runtime").get<double>(), -1.0);
    EXPECT_EQ(entry.at("speedup").get<double>(), -1.0);
    EXPECT_EQ(entry.at("metadata").at("ksmith_reason"), "why");
  }
}

TEST(AddKernelBenchResult, ListsEntriesUnderTheProblemIdAndReplacesARepeatedSample) {
  nlohmann::json results;
  AddKernelBenchResult(results, 19, {{"sample_id", 0}, {"correctness", false}});
  AddKernelBenchResult(results, 19, {{"sample_id", 1}, {"correctness", true}});
  AddKernelBenchResult(results, 23, {{"sample_id", 0}, {"correctness", true}});
  AddKernelBenchResult(results, 19, {{"sample_id", 0}, {"correctness", true}});
  ASSERT_EQ(results.at("19").size(), 2u);
  EXPECT_TRUE(results.at("19").at(0).at("correctness").get<bool>());
  EXPECT_EQ(results.at("23").size(), 1u);
}

TEST(KernelBenchResultEntry, RuntimeStatsHaveKernelBenchsFieldsOfTheSamplesInMilliseconds) {
  const auto stats = KernelBenchResultEntry(PassedVerdict(), 0, {"NVIDIA H200", "cuda:0"}).at("runtime_stats");
  // The candidate's samples {10, 11, 12, 10, 11} us: KernelBench's get_timing_stats fields.
  EXPECT_NEAR(stats.at("mean").get<double>(), 0.0108, 1e-12);
  EXPECT_NEAR(stats.at("std").get<double>(), 0.000748331, 1e-9);  // numpy.std, ddof 0
  EXPECT_DOUBLE_EQ(stats.at("min").get<double>(), 0.010);
  EXPECT_DOUBLE_EQ(stats.at("max").get<double>(), 0.012);
  EXPECT_EQ(stats.at("num_trials"), 5);
  EXPECT_EQ(stats.at("hardware"), "NVIDIA H200");
  EXPECT_EQ(stats.at("device"), "cuda:0");
  EXPECT_DOUBLE_EQ(stats.at("median").get<double>(), 0.011);
}

TEST(KernelBenchBaselineTimes, EachProblemHasItsLowestPassedSamplesBaselineUnderItsFileName) {
  KernelBenchBaselineTimes times;
  const KernelBenchHardware where{"NVIDIA H200", "cuda:0"};
  Verdict slower = PassedVerdict();
  slower.timing = MakeTiming({10, 10, 10}, {40, 40, 40}, "torch eager");
  times.Add(1, "19_ReLU.py", 3, slower, where);
  times.Add(1, "19_ReLU.py", 1, PassedVerdict(), where);  // baseline {20, 22, 24, 20, 22}
  Verdict wrong = PassedVerdict();
  wrong.status = VerdictStatus::kIntegrityViolation;  // timed, but its baseline is not to be trusted
  wrong.timing = MakeTiming({1, 1, 1}, {99, 99, 99}, "torch eager");
  times.Add(1, "19_ReLU.py", 0, wrong, where);
  times.Add(1, "23_Softmax.py", 0, wrong, where);
  times.Add(2, "1_Conv2D_ReLU_BiasAdd.py", 0, slower, where);
  const nlohmann::json eager = times.Eager();
  const nlohmann::json& relu = eager.at("level1").at("19_ReLU.py");
  EXPECT_NEAR(relu.at("mean").get<double>(), 0.0216, 1e-12);
  EXPECT_DOUBLE_EQ(relu.at("min").get<double>(), 0.020);
  EXPECT_DOUBLE_EQ(relu.at("max").get<double>(), 0.024);
  EXPECT_EQ(relu.at("num_trials"), 5);
  EXPECT_EQ(relu.at("hardware"), "NVIDIA H200");
  EXPECT_FALSE(relu.contains("median")) << "KernelBench's record has get_timing_stats' fields only";
  // A problem none of whose samples passed still has its entry, KernelBench's "not timed".
  EXPECT_EQ(eager.at("level1").at("23_Softmax.py").at("mean"), -1.0);
  EXPECT_DOUBLE_EQ(eager.at("level2").at("1_Conv2D_ReLU_BiasAdd.py").at("mean").get<double>(), 0.040);
  EXPECT_TRUE(times.Compiled().empty()) << "no verdict timed torch.compile";
  Verdict compiled = PassedVerdict();
  compiled.extensions.second_timing = MakeTiming({10, 11, 12, 10, 11}, {5, 5, 6, 5, 6}, "torch.compile");
  times.Add(1, "19_ReLU.py", 0, compiled, where);
  EXPECT_NEAR(times.Compiled().at("level1").at("19_ReLU.py").at("mean").get<double>(), 0.0054, 1e-12);
  // Once torch.compile was timed, every judged problem is in its file too, -1 where it was not.
  EXPECT_EQ(times.Compiled().at("level1").at("23_Softmax.py").at("mean"), -1.0);
  EXPECT_EQ(times.Compiled().at("level2").at("1_Conv2D_ReLU_BiasAdd.py").at("mean"), -1.0);
}

TEST(KernelBenchProblemFile, IsTheFileTheImportNamedInTheTasksFolder) {
  ScopedTempDir task("kb-task");
  ASSERT_TRUE(task.ok());
  EXPECT_FALSE(KernelBenchProblemFile(task.path()).ok());
  ASSERT_TRUE(WriteFileAtomic(task.path() / "kernelbench.json",
                              R"({"file": "/data/KernelBench/level1/19_ReLU.py", "level": 1})").ok());
  auto file = KernelBenchProblemFile(task.path());
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_EQ(*file, "19_ReLU.py");
}

}  // namespace
}  // namespace ksmith
