// The knowledge base end to end: `ksmith knowledge` over a real store file, and `ksmith optimize`
// (refine, a scripted model on loopback) showing notes with the task and on a failure, within
// their budget, and harvesting the run's experience for later runs.
#include <fmt/format.h>

#include "agent/conversation.h"
#include "cli_runner.h"
#include "scripted_kernels.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {



// The user messages of a request, joined.
std::string UserText(const nlohmann::json& request) {
  std::string text;
  for (const auto& message : request["body"]["messages"]) {
    if (message.value("role", "") == "user") text += message.value("content", "") + "\n";
  }
  return text;
}

// The section under `heading`: up to the next line that starts a section of the prompt's own.
std::string Section(const std::string& text, const std::string& heading) {
  const size_t start = text.find(heading);
  if (start == std::string::npos) return "";
  const size_t end = text.find("\nFix it.", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(Knowledge, CommandsAddSearchAndListNotesInTheStore) {
  TempDir directory("knowledge-cli");
  ASSERT_FALSE(directory.path().empty());
  const std::string db = (directory.path() / "runs.db").string();
  const CliResult listed = RunKsmith({"knowledge", "list", "--db", db, "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.Describe();
  EXPECT_GE(listed.Json().size(), 12u) << "the shipped notes are synced on first use";
  const CliResult added = RunKsmith({"knowledge", "add", "--title", "Swizzled shared tiles", "--tags", "gemm banks",
                                     "--hardware", "cuda", "--body", "XOR the column with the row.", "--db", db, "--json"});
  ASSERT_EQ(added.exit_code, 0) << added.Describe();
  const CliResult found = RunKsmith({"knowledge", "search", "swizzled", "--db", db, "--json"});
  ASSERT_EQ(found.exit_code, 0) << found.Describe();
  ASSERT_GE(found.Json().size(), 1u);
  EXPECT_EQ(found.Json()[0]["title"], "Swizzled shared tiles");
  EXPECT_EQ(found.Json()[0]["origin"], "user");
  const CliResult text = RunKsmith({"knowledge", "search", "online softmax", "--db", db, "--limit", "1"});
  EXPECT_NE(text.out.find("Online softmax"), std::string::npos) << text.out;
  const CliResult no_words = RunKsmith({"knowledge", "search", "??", "--db", db});
  EXPECT_EQ(no_words.exit_code, 2);
  EXPECT_NE(no_words.err.find("ksmith: error: knowledge search needs words"), std::string::npos) << no_words.err;
  const CliResult no_body = RunKsmith({"knowledge", "add", "--title", "Empty", "--db", db});
  EXPECT_EQ(no_body.exit_code, 2);
  EXPECT_NE(no_body.err.find("needs --title and a body"), std::string::npos) << no_body.err;
  const CliResult no_run = RunKsmith({"knowledge", "harvest", "no-such-run", "--db", db});
  EXPECT_NE(no_run.exit_code, 0);
  EXPECT_NE(no_run.err.find("no run 'no-such-run'"), std::string::npos) << no_run.err;
}

TEST(Knowledge, OptimizeShowsNotesWithinBudgetOnTheTaskAndOnAFailureAndHarvestsTheRun) {
  TempDir directory("knowledge-optimize");
  ASSERT_FALSE(directory.path().empty());
  const std::string db = (directory.path() / "runs.db").string();
  auto run = [&](std::vector<std::string> extra) {
    auto server = testing::ScriptedLlmServer::Start({{"steps", nlohmann::json::array({
                                                                    {{"content", ScriptedAnswer("Subtract.", kWrongVectorAdd)}},
                                                                    {{"content", ScriptedAnswer("Add.", kPlainVectorAdd)}},
                                                                })}});
    EXPECT_TRUE(server.ok());
    std::vector<std::string> args = {"optimize", "--task", "vector_add", "--provider", "openai", "--base-url",
                                     (*server)->base_url(), "--model", "scripted", "--max-candidates", "2", "--db", db,
                                     "--output-dir", (directory.path() / "out").string(), "--timing-budget", "0.1",
                                     "--seeds", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = RunKsmith(args, {"OPENAI_API_KEY=sk-test-knowledge"});
    return std::make_pair(result, (*server)->requests());
  };
  const auto [result, requests] = run({});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  ASSERT_EQ(requests.size(), 2u);
  // With the task: notes for an elementwise CPU task, none for CUDA, within 1500 tokens.
  const std::string first = UserText(requests[0]);
  const std::string task_notes = Section(first, "Notes from ksmith's knowledge base for this task and target:");
  ASSERT_FALSE(task_notes.empty()) << first;
  EXPECT_NE(task_notes.find("### SIMD on the CPU"), std::string::npos) << task_notes;
  EXPECT_EQ(task_notes.find("float4"), std::string::npos) << "a CUDA note on a CPU run";
  EXPECT_LE(EstimateTokens(task_notes), 1500);
  // On the wrong output: notes on wrong outputs, not the ones already shown, within 750 tokens.
  const std::string second = UserText(requests[1]);
  const std::string failure_notes = Section(second, "Notes from ksmith's knowledge base on wrong_output:");
  ASSERT_FALSE(failure_notes.empty()) << second;
  EXPECT_NE(failure_notes.find("### Wrong outputs: bounds, remainders"), std::string::npos) << failure_notes;
  EXPECT_LE(EstimateTokens(failure_notes), 750);
  // The CPU backend has no profiler: said once, and the run went on.
  const std::string no_profiler = "no profiler facts in this run: the backend has no profiler";
  EXPECT_EQ(result.err.find(no_profiler), result.err.rfind(no_profiler)) << result.err;
  EXPECT_NE(result.err.find(no_profiler), std::string::npos) << result.err;

  // The run's experience went into the knowledge base: its best kernel and its wrong output.
  EXPECT_EQ(result.Json()["knowledge_harvested"], 2) << result.Describe();
  const CliResult experience = RunKsmith({"knowledge", "list", "--kind", "experience", "--db", db, "--json"});
  ASSERT_EQ(experience.exit_code, 0) << experience.Describe();
  ASSERT_EQ(experience.Json().size(), 2u);
  const std::string run_id = result.Json()["run_id"];
  EXPECT_EQ(experience.Json()[0]["origin"], "run:" + run_id + "#best");
  EXPECT_NE(experience.Json()[1]["title"].get<std::string>().find("wrong_output and its fix"), std::string::npos);
  const CliResult again = RunKsmith({"knowledge", "harvest", run_id, "--db", db, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(again.Json()["notes"], 0) << "the run's notes are there already, as optimize wrote them";
  EXPECT_EQ(experience.Json()[0]["hardware"], "cpu");

  // --no-knowledge: no notes, nothing harvested.
  const auto [plain, plain_requests] = run({"--no-knowledge"});
  ASSERT_EQ(plain.exit_code, 0) << plain.Describe();
  for (const auto& request : plain_requests) {
    EXPECT_EQ(UserText(request).find("Notes from ksmith's knowledge base"), std::string::npos);
  }
  EXPECT_FALSE(plain.Json().contains("knowledge_harvested"));
}

}  // namespace
}  // namespace ksmith::it
