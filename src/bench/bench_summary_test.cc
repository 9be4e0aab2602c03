#include "bench/bench_summary.h"

#include <gtest/gtest.h>

#include "bench/suite.h"

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
  EXPECT_NE(markdown.find("| softmax | 2 | 50% | 50% | 3.00x |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("error: optimize ended with exit code 3"), std::string::npos);
  EXPECT_NE(markdown.find("fast_1 33%"), std::string::npos) << markdown;
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

}  // namespace
}  // namespace ksmith
