#include "bench/bench_summary.h"

#include <gtest/gtest.h>

#include "bench/suite.h"
#include "core/files.h"

namespace ksmith {
namespace {

nlohmann::json PassedVerdict(double speedup, double low, double roofline) {
  return {{"status", "passed"},
          {"stages", {{{"name", "build"}, {"outcome", "ok"}}}},
          {"speedup", speedup},
          {"speedup_ci95", {low, speedup + 0.1}},
          {"roofline_fraction", roofline},
          {"total_s", 1.5}};
}

TEST(SampleFromVerdict, ReadsStatusBuildSpeedupIntervalAndRoofline) {
  const SampleOutcome passed = SampleFromVerdict(PassedVerdict(2.0, 1.9, 0.4));
  EXPECT_TRUE(passed.compiled);
  EXPECT_TRUE(passed.correct);
  EXPECT_EQ(passed.speedup, 2.0);
  EXPECT_EQ(passed.speedup_low, 1.9);
  EXPECT_EQ(passed.speedup_high, 2.1);
  EXPECT_EQ(passed.roofline_fraction, 0.4);
  const SampleOutcome compile_error = SampleFromVerdict(
      {{"status", "compile_error"}, {"stages", {{{"name", "audit"}, {"outcome", "ok"}}, {{"name", "build"}, {"outcome", "failed"}}}}});
  EXPECT_FALSE(compile_error.compiled);
  EXPECT_FALSE(compile_error.correct);
  const SampleOutcome wrong =
      SampleFromVerdict({{"status", "wrong_output"}, {"stages", {{{"name", "build"}, {"outcome", "ok"}}}}});
  EXPECT_TRUE(wrong.compiled);
  EXPECT_FALSE(wrong.correct);
  EXPECT_FALSE(wrong.speedup.has_value());
}

TEST(SampleFromVerdict, ASpeedupTimedBesideOtherWorkIsCountedNeverCompared) {
  nlohmann::json verdict = PassedVerdict(2.0, 1.9, 0.4);
  verdict["timing"] = {{"alone", false}};
  const SampleOutcome beside = SampleFromVerdict(verdict);
  EXPECT_TRUE(beside.correct);
  EXPECT_FALSE(beside.timed_alone);
  EXPECT_FALSE(beside.speedup.has_value());
  EXPECT_FALSE(beside.roofline_fraction.has_value());
  // Given a task whose faster candidate was timed beside other work, then its best speedup is
  // the other's, and the bench counts the one it left out.
  BenchTaskResult task{"softmax", "r1", "", {beside, SampleFromVerdict(PassedVerdict(1.2, 1.1, 0.3))}, 0, 0, 1, 2};
  const nlohmann::json bench = BenchJson({"mini", "cpu", "tune", 2}, {task});
  EXPECT_EQ(bench["tasks"][0]["best_speedup"], 1.2);
  EXPECT_EQ(bench["tasks"][0]["timed_not_alone"], 1);
  EXPECT_EQ(bench["summary"]["timed_not_alone"], 1);
  EXPECT_NE(BenchMarkdown(bench).find("1 correct candidate was timed beside other work"), std::string::npos);
}

TEST(BenchJson, SummarizesTasksIncludingOneThatCouldNotRun) {
  BenchTaskResult fast{"softmax", "r1", "", {SampleFromVerdict(PassedVerdict(3.0, 2.8, 0.5)), SampleOutcome{}}, 100, 0.5, 3, 4};
  BenchTaskResult tie{"relu", "r2", "", {SampleFromVerdict(PassedVerdict(1.01, 0.95, 0.9))}, 0, 0, 1.5, 2};
  BenchTaskResult broken{"gelu", "", "optimize ended with exit code 3", {}, 0, 0, 0, 0};
  const nlohmann::json bench = BenchJson({"mini", "cpu", "tune", 2}, {fast, tie, broken});
  ASSERT_EQ(bench["tasks"].size(), 3u);
  EXPECT_EQ(bench["tasks"][0]["pass_at_k"], nlohmann::json({0.5, 1.0}));
  EXPECT_EQ(bench["tasks"][2]["error"], "optimize ended with exit code 3");
  const auto& summary = bench["summary"];
  EXPECT_EQ(summary["candidates"], 3);
  EXPECT_EQ(summary["tasks"], 3);
  // pass@1 averages 0.5, 1 and 0 (the broken task counts as failed).
  EXPECT_NEAR(summary["pass_at_1"].get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(summary["fast_1"].get<double>(), 1.0 / 3.0, 1e-12);  // the tie is not a win
  EXPECT_NEAR(summary["fast_p"]["0"].get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(summary["geomean_speedup"].get<double>(), std::sqrt(3.0 * 1.01), 1e-9);
  EXPECT_EQ(summary["geomean_tasks"], 2);
  EXPECT_EQ(summary["tokens"], 100);
  const std::string markdown = BenchMarkdown(bench);
  EXPECT_NE(markdown.find("| softmax | 2 | 50% | 50% | 3.00x [2.80, 3.10] | 1.50x |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("error: optimize ended with exit code 3"), std::string::npos);
  EXPECT_NE(markdown.find("fast_1 33%"), std::string::npos) << markdown;
}

TEST(BenchJson, RecordsWhatACompareReads) {
  // Given a bench's settings and one timed task, bench.json should hold the per-task figures and
  // the settings that `ksmith bench compare` shows and checks.
  BenchTaskResult fast{"softmax", "r1", "", {SampleFromVerdict(PassedVerdict(3.0, 2.8, 0.5)), SampleOutcome{}}, 100, 0.5, 3, 4};
  BenchSettings settings{"mini", "cuda", "sample", 2, 3, {{"cpu", "Some CPU"}, {"cores", 16}, {"gpu", "NVIDIA H200"}}};
  const nlohmann::json bench = BenchJson(settings, {fast}, 12.5);
  EXPECT_EQ(bench["settings"]["jobs"], 3);
  EXPECT_EQ(bench["settings"]["machine"]["gpu"], "NVIDIA H200");
  EXPECT_TRUE(bench["settings"].contains("ksmith_version"));
  const auto& task = bench["tasks"][0];
  EXPECT_EQ(task["pass_at_1"], 0.5);
  EXPECT_EQ(task["best_speedup_ci95"], nlohmann::json({2.8, 3.1}));
  EXPECT_EQ(task["fast_1"], true);
  EXPECT_EQ(task["efficiency_at_1"], 0.25);
  EXPECT_EQ(bench["summary"]["elapsed_s"], 12.5);
  const std::string markdown = BenchMarkdown(bench);
  EXPECT_NE(markdown.find("- machine: Some CPU, 16 cores, NVIDIA H200"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("12.5 s elapsed (3 tasks at once)"), std::string::npos) << markdown;
  // Without an elapsed time (a summary recomputed from a store) there is none in the JSON.
  EXPECT_FALSE(BenchJson(settings, {fast})["summary"].contains("elapsed_s"));
}

TEST(ResolveSuite, AllCategoriesListsAndUnknownNames) {
  TaskRegistry registry(std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks");
  auto all = ResolveSuite("all", registry);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_GE(all->size(), 9u);
  auto normalization = ResolveSuite("normalization", registry);
  ASSERT_TRUE(normalization.ok());
  EXPECT_NE(std::find(normalization->begin(), normalization->end(), "softmax"), normalization->end());
  EXPECT_EQ(std::find(normalization->begin(), normalization->end(), "vector_add"), normalization->end());
  auto listed = ResolveSuite("vector_add, relu", registry);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<std::string>{"vector_add", "relu"}));
  auto folder = ResolveSuite((registry.root() / "elementwise").string(), registry);
  ASSERT_TRUE(folder.ok());
  EXPECT_GE(folder->size(), 3u);
  auto typo = ResolveSuite("vectr_add", registry);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("vector_add"), std::string::npos) << typo.error().message;
}

TEST(ResolveSuite, SelectsTasksByLevel) {
  // Given a tasks folder with tasks at levels 1 and 2 (one by default), level<n> selects by the
  // `level` field, a broken task included; a level no task has names the levels there are; any
  // other name is still looked up as a task.
  ScopedTempDir root("ksmith-suite-test");
  ASSERT_TRUE(root.ok());
  const std::filesystem::path builtin = std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise";
  std::filesystem::create_directories(root.path() / "elementwise");
  std::filesystem::copy(builtin / "relu", root.path() / "elementwise" / "relu", std::filesystem::copy_options::recursive);
  std::filesystem::copy(builtin / "gelu", root.path() / "elementwise" / "gelu", std::filesystem::copy_options::recursive);
  std::filesystem::copy(builtin / "vector_add", root.path() / "elementwise" / "vector_add",
                        std::filesystem::copy_options::recursive);
  const auto toml = root.path() / "elementwise" / "gelu" / "task.toml";
  auto text = ReadFile(toml);
  ASSERT_TRUE(text.ok());
  const size_t level = text->find("level = 1");
  ASSERT_NE(level, std::string::npos);
  ASSERT_TRUE(WriteFileAtomic(toml, text->replace(level, 9, "level = 2")).ok());
  // A task with a fault other than its task.toml's syntax is still selected; its run reports it.
  std::filesystem::remove(root.path() / "elementwise" / "relu" / "seed_cpu.cc");
  TaskRegistry registry(root.path());
  auto level1 = ResolveSuite("level1", registry);
  ASSERT_TRUE(level1.ok()) << level1.error().message;
  EXPECT_EQ(*level1, (std::vector<std::string>{"relu", "vector_add"}));
  auto level2 = ResolveSuite("level2", registry);
  ASSERT_TRUE(level2.ok()) << level2.error().message;
  EXPECT_EQ(*level2, (std::vector<std::string>{"gelu"}));
  auto level3 = ResolveSuite("level3", registry);
  ASSERT_FALSE(level3.ok());
  EXPECT_EQ(level3.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(level3.error().message.find("level1, level2"), std::string::npos) << level3.error().message;
  auto unknown = ResolveSuite("levelx", registry);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("levelx"), std::string::npos) << unknown.error().message;
}

TEST(ResolveSuite, ImportedTasksJoinByCategoryOrNameButNotAllOrALevel) {
  // Given the built-in root and a second root holding an imported task (category "kernelbench",
  // level 1), "all" and "level1" stay the built-in tasks; the category and the name select it.
  ScopedTempDir built_in("ksmith-suite-built-in"), imported("ksmith-suite-imported");
  ASSERT_TRUE(built_in.ok() && imported.ok());
  const std::filesystem::path source = std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise";
  std::filesystem::create_directories(built_in.path() / "elementwise");
  std::filesystem::copy(source / "relu", built_in.path() / "elementwise" / "relu", std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(imported.path() / "kernelbench");
  const auto kb = imported.path() / "kernelbench" / "kb_l1_019_relu";
  std::filesystem::copy(source / "relu", kb, std::filesystem::copy_options::recursive);
  auto text = ReadFile(kb / "task.toml");
  ASSERT_TRUE(text.ok());
  std::string toml = *text;
  toml.replace(toml.find("name = \"relu\""), 13, "name = \"kb_l1_019_relu\"");
  toml.replace(toml.find("category = \"elementwise\""), 24, "category = \"kernelbench\"");
  ASSERT_TRUE(WriteFileAtomic(kb / "task.toml", toml).ok());
  TaskRegistry registry(std::vector<std::filesystem::path>{built_in.path(), imported.path()});
  for (const char* suite : {"all", "level1"}) {
    auto names = ResolveSuite(suite, registry);
    ASSERT_TRUE(names.ok()) << names.error().message;
    EXPECT_EQ(*names, (std::vector<std::string>{"relu"})) << suite;
  }
  for (const char* suite : {"kernelbench", "kb_l1_019_relu"}) {
    auto names = ResolveSuite(suite, registry);
    ASSERT_TRUE(names.ok()) << names.error().message;
    EXPECT_EQ(*names, (std::vector<std::string>{"kb_l1_019_relu"})) << suite;
  }
}

}  // namespace
}  // namespace ksmith
