// End-to-end runs of `ksmith optimize` against a scripted model server on loopback (the model is
// the only fake: HTTP, the evaluator, the sandbox and the SQLite store are real), then the store's
// rows, replay without the server, export, resume after SIGKILL, and the errors a user meets first.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli_runner.h"
#include "store/database.h"
#include "store/run_store.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {

constexpr const char* kKey = "sk-test-e2e-0123456789";

const std::string kCorrect = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";
const std::string kDoesNotCompile = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i] + undefined_thing;
}
)";
const std::string kWrong = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] - b[i];
}
)";

std::string Answer(const std::string& words, const std::string& code) { return words + "\n\n```cpp\n" + code + "```\n"; }

class Optimize : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("ksmith-optimize-" + std::to_string(::getpid()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(directory_);
  }

  std::string Db() const { return (directory_ / "runs.db").string(); }
  std::string Out(const std::string& name) const { return (directory_ / name).string(); }

  // The flags every run shares: a fast evaluation, its own store and output folder.
  std::vector<std::string> Flags(std::vector<std::string> extra, const std::string& out = "out") const {
    std::vector<std::string> args = {"optimize", "--task", "vector_add", "--db", Db(), "--output-dir", Out(out),
                                     "--timing-budget", "0.1", "--seeds", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::unique_ptr<testing::ScriptedLlmServer> Serve(const nlohmann::json& steps) {
    auto server = testing::ScriptedLlmServer::Start({{"steps", steps}});
    EXPECT_TRUE(server.ok()) << server.error().message;
    return server.ok() ? std::move(server.value()) : nullptr;
  }

  nlohmann::json ShowRun(const std::string& run_id) {
    const CliResult shown = RunKsmith({"runs", "show", run_id, "--db", Db(), "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.Describe();
    return shown.Json();
  }

  static std::vector<std::string> Statuses(const nlohmann::json& shown) {
    std::vector<std::string> statuses;
    for (const auto& candidate : shown["candidates_list"]) statuses.push_back(candidate["status"]);
    return statuses;
  }

  fs::path directory_;
};

TEST_F(Optimize, RefineAgainstAnOpenAiServerRecordsEveryAttemptAndFindsTheCorrectKernel) {
  auto server = Serve(nlohmann::json::array({
      {{"status", 429}, {"headers", {{"Retry-After", "1"}}}, {"content", "rate limited"}},
      {{"status", 500}, {"content", "overloaded"}},
      {{"content", Answer("First try.", kDoesNotCompile)}},
      {{"raw", "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
      {{"content", "I am sorry, I cannot write that kernel."}},
      {{"content", Answer("Fixed the typo.", kWrong)}},
      {{"content", Answer("Use addition, not subtraction.", kCorrect)}},
  }));
  ASSERT_NE(server, nullptr);
  std::ofstream(directory_ / "ksmith.toml") << "[llm]\nprice_input_per_million = 1.0\nprice_output_per_million = 2.0\n";
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", server->base_url(), "--model",
                                         "scripted", "--max-candidates", "5", "--config",
                                         (directory_ / "ksmith.toml").string()}),
                                  {std::string("OPENAI_API_KEY=") + kKey});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  ASSERT_TRUE(summary.is_object()) << run.Describe();
  EXPECT_EQ(summary["attempts"], 5);
  EXPECT_EQ(summary["candidates"], 3);  // the two answers without a kernel were never evaluated
  ASSERT_TRUE(summary["best"].is_object()) << run.Describe();
  EXPECT_EQ(summary["best"]["status"], "passed");
  EXPECT_EQ(summary["best"]["explanation"], "Use addition, not subtraction.");
  EXPECT_GT(summary["tokens"].get<int64_t>(), 0);
  EXPECT_GT(summary["cost"].get<double>(), 0);
  // Refinement waits for each verdict before the next call: the model and the evaluator never
  // work at once.
  EXPECT_EQ(summary["activity"]["proposals"], 5) << summary["activity"].dump();
  EXPECT_EQ(summary["activity"]["proposals_while_evaluating"], 0) << summary["activity"].dump();
  EXPECT_EQ(summary["activity"]["overlapped_s"], 0.0) << summary["activity"].dump();
  EXPECT_GT(summary["activity"]["evaluating_s"].get<double>(), 0) << summary["activity"].dump();
  std::ifstream best(summary["best"]["source"].get<std::string>());
  std::stringstream best_text;
  best_text << best.rdbuf();
  EXPECT_EQ(best_text.str(), kCorrect);
  EXPECT_TRUE(fs::exists(summary["report"].get<std::string>()));

  // The server saw the key in the header; every request after the first carried feedback.
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 7u);
  for (const auto& request : requests) {
    EXPECT_EQ(request["headers"].value("authorization", ""), std::string("Bearer ") + kKey);
  }
  EXPECT_NE(requests[3]["body"].dump().find("undefined_thing"), std::string::npos)
      << "the compile error was not fed back";

  // The store has every attempt in order, each the child of the one before.
  const std::string run_id = summary["run_id"];
  const auto shown = ShowRun(run_id);
  EXPECT_EQ(Statuses(shown), (std::vector<std::string>{"compile_error", "extraction_failed", "extraction_failed",
                                                        "wrong_output", "passed"}));
  const auto& candidates = shown["candidates_list"];
  for (size_t i = 1; i < candidates.size(); ++i) EXPECT_EQ(candidates[i]["parent_id"], candidates[i - 1]["candidate_id"]);
  EXPECT_NE(candidates[1]["extraction_error"].get<std::string>().find("HTML"), std::string::npos)
      << candidates[1]["extraction_error"];
  EXPECT_EQ(shown["llm_calls"], 5);
  // The retried calls (429, then 500) are on record with their reasons, not only on stderr.
  const std::string retries = shown.value("model_call_retries", std::string());
  EXPECT_EQ(retries.rfind("1 of 5 model calls were retried: ", 0), 0u) << retries;
  EXPECT_NE(retries.find("429"), std::string::npos) << retries;
  EXPECT_NE(retries.find("500"), std::string::npos) << retries;
  std::ifstream report(summary["report"].get<std::string>());
  std::stringstream report_text;
  report_text << report.rdbuf();
  EXPECT_NE(report_text.str().find("- " + retries), std::string::npos) << report_text.str().substr(0, 1500);

  // The key is nowhere in the store.
  for (const auto& file : {Db(), Db() + "-wal"}) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_EQ(bytes.str().find(kKey), std::string::npos) << file;
  }
  const CliResult list = RunKsmith({"runs", "list", "--db", Db(), "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  ASSERT_EQ(list.Json().size(), 1u);
  EXPECT_EQ(list.Json()[0]["run_id"], run_id);
  // The text form: a header, and each column where its header is (it had neither).
  const CliResult table = RunKsmith({"runs", "list", "--db", Db()});
  ASSERT_EQ(table.exit_code, 0) << table.Describe();
  std::istringstream table_lines(table.out);
  std::string header, row;
  std::getline(table_lines, header);
  std::getline(table_lines, row);
  EXPECT_EQ(header.rfind("run ", 0), 0u) << table.out;
  EXPECT_EQ(row.rfind(run_id, 0), 0u) << table.out;
  const size_t status_column = header.find("status");
  ASSERT_NE(status_column, std::string::npos) << table.out;
  EXPECT_EQ(row.find(list.Json()[0]["status"].get<std::string>()), status_column) << table.out;

  // Replay: the same candidates from the recorded answers, with the server gone.
  server.reset();
  const CliResult replay = RunKsmith(Flags({"--provider", "replay", "--replay-run", run_id}, "replay-out"));
  ASSERT_EQ(replay.exit_code, 0) << replay.Describe();
  const auto replayed = ShowRun(replay.Json()["run_id"]);
  EXPECT_EQ(Statuses(replayed), Statuses(shown));
  ASSERT_EQ(replayed["candidates_list"].size(), candidates.size());
  EXPECT_EQ(replayed["provider"], "replay");

  // Export: one trajectory line per attempt, one SFT example, preference pairs from failures.
  for (const auto& [format, expected_lines] : std::vector<std::pair<std::string, int>>{{"trajectory", 5}, {"sft", 1}}) {
    const CliResult exported = RunKsmith({"export", run_id, "--format", format, "--db", Db()});
    ASSERT_EQ(exported.exit_code, 0) << exported.Describe();
    int lines = 0;
    std::istringstream in(exported.out);
    for (std::string line; std::getline(in, line);) {
      ASSERT_TRUE(nlohmann::json::parse(line, nullptr, false).is_object()) << line;
      ++lines;
    }
    EXPECT_EQ(lines, expected_lines) << format;
  }
}

TEST_F(Optimize, SampleProposesInParallelAndExportsPreferencePairs) {
  auto server = Serve(nlohmann::json::array({
      {{"delay_ms", 300}, {"content", Answer("Subtract.", kWrong)}},
      {{"delay_ms", 300}, {"content", Answer("Add.", kCorrect)}},
      {{"delay_ms", 300}, {"content", Answer("Add, with a typo.", kDoesNotCompile)}},
  }));
  ASSERT_NE(server, nullptr);
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", server->base_url(), "--model", "scripted",
                                         "--strategy", "sample", "--max-candidates", "3", "--parallel", "3"}),
                                  {"OPENAI_API_KEY="});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(server->max_in_flight(), 3);  // all three proposals were asked for at once
  const std::string run_id = run.Json()["run_id"];
  auto statuses = Statuses(ShowRun(run_id));
  std::sort(statuses.begin(), statuses.end());
  EXPECT_EQ(statuses, (std::vector<std::string>{"compile_error", "passed", "wrong_output"}));
  const CliResult pairs = RunKsmith({"export", run_id, "--format", "pairs", "--db", Db()});
  ASSERT_EQ(pairs.exit_code, 0) << pairs.Describe();
  std::istringstream in(pairs.out);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto pair = nlohmann::json::parse(line);
    EXPECT_NE(pair["chosen"].get<std::string>().find("a[i] + b[i];"), std::string::npos) << line;
    EXPECT_EQ(pair["chosen_status"], "passed");
    EXPECT_NE(pair["rejected_status"], "passed");
  }
  EXPECT_EQ(lines, 2);  // the correct answer against each failed one
}

TEST_F(Optimize, AnthropicProtocolWithASlowAnswerPastTheTimeout) {
  auto server = Serve(nlohmann::json::array({
      {{"delay_ms", 2500}, {"content", Answer("Too late.", kWrong)}},
      {{"content", Answer("A plain loop.", kCorrect)}},
  }));
  ASSERT_NE(server, nullptr);
  std::ofstream(directory_ / "ksmith.toml") << "[llm]\nrequest_timeout_s = 1\n";
  const CliResult run = RunKsmith(Flags({"--provider", "anthropic", "--base-url", server->base_url(), "--model",
                                         "scripted", "--max-candidates", "1", "--config",
                                         (directory_ / "ksmith.toml").string()}),
                                  {std::string("ANTHROPIC_API_KEY=") + kKey});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  EXPECT_EQ(summary["attempts"], 1);
  ASSERT_TRUE(summary["best"].is_object()) << run.Describe();
  EXPECT_EQ(summary["best"]["status"], "passed");
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 2u);  // the slow one was abandoned and retried
  EXPECT_NE(requests[0]["path"].get<std::string>().find("/messages"), std::string::npos);
  EXPECT_EQ(requests[0]["headers"].value("x-api-key", ""), kKey);
  EXPECT_TRUE(requests[0]["headers"].contains("anthropic-version"));
}

TEST_F(Optimize, ATokenBudgetStopsTheRunCleanly) {
  auto server = testing::ScriptedLlmServer::Start(
      {{"steps", {{{"content", Answer("A plain loop.", kCorrect)}, {"input_tokens", 900}, {"output_tokens", 200}}}},
       {"after_end", "repeat_last"}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", (*server)->base_url(), "--model",
                                         "scripted", "--max-candidates", "10", "--max-tokens", "2000"}),
                                  {"OPENAI_API_KEY="});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  EXPECT_EQ(summary["status"], "finished");
  EXPECT_EQ(summary["attempts"], 2);  // 1100 tokens each: the second call crosses 2000
  EXPECT_EQ(summary["tokens"], 2200);
  EXPECT_NE(summary["stop_reason"].get<std::string>().find("token"), std::string::npos) << summary["stop_reason"];
}

TEST_F(Optimize, AKernelSentTwiceIsJudgedOnceAndTheModelIsToldItRepeatedItself) {
  // The wrong kernel, then the same code with a new comment and spacing, then the right one.
  const std::string repeated = "// second try: the same thing\n" + kWrong + "\n\n";
  auto server = Serve(nlohmann::json::array({
      {{"content", Answer("Try this.", kWrong)}},
      {{"content", Answer("Try this instead.", repeated)}},
      {{"content", Answer("Use addition.", kCorrect)}},
  }));
  ASSERT_NE(server, nullptr);
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", server->base_url(), "--model",
                                         "scripted", "--max-candidates", "3"}),
                                  {std::string("OPENAI_API_KEY=") + kKey});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("candidate 2: the same kernel as candidate 1 (comments and spacing aside): wrong_output again"),
            std::string::npos)
      << run.err;
  const auto shown = ShowRun(run.Json()["run_id"]);
  EXPECT_EQ(Statuses(shown), (std::vector<std::string>{"wrong_output", "wrong_output", "passed"}));
  EXPECT_EQ(shown["candidates_list"][1]["verdict"].value("repeat_of_candidate", 0), 1);
  // The model heard that it repeated itself before its third answer.
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_NE(requests[2]["body"].dump().find("This kernel is the same as candidate 1"), std::string::npos)
      << requests[2]["body"].dump().substr(0, 3000);
}

TEST_F(Optimize, AResumedRunTakesAnEarlierVerdictForAPendingRepeatInsteadOfEvaluatingItAgain) {
  auto server = Serve(nlohmann::json::array({
      {{"content", Answer("Try this.", kWrong)}},
      {{"content", Answer("Use addition.", kCorrect)}},
  }));
  ASSERT_NE(server, nullptr);
  const std::vector<std::string> key = {std::string("OPENAI_API_KEY=") + kKey};
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", server->base_url(), "--model",
                                         "scripted", "--max-candidates", "2"}),
                                  key);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string run_id = run.Json()["run_id"];
  {
    // As if the run had been killed after storing its second candidate, a repeat of the first
    // with new comments and spacing, and before judging it.
    auto database = Database::Open(Db());
    ASSERT_TRUE(database.ok()) << database.error().message;
    const std::string repeated = "// once more\n" + kWrong + "\n\n";
    ASSERT_TRUE((*database)->Execute("UPDATE candidates SET source = ? WHERE run_id = ? AND sequence = 1",
                                     {repeated, run_id}).ok());
    ASSERT_TRUE((*database)->Execute("DELETE FROM verdicts WHERE candidate_id = (SELECT id FROM candidates WHERE "
                                     "run_id = ? AND sequence = 1)",
                                     {run_id}).ok());
  }
  const CliResult resumed =
      RunKsmith({"optimize", "--resume", run_id, "--db", Db(), "--output-dir", Out("resumed"), "--json"}, key);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_NE(resumed.err.find("candidate 2: the same kernel as candidate 1"), std::string::npos) << resumed.err;
  const auto shown = ShowRun(run_id);
  EXPECT_EQ(Statuses(shown), (std::vector<std::string>{"wrong_output", "wrong_output"}));
  EXPECT_EQ(shown["candidates_list"][1]["verdict"].value("repeat_of_candidate", 0), 1) << resumed.err << shown.dump(1).substr(0, 4000);
}

TEST_F(Optimize, WithoutAProviderItTunesTheSeedKernelAndSaysSo) {
  const CliResult run = RunKsmith(Flags({"--max-candidates", "3"}), {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("running the tune strategy"), std::string::npos) << run.err;
  // One progress line per candidate, numbered in the run, none repeated or skipped.
  for (const char* line : {"[1/3] candidate 1: ", "[2/3] candidate 2: ", "[3/3] candidate 3: "}) {
    const size_t at = run.err.find(line);
    EXPECT_NE(at, std::string::npos) << line << "\n" << run.err;
    EXPECT_EQ(run.err.find(line, at + 1), std::string::npos) << "twice: " << line << "\n" << run.err;
  }
  const auto summary = run.Json();
  EXPECT_EQ(summary["strategy"], "tune");
  EXPECT_EQ(summary["candidates"], 3);
  EXPECT_EQ(summary["tokens"], 0);
  ASSERT_TRUE(summary["best"].is_object()) << run.Describe();
  EXPECT_EQ(summary["best"]["status"], "passed");
  EXPECT_FALSE(summary["best"]["knobs"].empty());
  std::set<std::string> settings;
  const auto shown = ShowRun(summary["run_id"]);
  for (const auto& candidate : shown["candidates_list"]) settings.insert(candidate["knobs"].dump());
  EXPECT_EQ(settings.size(), 3u);
  // `runs show` gives each speedup with its interval.
  const CliResult text = RunKsmith({"runs", "show", summary["run_id"], "--db", Db()});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  const auto& first = shown["candidates_list"][0]["verdict"]["speedup_ci95"];
  EXPECT_NE(text.out.find(fmt::format("x [{:.2f}, {:.2f}]", first[0].get<double>(), first[1].get<double>())),
            std::string::npos)
      << text.out;

  // A second run in the same store counts its own candidates from 1 (issue 13: it began at 4).
  const CliResult second = RunKsmith(Flags({"--max-candidates", "2"}, "second"), {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="});
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  EXPECT_NE(second.err.find("candidate 1: "), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("candidate 2: "), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find("candidate 4: "), std::string::npos) << second.err;
  EXPECT_LE(second.Json()["best"].value("candidate", 0), 2) << second.out;
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line, nullptr, false));
  return lines;
}

// Issue 28: a tune run first, so that the store's ids are not the refine run's numbers; then a
// refine run whose first answer is wrong everywhere and whose second passes. The model is told how
// widely the first failed (no hint about one case), every place names the candidates alike, and
// the SFT export does not teach the wrong answer.
TEST_F(Optimize, OneNumberingEverywhereAndTrainingDataLearnsOnlyPassingAnswers) {
  const std::vector<std::string> no_keys = {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="};
  const CliResult tune = RunKsmith(Flags({"--max-candidates", "2"}, "tune"), no_keys);
  ASSERT_EQ(tune.exit_code, 0) << tune.Describe();
  const std::string tune_id = tune.Json()["run_id"];
  // A tune run has no model turns: export says so instead of writing nothing silently.
  const CliResult tune_sft = RunKsmith({"export", tune_id, "--format", "sft", "--db", Db()});
  EXPECT_EQ(tune_sft.exit_code, 0) << tune_sft.Describe();
  EXPECT_EQ(tune_sft.out, "");
  EXPECT_NE(tune_sft.err.find("ksmith: nothing written: run " + tune_id + " has no model answers to learn from"),
            std::string::npos)
      << tune_sft.err;
  EXPECT_NE(tune_sft.err.find("the tune strategy"), std::string::npos) << tune_sft.err;
  const CliResult tune_json =
      RunKsmith({"export", tune_id, "--format", "sft", "--db", Db(), "--json", "-o", Out("tune.jsonl")});
  EXPECT_EQ(tune_json.exit_code, 0) << tune_json.Describe();
  EXPECT_EQ(tune_json.Json()["lines"], 0) << tune_json.Describe();
  EXPECT_NE(tune_json.Json().value("note", "").find("no model answers"), std::string::npos) << tune_json.Describe();
  EXPECT_EQ(RunKsmith({"export", tune_id, "--format", "sft", "--db", Db(), "--json"}).exit_code, 2)
      << "--json without -o: the summary and the lines would share stdout";

  auto server = Serve(nlohmann::json::array({
      {{"content", Answer("Subtract.", kWrong)}},
      {{"content", Answer("Add.", kCorrect)}},
  }));
  ASSERT_NE(server, nullptr);
  const CliResult run = RunKsmith(Flags({"--provider", "openai", "--base-url", server->base_url(), "--model",
                                         "scripted", "--max-candidates", "2"}),
                                  {std::string("OPENAI_API_KEY=") + kKey});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  const std::string run_id = summary["run_id"];

  // The feedback on the wrong answer says how widely it failed, with no hint about one case.
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string feedback = requests[1]["body"]["messages"].back()["content"];
  EXPECT_NE(feedback.find("It fails on every case judged"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("every one of the"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("tiny shape"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("overflow"), std::string::npos) << feedback;

  // One numbering: the progress, the summary, report.md, runs show and export.
  EXPECT_NE(run.err.find("candidate 2: passed"), std::string::npos) << run.err;
  EXPECT_EQ(summary["best"]["candidate"], 2) << run.Describe();
  EXPECT_NE(summary["best"]["candidate_id"], 2) << "the store's id, after the tune run's";
  std::ifstream report_file(summary["report"].get<std::string>());
  std::stringstream report;
  report << report_file.rdbuf();
  EXPECT_NE(report.str().find("Candidate 2 (llm): passed"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("| 1 | - | llm | wrong_output |"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("| 2 | 1 | llm | passed |"), std::string::npos) << report.str();
  const auto shown = ShowRun(run_id);
  EXPECT_EQ(shown["best_candidate"], 2);
  ASSERT_EQ(shown["candidates_list"].size(), 2u);
  EXPECT_EQ(shown["candidates_list"][1]["candidate"], 2);
  EXPECT_EQ(shown["candidates_list"][1]["parent"], 1);
  EXPECT_EQ(shown["candidates_list"][1]["candidate_id"], summary["best"]["candidate_id"]);
  const CliResult trajectory = RunKsmith({"export", run_id, "--format", "trajectory", "--db", Db()});
  ASSERT_EQ(trajectory.exit_code, 0) << trajectory.Describe();
  const auto steps = JsonLines(trajectory.out);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1]["candidate"], 2);
  EXPECT_EQ(steps[1]["parent"], 1);

  // SFT: the wrong first answer is in the conversation, weighted 0; the passing answer 1.
  const CliResult sft = RunKsmith({"export", run_id, "--format", "sft", "--db", Db()});
  ASSERT_EQ(sft.exit_code, 0) << sft.Describe();
  const auto examples = JsonLines(sft.out);
  ASSERT_EQ(examples.size(), 1u) << sft.out;
  std::vector<std::pair<bool, int>> assistant;  // (is the wrong answer, weight)
  for (const auto& message : examples[0]["messages"]) {
    if (message["role"] != "assistant") continue;
    assistant.emplace_back(message["content"].get<std::string>().find("a[i] - b[i]") != std::string::npos,
                           message.value("weight", -1));
  }
  EXPECT_EQ(assistant, (std::vector<std::pair<bool, int>>{{true, 0}, {false, 1}})) << sft.out;
  const CliResult final_only = RunKsmith({"export", run_id, "--format", "sft-final", "--db", Db()});
  ASSERT_EQ(final_only.exit_code, 0) << final_only.Describe();
  const auto finals = JsonLines(final_only.out);
  ASSERT_EQ(finals.size(), 1u) << final_only.out;
  const auto& messages = finals[0]["messages"];
  ASSERT_EQ(messages.size(), 3u) << final_only.out;
  EXPECT_EQ(messages[0]["role"], "system");
  EXPECT_EQ(messages[1]["role"], "user");
  EXPECT_EQ(messages[2]["weight"], 1);
  EXPECT_NE(messages[2]["content"].get<std::string>().find("a[i] + b[i]"), std::string::npos);
  EXPECT_EQ(finals[0]["candidate"], 2);
}

// Starts `ksmith args...` in the background; stdout and stderr go to files.
pid_t Spawn(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv_strings = {CliPath().string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& item : argv_strings) argv.push_back(item.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("KSMITH_CACHE_DIR", CacheDir().c_str(), 1);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

TEST_F(Optimize, AResumedRunAfterSigkillKeepsEveryFinishedEvaluation) {
  const auto args = Flags({"--max-candidates", "6", "--strategy", "tune"});
  const pid_t pid = Spawn(args, directory_ / "killed.log");
  ASSERT_GT(pid, 0);
  // Kill it once two evaluations are in the store: mid-run, likely mid-evaluation.
  std::string run_id;
  std::map<int64_t, std::string> verdicts_before;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int status = 0;
  bool exited = false;
  while (std::chrono::steady_clock::now() < deadline && verdicts_before.size() < 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (!fs::exists(Db())) continue;
    auto store = RunStore::Open(Db());
    if (!store.ok()) continue;
    auto runs = (*store)->ListRuns();
    if (!runs.ok() || runs->empty()) continue;
    run_id = runs->front().id;
    auto candidates = (*store)->Candidates(run_id);
    if (!candidates.ok()) continue;
    verdicts_before.clear();
    for (const auto& candidate : *candidates) {
      if (candidate.verdict) verdicts_before[candidate.id] = candidate.verdict->dump();
    }
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  std::ifstream log(directory_ / "killed.log");
  std::stringstream log_text;
  log_text << log.rdbuf();
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it could be killed:\n" << log_text.str();
  ASSERT_GE(verdicts_before.size(), 2u);
  {
    auto store = RunStore::Open(Db());
    ASSERT_TRUE(store.ok());
    auto run = (*store)->GetRun(run_id);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->status, "running");
    auto candidates = (*store)->Candidates(run_id);
    ASSERT_TRUE(candidates.ok());
    verdicts_before.clear();  // what finished just before the kill counts too
    for (const auto& candidate : *candidates) {
      if (candidate.verdict) verdicts_before[candidate.id] = candidate.verdict->dump();
    }
    ASSERT_LT(verdicts_before.size(), 6u);
  }

  // A flag that says the run is something else is refused, naming both, and nothing runs (it was
  // silently ignored); the same flag with the run's own value is fine.
  const CliResult other_task = RunKsmith({"optimize", "--resume", run_id, "--task", "relu", "--db", Db(), "--output-dir",
                                          Out("refused"), "--json"});
  EXPECT_EQ(other_task.exit_code, 2) << other_task.Describe();
  EXPECT_NE(other_task.err.find("continues the run as it started (--task vector_add); --task relu differs"),
            std::string::npos) << other_task.err;
  const CliResult resumed = RunKsmith({"optimize", "--resume", run_id, "--task", "vector_add", "--db", Db(),
                                       "--output-dir", Out("resumed"), "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(resumed.Json()["run_id"], run_id);
  EXPECT_EQ(resumed.Json()["candidates"], 6);
  const auto shown = ShowRun(run_id);
  EXPECT_EQ(shown["status"], "finished");
  std::set<std::string> settings;
  for (const auto& candidate : shown["candidates_list"]) {
    settings.insert(candidate["knobs"].dump());
    const int64_t id = candidate["candidate_id"];
    if (verdicts_before.count(id) != 0) {
      EXPECT_EQ(candidate["verdict"].dump(), verdicts_before[id]) << "candidate " << id << " was evaluated again";
    }
  }
  EXPECT_EQ(settings.size(), 6u) << "a setting was tried twice or skipped";
}

TEST_F(Optimize, CtrlCStopsBetweenStepsAndTheRunResumes) {
  const pid_t pid = Spawn(Flags({"--max-candidates", "4", "--strategy", "tune"}), directory_ / "interrupted.log");
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool evaluated = false;
  while (!evaluated && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(Db())) continue;
    auto store = RunStore::Open(Db());
    if (!store.ok()) continue;
    auto runs = (*store)->ListRuns();
    if (!runs.ok() || runs->empty()) continue;
    auto candidates = (*store)->Candidates(runs->front().id);
    evaluated = candidates.ok() && !candidates->empty() && candidates->front().verdict.has_value();
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::ifstream log(directory_ / "interrupted.log");
  std::stringstream log_text;
  log_text << log.rdbuf();
  ASSERT_TRUE(WIFEXITED(status)) << log_text.str();
  ASSERT_EQ(WEXITSTATUS(status), 130) << log_text.str();
  const auto summary = nlohmann::json::parse(log_text.str().substr(log_text.str().find("{\n")), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << log_text.str();
  EXPECT_EQ(summary["status"], "stopped");
  EXPECT_NE(summary["stop_reason"].get<std::string>().find("--resume"), std::string::npos);
  EXPECT_LT(summary["candidates"].get<int>(), 4);

  const CliResult resumed = RunKsmith({"optimize", "--resume", summary["run_id"], "--db", Db(), "--output-dir",
                                       Out("resumed"), "--json"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(resumed.Json()["status"], "finished");
  EXPECT_EQ(resumed.Json()["candidates"], 4);
}

TEST_F(Optimize, ErrorsAUserMeetsFirstAreClear) {
  const CliResult no_key = RunKsmith(Flags({"--provider", "openai", "--model", "gpt-x"}), {"OPENAI_API_KEY="});
  EXPECT_EQ(no_key.exit_code, 2) << no_key.Describe();
  EXPECT_NE(no_key.err.find("OPENAI_API_KEY is not set"), std::string::npos) << no_key.err;
  // A local server speaks the OpenAI protocol: for Anthropic the way out is another provider.
  const CliResult no_anthropic_key =
      RunKsmith(Flags({"--provider", "anthropic", "--model", "claude-x"}), {"ANTHROPIC_API_KEY="});
  EXPECT_EQ(no_anthropic_key.exit_code, 2) << no_anthropic_key.Describe();
  EXPECT_NE(no_anthropic_key.err.find("ANTHROPIC_API_KEY is not set, for --provider anthropic; export your Anthropic "
                                      "key, or use --provider openai --base-url URL"),
            std::string::npos)
      << no_anthropic_key.err;

  // A --db in a folder that does not exist is refused, not made into folders.
  const std::string missing = Out("no-such-folder") + "/runs.db";
  const CliResult bad_db = RunKsmith({"optimize", "--task", "vector_add", "--db", missing, "--json"});
  EXPECT_EQ(bad_db.exit_code, 2) << bad_db.Describe();
  EXPECT_NE(bad_db.err.find("ksmith: error: --db " + missing + ": the folder " + Out("no-such-folder") +
                            " does not exist; create it first"),
            std::string::npos)
      << bad_db.err;
  EXPECT_FALSE(fs::exists(Out("no-such-folder")));

  const CliResult no_model = RunKsmith(Flags({"--strategy", "refine"}), {"OPENAI_API_KEY="});
  EXPECT_EQ(no_model.exit_code, 2) << no_model.Describe();
  EXPECT_NE(no_model.err.find("needs a model"), std::string::npos) << no_model.err;

  const CliResult unknown_run = RunKsmith({"optimize", "--resume", "19700101-000000-000000", "--db", Db()});
  EXPECT_EQ(unknown_run.exit_code, 2) << unknown_run.Describe();
  EXPECT_NE(unknown_run.err.find("19700101-000000-000000"), std::string::npos) << unknown_run.err;

  std::ofstream(directory_ / "keyed.toml") << "[llm]\nprovider = \"openai\"\napi_key = \"sk-in-file\"\n";
  const CliResult keyed = RunKsmith(Flags({"--config", (directory_ / "keyed.toml").string()}));
  EXPECT_EQ(keyed.exit_code, 2) << keyed.Describe();
  EXPECT_NE(keyed.err.find("environment"), std::string::npos) << keyed.err;

  // A dead server: every call fails the same way, and the run says so instead of looping.
  std::ofstream(directory_ / "impatient.toml") << "[llm]\nrequest_attempts = 2\n";
  const CliResult dead = RunKsmith(Flags({"--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                                          "--max-candidates", "10", "--config", (directory_ / "impatient.toml").string()}),
                                   {"OPENAI_API_KEY="}, 300);
  EXPECT_EQ(dead.exit_code, 3) << dead.Describe();
  EXPECT_NE(dead.Json().value("stop_reason", "").find("failed 3 times in a row"), std::string::npos) << dead.Describe();
}

}  // namespace
}  // namespace ksmith::it
