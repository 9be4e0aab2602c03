// `ksmith bench` end to end on the CPU with the tune strategy: the JSON, the report files, and
// each task's run in the store; two tasks run at once; `ksmith bench compare` on two real results.
#include "cli_runner.h"

namespace ksmith::it {
namespace {

TEST(BenchCli, RunsASmallSuiteAndWritesTheReport) {
  const fs::path directory = fs::temp_directory_path() / ("ksmith-bench-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  fs::create_directories(directory);  // a --db in a missing folder is refused
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
  // A speedup is compared only where its timing held the cores alone; on a busy machine (tests
  // running beside this one) the bench counts the candidates it left out instead.
  int64_t compared = 0;
  for (const auto& task : bench["tasks"]) {
    compared += task["best_speedup"].is_number() ? 1 : 0;
    EXPECT_TRUE(task["best_speedup"].is_number() || task["timed_not_alone"].get<int64_t>() > 0) << task.dump();
  }
  EXPECT_EQ(summary["geomean_tasks"], compared);
  EXPECT_EQ(summary["geomean_speedup"].is_number(), compared > 0) << summary.dump();
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
  // The strategy the runs used, not "default"; each task's best kernel linked from the report.
  EXPECT_EQ(bench["settings"]["strategy"], "tune") << bench["settings"].dump();
  EXPECT_NE(text.str().find(", tune strategy,"), std::string::npos) << text.str();
  for (const auto& task : bench["tasks"]) {
    const std::string kernel = task.value("best_kernel", std::string());
    EXPECT_TRUE(fs::exists(directory / "report" / kernel)) << kernel;
    EXPECT_NE(text.str().find("](" + kernel + ")"), std::string::npos) << text.str();
  }
  EXPECT_TRUE(fs::exists(directory / "report" / "bench.json"));
  EXPECT_TRUE(fs::exists(directory / "report" / "report.html"));
  if (!::testing::Test::HasFailure()) fs::remove_all(directory);
}

// Two benches of the same two tasks, the second with --jobs 2, then compare on their outputs.
TEST(BenchCli, RunsTasksAtOnceInNameOrderAndComparesTwoResults) {
  TempDir directory("bench-compare");
  ASSERT_FALSE(directory.path().empty());
  const std::string db = (directory.path() / "runs.db").string();
  auto bench = [&](const std::string& report, const std::string& jobs) {
    return RunKsmith({"bench", "--suite", "vector_add,relu", "--samples", "2", "--timing-budget", "0.1", "--seeds", "1",
                      "--db", db, "--report", (directory.path() / report).string(), "--jobs", jobs, "--json"},
                     {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="});
  };
  const CliResult first = bench("a", "1");
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  const CliResult second = bench("b", "2");
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  // Listed as vector_add,relu; reported by name, with one progress line per task.
  const auto parallel = second.Json();
  ASSERT_EQ(parallel["tasks"].size(), 2u) << second.Describe();
  EXPECT_EQ(parallel["tasks"][0]["task"], "relu");
  EXPECT_EQ(parallel["tasks"][1]["task"], "vector_add");
  EXPECT_EQ(parallel["settings"]["jobs"], 2);
  EXPECT_TRUE(parallel["summary"]["elapsed_s"].is_number());
  EXPECT_NE(second.err.find("[1/2] "), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("[2/2] "), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("[3/2] "), std::string::npos) << second.err;
  for (const auto& task : parallel["tasks"]) EXPECT_EQ(task["error"], "") << task.dump();

  // A folder and a file are both accepted.
  const CliResult compare = RunKsmith({"bench", "compare", (directory.path() / "a").string(),
                                       (directory.path() / "b" / "bench.json").string(), "--json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.Describe();
  const auto comparison = compare.Json();
  ASSERT_TRUE(comparison.is_object()) << compare.Describe();
  ASSERT_EQ(comparison["tasks"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& task = comparison["tasks"][i];
    EXPECT_EQ(task["name"], i == 0 ? "relu" : "vector_add");
    // Both sides pass (every seed setting is correct), so the change is about the speedup only,
    // where both have one: a side whose every timing shared the cores has none to compare.
    bool both_timed = true;
    for (const char* side : {"a", "b"}) {
      EXPECT_TRUE(task[side]["passing"].get<bool>()) << task.dump();
      EXPECT_EQ(task[side]["candidates"], 2);
      if (task[side]["best_speedup"].is_number()) {
        EXPECT_EQ(task[side]["best_speedup_ci95"].size(), 2u) << task.dump();
      } else {
        both_timed = false;
        EXPECT_GT(task[side]["timed_not_alone"].get<int64_t>(), 0) << task.dump();
      }
    }
    if (both_timed) {
      const std::string change = task["change"];
      EXPECT_TRUE(change == "improved" || change == "regressed" || change == "within_noise") << task.dump();
    }
    EXPECT_EQ(task["speedup_ratio"].is_number(), both_timed) << task.dump();
  }
  const auto& summary = comparison["summary"];
  EXPECT_TRUE(summary["same_tasks"].get<bool>());
  EXPECT_EQ(summary["pass_at_1"]["delta"], 0.0);
  EXPECT_TRUE(summary["geomean_speedup"].is_object()) << summary.dump();
  EXPECT_TRUE(summary["elapsed_s"]["delta"].is_number()) << summary.dump();
  EXPECT_EQ(summary["changes"]["added"], 0);
  // Both benches timed through one evaluation service: tasks at once took turns to time.
  EXPECT_EQ(summary["notes"].dump().find("tasks at once"), std::string::npos) << summary.dump();
  EXPECT_TRUE(parallel["settings"]["timing_exclusive"].get<bool>());

  const CliResult table = RunKsmith({"bench", "compare", (directory.path() / "a").string(), (directory.path() / "b").string()});
  ASSERT_EQ(table.exit_code, 0) << table.Describe();
  EXPECT_NE(table.out.find("vector_add"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\nsummary: pass@1 100% -> 100% (+0 pts)"), std::string::npos) << table.out;

  // The same result claimed for another backend is refused, naming both, unless --allow-mixed.
  auto relabeled = nlohmann::json::parse(Slurp(directory.path() / "b" / "bench.json"));
  relabeled["settings"]["backend"] = "cuda";
  const fs::path cuda = directory.path() / "cuda.json";
  std::ofstream(cuda) << relabeled.dump();
  const CliResult mixed = RunKsmith({"bench", "compare", (directory.path() / "a").string(), cuda.string()});
  EXPECT_EQ(mixed.exit_code, 2) << mixed.Describe();
  EXPECT_NE(mixed.err.find("the cpu backend"), std::string::npos) << mixed.err;
  EXPECT_NE(mixed.err.find("the cuda backend"), std::string::npos) << mixed.err;
  const CliResult allowed =
      RunKsmith({"bench", "compare", (directory.path() / "a").string(), cuda.string(), "--allow-mixed", "--json"});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.Describe();

  // A file that is not a bench result: exit 2, naming it and what is wrong.
  const fs::path broken = directory.path() / "broken.json";
  std::ofstream(broken) << "{\"tasks\": ";
  const CliResult unreadable = RunKsmith({"bench", "compare", broken.string(), cuda.string()});
  EXPECT_EQ(unreadable.exit_code, 2) << unreadable.Describe();
  EXPECT_NE(unreadable.err.find("broken.json: not valid JSON"), std::string::npos) << unreadable.err;
}

TEST(BenchCli, AnUnknownSuiteIsAUsageError) {
  const CliResult run = RunKsmith({"bench", "--suite", "no_such_task"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("no_such_task"), std::string::npos) << run.err;
  // One word that names nothing is taken for a suite, and the message lists the suites.
  EXPECT_NE(run.err.find("unknown suite 'no_such_task': give all, level1, level2"), std::string::npos) << run.err;
  // A word close to a task's name gets that task suggested; a list names its bad entry.
  const CliResult typo = RunKsmith({"bench", "--suite", "sofmax"});
  EXPECT_EQ(typo.exit_code, 2) << typo.Describe();
  EXPECT_NE(typo.err.find("softmax"), std::string::npos) << typo.err;
  const CliResult listed = RunKsmith({"bench", "--suite", "relu,no_such_task"});
  EXPECT_EQ(listed.exit_code, 2) << listed.Describe();
  EXPECT_NE(listed.err.find("unknown task 'no_such_task'"), std::string::npos) << listed.err;
  // A level no task has names the levels there are.
  const CliResult level = RunKsmith({"bench", "--suite", "level9"});
  EXPECT_EQ(level.exit_code, 2) << level.Describe();
  EXPECT_NE(level.err.find("no task is at level 9"), std::string::npos) << level.err;
}

// What can be checked is checked before anything runs, and a bench in which nothing could be
// evaluated exits non-zero: a typo'd setting failed every task with a usage error, after the
// service started, and the bench exited 0; a --report folder it could not write was found only
// after the whole run.
class BenchChecks : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }
  std::string Db() const { return (dir_.path() / "runs.db").string(); }
  // Runs ksmith in dir_ (where ksmith.toml, which every task's run reads, is dir_'s).
  CliResult RunHere(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    const fs::path previous = fs::current_path();
    fs::current_path(dir_.path());
    const CliResult run = RunKsmith(args, env);
    fs::current_path(previous);
    return run;
  }
  TempDir dir_{"bench-checks"};
};

TEST_F(BenchChecks, ASettingThatFailsEveryTaskIsRefusedOnceBeforeAnythingRuns) {
  std::ofstream(dir_.path() / "ksmith.toml") << "[llm]\nmodle = \"gpt-x\"\n";
  const CliResult run = RunHere({"bench", "--suite", "vector_add,relu", "--db", Db(), "--report",
                                 (dir_.path() / "report").string(), "--json"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("ksmith: error: none of the suite's 2 tasks can run, so nothing was run: relu: ksmith.toml: "
                         "[llm] has no key 'modle'"),
            std::string::npos)
      << run.Describe();
  EXPECT_EQ(run.err.find("vector_add cannot run"), std::string::npos) << "the same reason twice\n" << run.Describe();
  EXPECT_TRUE(PrintedUsageErrorJson(run)) << run.Describe();
  EXPECT_FALSE(fs::exists(dir_.path() / "report")) << "a report of nothing was written";
  EXPECT_EQ(RunKsmith({"runs", "list", "--db", Db()}).out, "no runs yet\n");
  // A provider whose key is missing: the same, with the provider's own words.
  fs::remove(dir_.path() / "ksmith.toml");
  const CliResult keyless = RunHere({"bench", "--suite", "vector_add", "--provider", "openai", "--model", "m",
                                     "--db", Db(), "--report", (dir_.path() / "report").string()},
                                    {"OPENAI_API_KEY="});
  EXPECT_EQ(keyless.exit_code, 2) << keyless.Describe();
  EXPECT_NE(keyless.err.find("none of the suite's 1 task can run, so nothing was run: OPENAI_API_KEY is not set"),
            std::string::npos)
      << keyless.Describe();
}

TEST_F(BenchChecks, RunsThatStartButEvaluateNothingExitNonZero) {
  // A dead server: each run starts, every model call fails, no candidate gets a verdict.
  std::ofstream(dir_.path() / "ksmith.toml") << "[llm]\nrequest_attempts = 1\n";
  const CliResult run = RunHere({"bench", "--suite", "vector_add", "--provider", "openai", "--base-url",
                                 "http://127.0.0.1:9/v1", "--model", "m", "--samples", "3", "--db", Db(), "--report",
                                 (dir_.path() / "report").string()},
                                {"OPENAI_API_KEY="});
  EXPECT_EQ(run.exit_code, 3) << run.Describe();
  EXPECT_NE(run.err.find("ksmith: error: nothing was evaluated: no candidate of any task got a verdict"),
            std::string::npos)
      << run.Describe();
  EXPECT_TRUE(fs::exists(dir_.path() / "report" / "report.md")) << "the report says what happened";
}

TEST_F(BenchChecks, AnOutputFolderThatCannotBeWrittenIsFoundBeforeTheRun) {
  const fs::path file = dir_.path() / "a-file";
  std::ofstream(file) << "not a folder\n";
  const CliResult bench = RunKsmith({"bench", "--suite", "vector_add", "--db", Db(), "--report",
                                     (file / "report").string()});
  EXPECT_EQ(bench.exit_code, 2) << bench.Describe();
  EXPECT_NE(bench.err.find("ksmith: error: --report " + (file / "report").string() + ": cannot write there (" +
                           file.string() + ": not a folder); name a folder you can write"),
            std::string::npos)
      << bench.Describe();
  const CliResult optimize = RunKsmith({"optimize", "--task", "vector_add", "--db", Db(), "-o", (file / "out").string()});
  EXPECT_EQ(optimize.exit_code, 2) << optimize.Describe();
  EXPECT_NE(optimize.err.find("ksmith: error: --output-dir " + (file / "out").string() + ": cannot write there (" +
                              file.string() + ": not a folder)"),
            std::string::npos)
      << optimize.Describe();
  // Nothing ran: no run is recorded.
  EXPECT_EQ(RunKsmith({"runs", "list", "--db", Db()}).out, "no runs yet\n");
  // eval's --output likewise, before anything is built.
  const CliResult eval = RunKsmith({"eval", "--task", "vector_add", "-o", (file / "verdict.json").string(),
                                    (HonestDir() / "vector_add_fast.cpp").string()});
  EXPECT_EQ(eval.exit_code, 2) << eval.Describe();
  EXPECT_NE(eval.err.find("ksmith: error: --output " + (file / "verdict.json").string() + ": cannot write it ("),
            std::string::npos)
      << eval.Describe();
  EXPECT_TRUE(eval.out.empty()) << "a verdict was printed: it ran\n" << eval.Describe();
}

}  // namespace
}  // namespace ksmith::it
