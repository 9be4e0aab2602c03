// The command line's parsing and exit codes, in-process. Whole evaluations are left to the
// integration tests; these stop before any compiler or worker runs.
#include "cli/app.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "store/database.h"
#include "store/run_store.h"

namespace ksmith {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CliRun RunKsmith(std::initializer_list<const char*> arguments) {
  std::vector<std::string> storage = {"ksmith"};
  storage.insert(storage.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& argument : storage) argv.push_back(argument.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun run;
  run.exit_code = RunCli(static_cast<int>(storage.size()), argv.data());
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

std::string Describe(const CliRun& run) {
  return "exit " + std::to_string(run.exit_code) + "\nstdout:\n" + run.out + "\nstderr:\n" + run.err;
}

// The built-in tasks, whatever the environment says.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* tasks = std::getenv("KSMITH_TASKS_DIR")) saved_ = tasks;
    ::unsetenv("KSMITH_TASKS_DIR");
  }
  void TearDown() override {
    if (saved_) ::setenv("KSMITH_TASKS_DIR", saved_->c_str(), 1);
  }
  std::optional<std::string> saved_;
};

TEST_F(CliTest, NoArgumentsIsAUsageError) {
  const CliRun run = RunKsmith({});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_FALSE((run.out + run.err).empty());
}

TEST_F(CliTest, UnknownSubcommandIsAUsageError) {
  const CliRun run = RunKsmith({"optimise-everything"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
}

TEST_F(CliTest, HelpListsTheSubcommandsAndSucceeds) {
  const CliRun run = RunKsmith({"--help"});
  EXPECT_EQ(run.exit_code, kExitOk) << Describe(run);
  for (const char* command : {"eval", "tasks", "doctor"}) {
    EXPECT_NE(run.out.find(command), std::string::npos) << Describe(run);
  }
}

TEST_F(CliTest, VersionPrintsTheVersion) {
  const CliRun run = RunKsmith({"--version"});
  EXPECT_EQ(run.exit_code, kExitOk) << Describe(run);
  EXPECT_NE(run.out.find(KSMITH_VERSION), std::string::npos) << Describe(run);
}

TEST_F(CliTest, TasksJsonListsTheBuiltInTasks) {
  const CliRun run = RunKsmith({"tasks", "--json"});
  ASSERT_EQ(run.exit_code, kExitOk) << Describe(run);
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << run.out;
  EXPECT_GE(json.size(), 9u);
  for (const auto& task : json) EXPECT_FALSE(task.contains("error")) << task.dump();
}

TEST_F(CliTest, TasksShowJsonDescribesOneTaskWithoutItsHiddenShapes) {
  const CliRun run = RunKsmith({"tasks", "show", "vector_add", "--json"});
  ASSERT_EQ(run.exit_code, kExitOk) << Describe(run);
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(json.is_object()) << run.out;
  EXPECT_EQ(json.value("name", std::string()), "vector_add");
  EXPECT_EQ(json.value("signature", std::string()),
            "extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n)");
  EXPECT_FALSE(json.contains("eval_shapes"));
  EXPECT_GT(json.value("eval_shape_count", 0), 0);
  EXPECT_NE(json.value("cuda_signature", std::string()).find("cudaStream_t stream)"), std::string::npos);
  EXPECT_GT(json.value("cuda_eval_shape_count", 0), 0);
}

TEST_F(CliTest, TasksShowOfAnUnknownTaskIsAUsageErrorWithASuggestion) {
  const CliRun run = RunKsmith({"tasks", "show", "softmx"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("ksmith: error:"), std::string::npos) << Describe(run);
  EXPECT_NE(run.err.find("softmax"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, EvalNeedsATaskAndACandidate) {
  EXPECT_EQ(RunKsmith({"eval"}).exit_code, kExitUsage);
  EXPECT_EQ(RunKsmith({"eval", "--task", "vector_add"}).exit_code, kExitUsage);
  EXPECT_EQ(RunKsmith({"eval", "kernel.cpp"}).exit_code, kExitUsage);
}

TEST_F(CliTest, EvalOnCudaOfAMissingCandidateIsAUsageError) {
  const CliRun run = RunKsmith({"eval", "--task", "vector_add", "--backend", "cuda", "/nonexistent/kernel.cu"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("/nonexistent/kernel.cu"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, EvalOnAnUnknownBackendIsRejectedByTheParser) {
  EXPECT_EQ(RunKsmith({"eval", "--task", "vector_add", "--backend", "tpu", "kernel.cpp"}).exit_code, kExitUsage);
}

TEST_F(CliTest, EvalOfAnUnknownTaskIsAUsageError) {
  const CliRun run = RunKsmith({"eval", "--task", "vectr_add", "kernel.cpp"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("vector_add"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, EvalOfAMissingCandidateIsAUsageError) {
  const CliRun run = RunKsmith({"eval", "--task", "vector_add", "/nonexistent/ksmith/kernel.cpp"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("/nonexistent/ksmith/kernel.cpp"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, EvalOfADirectoryIsAUsageError) {
  ScopedTempDir folder("ksmith-cli");
  const std::string path = folder.path().string();
  const CliRun run = RunKsmith({"eval", "--task", "vector_add", path.c_str()});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("directory"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, EvalRejectsOutOfRangeOptions) {
  EXPECT_EQ(RunKsmith({"eval", "-t", "vector_add", "--seeds", "0", "kernel.cpp"}).exit_code, kExitUsage);
  EXPECT_EQ(RunKsmith({"eval", "-t", "vector_add", "--timeout-ms", "5", "kernel.cpp"}).exit_code, kExitUsage);
  EXPECT_EQ(RunKsmith({"eval", "-t", "vector_add", "--threads", "-1", "kernel.cpp"}).exit_code, kExitUsage);
}

// Parse errors in the one style: `ksmith: error: <what>, <where>; <what to do>`, with the
// nearest flag or command (issue 13).
TEST_F(CliTest, AMisspelledFlagIsNamedWithTheNearestFlag) {
  const CliRun run = RunKsmith({"optimize", "--task", "softmax", "--max-candidate", "3"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_EQ(run.err.rfind("ksmith: error: unknown flag '--max-candidate' for `ksmith optimize`; did you mean "
                          "--max-candidates?", 0), 0u) << Describe(run);
  EXPECT_NE(run.err.find("See `ksmith optimize --help` for its flags"), std::string::npos) << Describe(run);
  EXPECT_EQ(run.err.find("The following arguments"), std::string::npos) << "CLI11's raw words: " << Describe(run);
}

TEST_F(CliTest, AnUnknownCommandIsNamedWithTheNearestCommand) {
  const CliRun run = RunKsmith({"evaluate", "kernel.cu"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_EQ(run.err.rfind("ksmith: error: unknown command 'evaluate' for `ksmith`; did you mean `ksmith eval`?", 0), 0u)
      << Describe(run);
  EXPECT_EQ(run.err.find("A subcommand is required"), std::string::npos) << Describe(run);
  const CliRun nested = RunKsmith({"runs", "shw", "3"});
  EXPECT_EQ(nested.err.rfind("ksmith: error: unknown command 'shw' for `ksmith runs`; did you mean `ksmith runs show`?", 0),
            0u) << Describe(nested);
}

TEST_F(CliTest, NoCommandListsTheCommands) {
  const CliRun run = RunKsmith({});
  EXPECT_NE(run.err.find("ksmith: error: `ksmith` needs a command; run `ksmith --help`"), std::string::npos)
      << Describe(run);
  EXPECT_NE(run.err.find("optimize"), std::string::npos) << Describe(run);
}

TEST_F(CliTest, AValueOutOfRangeSaysWhichCommandAndWhereToLook) {
  const CliRun run = RunKsmith({"eval", "-t", "vector_add", "--seeds", "0", "kernel.cpp"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_EQ(run.err.rfind("ksmith: error: --seeds: must be an integer from 1 to 100, got 0", 0), 0u) << Describe(run);
  EXPECT_NE(run.err.find(", in `ksmith eval`; run `ksmith eval --help`"), std::string::npos) << Describe(run);
}

// With --json a failed command says so on stdout too, as one object (README, "Exit codes and
// errors"): usage errors printed nothing there, so a script saw an empty document.
nlohmann::json ErrorObject(const CliRun& run) {
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  if (!json.is_object() || json.size() != 1 || !json.contains("error")) return nullptr;
  return json["error"];
}

TEST_F(CliTest, UnderJsonAUsageErrorIsAnErrorObjectOnStdout) {
  const CliRun run = RunKsmith({"eval", "--json", "--task", "vectr_add", "kernel.cpp"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  const auto error = ErrorObject(run);
  ASSERT_TRUE(error.is_object()) << Describe(run);
  EXPECT_EQ(error.value("kind", std::string()), "usage");
  EXPECT_EQ(error.value("exit_code", 0), kExitUsage);
  EXPECT_NE(error.value("message", std::string()).find("unknown task 'vectr_add'"), std::string::npos) << Describe(run);
  // stderr keeps the line a person reads.
  EXPECT_NE(run.err.find("ksmith: error: unknown task 'vectr_add'"), std::string::npos) << Describe(run);
  // Without --json, stdout stays empty.
  EXPECT_TRUE(RunKsmith({"eval", "--task", "vectr_add", "kernel.cpp"}).out.empty());
}

TEST_F(CliTest, UnderJsonAParseErrorOfEveryCommandIsAnErrorObject) {
  // One per command that takes --json: CLI11's own errors take the same path as the commands'.
  for (const auto& args : std::vector<std::vector<const char*>>{
           {"eval", "--json", "-t", "vector_add", "--seeds", "0", "kernel.cpp"},
           {"optimize", "--json", "--max-candidate", "3"},
           {"bench", "--json", "--samples", "0"},
           {"bench", "compare", "--json", "a"},
           {"runs", "show", "--json"},
           {"tasks", "show", "--json", "--nope"},
           {"doctor", "--json", "--nope"},
           {"import", "kernelbench", "--json"},
           {"kernelbench", "run", "--json"}}) {
    std::vector<std::string> storage = {"ksmith"};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& argument : storage) argv.push_back(argument.data());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    CliRun run;
    run.exit_code = RunCli(static_cast<int>(argv.size()), argv.data());
    run.out = ::testing::internal::GetCapturedStdout();
    run.err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(run.exit_code, kExitUsage) << args[0] << "\n" << Describe(run);
    const auto error = ErrorObject(run);
    ASSERT_TRUE(error.is_object()) << args[0] << "\n" << Describe(run);
    EXPECT_EQ(error.value("kind", std::string()), "usage") << Describe(run);
    // The same message as stderr's line, without its prefix.
    EXPECT_NE(run.err.find("ksmith: error: " + error.value("message", std::string())), std::string::npos)
        << Describe(run);
  }
}

TEST_F(CliTest, UnderJsonAMissingRunStoreIsAnErrorObject) {
  const CliRun run = RunKsmith({"runs", "list", "--json", "--db", "/nonexistent-ksmith-folder/runs.db"});
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  const auto error = ErrorObject(run);
  ASSERT_TRUE(error.is_object()) << Describe(run);
  EXPECT_NE(error.value("message", std::string()).find("/nonexistent-ksmith-folder"), std::string::npos)
      << Describe(run);
}

// eval read no settings file, though the README shows ksmith.toml's [eval] table: the same file,
// by the same rules as optimize, under the flags.
TEST_F(CliTest, EvalReadsKsmithTomlsEvalTableAndChecksItAsOptimizeDoes) {
  ScopedTempDir folder("ksmith-cli-config");
  std::ofstream(folder.path() / "ksmith.toml") << "[eval]\nseeds = 0\n";
  const std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(folder.path());
  const CliRun run = RunKsmith({"eval", "--task", "vector_add", "kernel.cpp"});
  std::filesystem::current_path(previous);
  EXPECT_EQ(run.exit_code, kExitUsage) << Describe(run);
  EXPECT_NE(run.err.find("ksmith: error: ksmith.toml: [eval] seeds must be an integer from 1 to 100, got 0"),
            std::string::npos)
      << Describe(run);
  // --config names another file, as for optimize.
  const std::string config = (folder.path() / "other.toml").string();
  std::ofstream(config) << "[eval]\ntimeout_ms = 5\n";
  const CliRun other = RunKsmith({"eval", "--task", "vector_add", "--config", config.c_str(), "kernel.cpp"});
  EXPECT_EQ(other.exit_code, kExitUsage) << Describe(other);
  EXPECT_NE(other.err.find(config + ": [eval] timeout_ms must be an integer"), std::string::npos) << Describe(other);
}

TEST_F(CliTest, TaskColumnsStayApartForLongNames) {
  const CliRun run = RunKsmith({"tasks"});
  ASSERT_EQ(run.exit_code, kExitOk) << Describe(run);
  std::istringstream lines(run.out);
  std::string header;
  std::getline(lines, header);
  const size_t category = header.find("CATEGORY");
  ASSERT_NE(category, std::string::npos) << run.out;
  int checked = 0;
  for (std::string line; std::getline(lines, line);) {
    // Every row's category starts under CATEGORY, after at least two spaces.
    ASSERT_GT(line.size(), category) << line;
    EXPECT_NE(line[category], ' ') << line;
    EXPECT_EQ(line.substr(category - 2, 2), "  ") << line;
    if (line.rfind("cross_entropy_backward ", 0) == 0) {  // 22 characters
      EXPECT_EQ(line.substr(category, 8), "backward") << line;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 1) << run.out;
}

TEST_F(CliTest, ARunWhoseProcessWasKilledShowsAsInterruptedWithTheResumeCommand) {
  ScopedTempDir folder("ksmith-cli-runs");
  const std::string db = (folder.path() / "runs.db").string();
  {
    auto store = RunStore::Open(db);
    ASSERT_TRUE(store.ok()) << store.error().message;
    RunRecord run;
    run.id = "20261126-000000-abcdef";
    run.task = "vector_add";
    run.backend = "cpu";
    run.strategy = "tune";
    ASSERT_TRUE((*store)->CreateRun(run, "name = \"vector_add\"\n").ok());
  }
  {
    // As `kill -9` leaves it: still "running", owned by a process that is gone.
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    auto raw = Database::Open(db);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE((*raw)->Execute("UPDATE runs SET owner_pid = ?", {static_cast<int64_t>(child)}).ok());
  }
  const CliRun show = RunKsmith({"runs", "show", "20261126-000000-abcdef", "--db", db.c_str()});
  ASSERT_EQ(show.exit_code, kExitOk) << Describe(show);
  EXPECT_NE(show.out.find("interrupted (the process that ran it (pid "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("`ksmith optimize --resume 20261126-000000-abcdef` continues it"), std::string::npos)
      << show.out;
  const CliRun list = RunKsmith({"runs", "list", "--db", db.c_str()});
  EXPECT_NE(list.out.find("interrupted"), std::string::npos) << list.out;
  // `ksmith runs` alone lists too, as `ksmith tasks` does.
  const CliRun plain = RunKsmith({"runs", "--db", db.c_str()});
  EXPECT_EQ(plain.exit_code, kExitOk) << Describe(plain);
  EXPECT_NE(plain.out.find("20261126-000000-abcdef"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("interrupted"), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace ksmith
