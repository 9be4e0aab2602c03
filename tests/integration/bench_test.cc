// `ksmith bench` end to end on the CPU with the tune strategy: the JSON, the report files, and
// each task's run in the store.
#include "cli_runner.h"

namespace ksmith::it {
namespace {

TEST(BenchCli, RunsASmallSuiteAndWritesTheReport) {
  const fs::path directory = fs::temp_directory_path() / ("ksmith-bench-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  const std::string db = (directory / "runs.db").string();
  const CliResult run = RunKsmith({"bench", "--suite", "vector_add,relu", "--samples", "2", "--timing-budget", "0.1",
                                   "--seeds", "1", "--db", db, "--report", (directory / "report").string(), "--json"},
                                  {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto bench = run.Json();
  ASSERT_TRUE(bench.is_object()) << run.Describe();
  ASSERT_EQ(bench["tasks"].size(), 2u);
  const auto& summary = bench["summary"];
  EXPECT_EQ(summary["candidates"], 4);
  EXPECT_DOUBLE_EQ(summary["pass_at_1"].get<double>(), 1.0) << summary.dump();  // every seed setting is correct
  EXPECT_TRUE(summary.contains("fast_1"));
  EXPECT_TRUE(summary["geomean_speedup"].is_number());
  EXPECT_EQ(summary["geomean_tasks"], 2);
  for (const auto& task : bench["tasks"]) {
    EXPECT_EQ(task["samples"], 2);
    EXPECT_EQ(task["error"], "");
    const CliResult shown = RunKsmith({"runs", "show", task["run_id"], "--db", db, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.Describe();
    EXPECT_EQ(shown.Json()["strategy"], "tune");
    EXPECT_EQ(shown.Json()["task"], task["task"]);
  }
  std::ifstream report(directory / "report" / "report.md");
  std::stringstream text;
  text << report.rdbuf();
  EXPECT_NE(text.str().find("| vector_add | 2 |"), std::string::npos) << text.str();
  EXPECT_TRUE(fs::exists(directory / "report" / "bench.json"));
  EXPECT_TRUE(fs::exists(directory / "report" / "report.html"));
  if (!::testing::Test::HasFailure()) fs::remove_all(directory);
}

TEST(BenchCli, AnUnknownSuiteIsAUsageError) {
  const CliResult run = RunKsmith({"bench", "--suite", "no_such_task"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("no_such_task"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace ksmith::it
