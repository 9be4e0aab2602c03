// End-to-end runs of `ksmith optimize --strategy team` against a scripted model server on loopback
// (the model is the only fake): each role's calls go to that role's model ([roles.NAME] in
// ksmith.toml), every call is stored with its role, the debugger fixes a wrong kernel, the judge
// continues the idea and then stops the run, and the ledger and the notes reach `runs show` and
// report.md.
#include <fstream>
#include <sstream>

#include "cli_runner.h"
#include "scripted_kernels.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {



TEST(Team, EachRoleAnswersWithItsModelTheDebuggerFixesAndTheJudgeStops) {
  TempDir directory("team");
  ASSERT_FALSE(directory.path().empty());
  auto server = testing::ScriptedLlmServer::Start(
      {{"steps", nlohmann::json::array({
                     {{"content", "**Hypothesis:** parallel loop\nSplit the loop over threads with OpenMP."}},
                     {{"content", ScriptedAnswer("A first loop.", kWrongVectorAdd)}},
                     {{"content", ScriptedAnswer("Fixed: it subtracted.", kPlainVectorAdd)}},
                     {{"content", "Decision: continue\nAdd SIMD and threads."}},
                     {{"content", ScriptedAnswer("Threads and SIMD.", kParallelVectorAdd)}},
                     {{"content", "Decision: stop\nAt the memory limit."}},
                 })}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const fs::path config = directory.path() / "ksmith.toml";
  std::ofstream(config) << "[roles.planner]\nmodel = \"planner-model\"\n[roles.judge]\nmodel = \"judge-model\"\n"
                           "temperature = 0.0\n";
  const std::string db = (directory.path() / "runs.db").string();
  const CliResult run = RunKsmith({"optimize", "--task", "vector_add", "--strategy", "team", "--provider", "openai",
                                   "--base-url", (*server)->base_url(), "--model", "coder-model", "--config",
                                   config.string(), "--db", db, "--output-dir", (directory.path() / "out").string(),
                                   "--timing-budget", "0.1", "--seeds", "1", "--max-candidates", "10", "--json"},
                                  {"OPENAI_API_KEY=sk-test-team"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  EXPECT_EQ(summary["strategy"], "team");
  EXPECT_EQ(summary["stop_reason"], "the judge stopped: At the memory limit.") << run.Describe();
  EXPECT_EQ(summary["llm_calls"], 6);
  EXPECT_NE(run.err.find("planner: **Hypothesis:** parallel loop"), std::string::npos) << run.err;

  // Each role's calls went to its model; the debugger and the coder share [llm]'s.
  const auto requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 6u);
  const std::vector<std::string> models = {"planner-model", "coder-model", "coder-model",
                                           "judge-model",   "coder-model", "judge-model"};
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(requests[i]["body"]["model"], models[i]) << i;
  EXPECT_EQ(requests[3]["body"]["temperature"], 0.0);
  // The debugger saw the wrong output; the judge saw the kernel's measurements and the ledger.
  EXPECT_NE(requests[2]["body"].dump().find("wrong_output"), std::string::npos);
  EXPECT_NE(requests[3]["body"].dump().find("\\\"parallel loop\\\": 2 kernels (1, 2)"), std::string::npos)
      << requests[3]["body"].dump();
  EXPECT_NE(requests[4]["body"].dump().find("Add SIMD and threads."), std::string::npos);

  const CliResult shown = RunKsmith({"runs", "show", summary["run_id"], "--db", db, "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.Describe();
  const auto json = shown.Json();
  const auto& candidates = json["candidates_list"];
  ASSERT_EQ(candidates.size(), 3u);
  const std::vector<std::string> roles = {"coder", "debugger", "coder"}, operators = {"plan", "repair", "continue"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(candidates[i]["role"], roles[i]);
    EXPECT_EQ(candidates[i]["search"]["operator"], operators[i]);
    EXPECT_EQ(candidates[i]["search"]["hypothesis"], "parallel loop");
  }
  EXPECT_EQ(candidates[0]["status"], "wrong_output");
  EXPECT_EQ(candidates[1]["parent"], 1);
  EXPECT_EQ(candidates[2]["parent"], 2);
  ASSERT_EQ(json["ledger"].size(), 1u);
  EXPECT_EQ(json["ledger"][0]["kernels"], nlohmann::json::array({1, 2, 3}));
  ASSERT_EQ(json["notes"].size(), 3u);  // the plan and two judgments
  EXPECT_EQ(json["notes"][0]["role"], "planner");
  EXPECT_EQ(json["notes"][2]["after_candidate"], 3);
  const CliResult text = RunKsmith({"runs", "show", summary["run_id"], "--db", db});
  EXPECT_NE(text.out.find("hypotheses (the ideas tried, in order):"), std::string::npos) << text.out;

  std::ifstream report(summary["report"].get<std::string>());
  std::stringstream report_text;
  report_text << report.rdbuf();
  EXPECT_NE(report_text.str().find("## Hypotheses"), std::string::npos);
  EXPECT_NE(report_text.str().find("- before any candidate, planner: **Hypothesis:** parallel loop"), std::string::npos)
      << report_text.str();
  EXPECT_NE(report_text.str().find("- after candidate 3, judge: Decision: stop"), std::string::npos) << report_text.str();
}

}  // namespace
}  // namespace ksmith::it
