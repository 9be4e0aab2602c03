// End-to-end runs of `ksmith optimize --strategy evolve`: with a scripted model server on loopback
// (the model is the only fake; the evaluator, the sandbox and the store are real), and without a
// model, breeding the seed kernel's @tune knobs. Asserts on what the store keeps: each candidate's
// island, generation, operator and parents, the lineage, the archive, and the prompts' contents.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli_runner.h"
#include "scripted_kernels.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {

const std::string kRepaired = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  // repaired: addition, as the task says
  for (int64_t i = 0; i < n; ++i) c[i] = b[i] + a[i];
}
)";


class Evolve : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("ksmith-evolve-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(directory_);
  }

  std::vector<std::string> Flags(const std::string& task, std::vector<std::string> extra) const {
    std::vector<std::string> args = {"optimize", "--task", task, "--strategy", "evolve", "--db", Db(), "--output-dir",
                                     (directory_ / "out").string(), "--timing-budget", "0.1", "--seeds", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::string Db() const { return (directory_ / "runs.db").string(); }

  nlohmann::json ShowRun(const std::string& run_id) {
    const CliResult shown = RunKsmith({"runs", "show", run_id, "--db", Db(), "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.Describe();
    return shown.Json();
  }

  fs::path directory_;
};

TEST_F(Evolve, WithAModelEachIslandStartsRepairsAndBreedsAndTheStoreKeepsTheSearch) {
  // Two islands, two candidates a generation, three generations, each bred from the one before
  // (--no-overlap; the overlapped schedule has its own test). The answers come in request order;
  // each prompt is checked below by what it must show.
  auto server = testing::ScriptedLlmServer::Start(
      {{"steps", nlohmann::json::array({
                     {{"content", ScriptedAnswer("A plain loop.", kPlainVectorAdd)}},
                     {{"content", ScriptedAnswer("Subtract (wrong on purpose).", kWrongVectorAdd)}},
                     {{"content", ScriptedAnswer("Threads and SIMD.", kParallelVectorAdd)}},
                     {{"content", ScriptedAnswer("Fixed the sign.", kRepaired)}},
                     {{"content", ScriptedAnswer("The same plain loop again.", kPlainVectorAdd)}},
                     {{"content", ScriptedAnswer("Threads and SIMD again.", kParallelVectorAdd)}},
                 })}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const CliResult run = RunKsmith(Flags("vector_add", {"--provider", "openai", "--base-url", (*server)->base_url(),
                                                       "--model", "scripted", "--max-candidates", "6", "--islands",
                                                       "2", "--parallel", "2", "--no-overlap"}),
                                  {"OPENAI_API_KEY=sk-test-evolve"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("generation 0 judged: the archive holds"), std::string::npos) << run.err;

  const auto shown = ShowRun(run.Json()["run_id"]);
  const auto& candidates = shown["candidates_list"];
  ASSERT_EQ(candidates.size(), 6u);
  std::vector<std::string> operators;
  for (const auto& candidate : candidates) {
    operators.push_back(candidate["search"].value("operator", ""));
    EXPECT_EQ(candidate["role"], "coder");
    EXPECT_EQ(candidate["origin"], "llm");
  }
  // Generation 0: both islands start from the task, one kernel passes and one is wrong (the two
  // calls run at once, so which island got which answer is the server's arrival order).
  // Generation 1: the island with the passing kernel breeds from it, the other repairs its own.
  EXPECT_EQ(operators[0], "initial");
  EXPECT_EQ(operators[1], "initial");
  const size_t wrong = candidates[0]["status"] == "wrong_output" ? 0 : 1;
  ASSERT_EQ(candidates[wrong]["status"], "wrong_output");
  ASSERT_EQ(candidates[1 - wrong]["status"], "passed");
  const auto& repair_candidate = candidates[2 + wrong];  // generation 1's slot of the same island
  const auto& bred = candidates[2 + (1 - wrong)];
  EXPECT_EQ(repair_candidate["search"]["operator"], "repair");
  EXPECT_EQ(repair_candidate["parent"], wrong + 1);
  EXPECT_EQ(repair_candidate["search"]["generation"], 1);
  EXPECT_EQ(repair_candidate["status"], "passed");
  EXPECT_EQ(bred["search"]["operator"], "mutation");
  EXPECT_EQ(bred["parent"], 2 - wrong);
  EXPECT_EQ(bred["search"]["island"], 1 - wrong);
  // Generation 2 answers two kernels seen before: each is judged once, its verdict reused.
  for (size_t i = 4; i < 6; ++i) {
    EXPECT_GT(candidates[i]["verdict"].value("repeat_of_candidate", 0), 0) << candidates[i].dump();
  }
  ASSERT_TRUE(shown["archive"].is_array());
  EXPECT_GE(shown["archive"].size(), 1u);
  for (const auto& elite : shown["archive"]) EXPECT_FALSE(elite["cell"].get<std::string>().empty());

  // The prompts (a generation's calls run at once, so they are found by what they ask): the
  // mutation shows its parent and what was measured of it; the repair shows the broken kernel and
  // its failure; generation 2's prompts show measured parents.
  const auto requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 6u);
  auto find = [&requests](const std::string& marker) {
    for (const auto& request : requests) {
      if (request["body"].dump().find(marker) != std::string::npos) return request["body"].dump();
    }
    return std::string();
  };
  const std::string mutation = find("One of the best kernels found so far");
  const std::string repair = find("This kernel tried an idea worth keeping");
  const double first_speedup = candidates[1 - wrong]["speedup"].get<double>();
  EXPECT_NE(mutation.find(fmt::format("candidate {}: ", 2 - wrong)), std::string::npos) << mutation;
  EXPECT_NE(mutation.find(fmt::format("{:.2f}x", first_speedup)), std::string::npos) << mutation;
  EXPECT_NE(repair.find("a[i] - b[i]"), std::string::npos) << repair;
  EXPECT_NE(repair.find("wrong_output"), std::string::npos) << repair;
  size_t measured = 0;
  for (const auto& request : requests) measured += request["body"].dump().find(" us, ") != std::string::npos ? 1 : 0;
  EXPECT_GE(measured, 3u) << "the mutation and generation 2's prompts show measured times";

  // report.md has the archive and the placements.
  std::ifstream report(run.Json()["report"].get<std::string>());
  std::stringstream text;
  text << report.rdbuf();
  EXPECT_NE(text.str().find("## Archive"), std::string::npos);
  EXPECT_NE(text.str().find(fmt::format("generation 1, island {}, repair of {}", wrong, wrong + 1)), std::string::npos)
      << text.str();
}

TEST_F(Evolve, OverlappedTheNextGenerationIsWrittenWhileTheLastIsJudged) {
  // A model that takes a second per answer. Generation 1 is written while generation 0 is judged
  // (so it starts from the task again), generation 2 breeds from generation 0.
  const std::string kUnrolled = R"(#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) { c[i] = a[i] + b[i]; c[i+1] = a[i+1] + b[i+1]; c[i+2] = a[i+2] + b[i+2]; c[i+3] = a[i+3] + b[i+3]; }
  for (; i < n; ++i) c[i] = a[i] + b[i];
}
)";
  nlohmann::json steps = nlohmann::json::array();
  int answer = 0;
  for (const std::string& kernel : {kPlainVectorAdd, kWrongVectorAdd, kParallelVectorAdd, kUnrolled, kRepaired, kParallelVectorAdd + "// again\n"}) {
    steps.push_back({{"delay_ms", 1000}, {"content", ScriptedAnswer(fmt::format("Kernel {}.", ++answer), kernel)}});
  }
  auto server = testing::ScriptedLlmServer::Start({{"steps", steps}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const CliResult run = RunKsmith(Flags("vector_add", {"--provider", "openai", "--base-url", (*server)->base_url(),
                                                       "--model", "scripted", "--max-candidates", "6", "--islands",
                                                       "2", "--parallel", "2"}),
                                  {"OPENAI_API_KEY=sk-test-evolve"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto shown = ShowRun(run.Json()["run_id"]);
  const auto& candidates = shown["candidates_list"];
  ASSERT_EQ(candidates.size(), 6u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(candidates[i]["search"]["operator"], "initial") << candidates[i].dump();
    EXPECT_EQ(candidates[i]["search"]["generation"], i / 2);
  }
  for (size_t i = 4; i < 6; ++i) {
    const std::string op = candidates[i]["search"]["operator"];
    EXPECT_TRUE(op == "mutation" || op == "repair") << candidates[i].dump();
    ASSERT_EQ(candidates[i]["search"]["parents"].size(), 1u) << candidates[i].dump();
    EXPECT_LE(candidates[i]["search"]["parents"][0].get<int>(), 2) << "bred from generation 0 only";
  }

  // The evaluator worked while the model wrote: every call after the first generation's was made
  // while a candidate was being judged.
  const nlohmann::json activity = shown["activity"];
  ASSERT_TRUE(activity.is_object()) << shown.dump();
  EXPECT_EQ(activity["proposals"], 6);
  EXPECT_GE(activity["proposals_while_evaluating"].get<int>(), 2) << activity.dump();
  EXPECT_GT(activity["overlapped_s"].get<double>(), 0) << activity.dump();
  EXPECT_GE(activity["wall_s"].get<double>(), activity["evaluating_s"].get<double>());
  const CliResult text = RunKsmith({"runs", "show", run.Json()["run_id"], "--db", Db()});
  EXPECT_NE(text.out.find("evaluations in flight"), std::string::npos) << text.out;

  // A replay without network gives each prompt the answer recorded for it, whatever order the
  // parallel calls arrive in: each generation gets the same answers. (Islands whose prompts are
  // identical, as the first generation's are, may trade them.)
  const CliResult replay = RunKsmith(Flags("vector_add", {"--provider", "replay", "--replay-run", run.Json()["run_id"],
                                                          "--max-candidates", "6", "--islands", "2", "--parallel", "2"}));
  ASSERT_EQ(replay.exit_code, 0) << replay.Describe();
  const auto replayed = ShowRun(replay.Json()["run_id"])["candidates_list"];
  ASSERT_EQ(replayed.size(), 6u);
  auto answers_by_generation = [](const nlohmann::json& list) {
    std::map<int, std::multiset<std::string>> answers;
    for (const auto& candidate : list) {
      answers[candidate["search"].value("generation", -1)].insert(candidate["explanation"].get<std::string>() + " " +
                                                                 candidate["status"].get<std::string>());
    }
    return answers;
  };
  EXPECT_EQ(answers_by_generation(replayed), answers_by_generation(candidates));
}

TEST_F(Evolve, WithoutAModelItBreedsKnobSettingsNeverTwiceAndFindsTheFastest) {
  const CliResult run = RunKsmith(Flags("vector_add", {"--max-candidates", "8", "--islands", "2", "--parallel", "4"}),
                                  {"OPENAI_API_KEY=", "ANTHROPIC_API_KEY="});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto summary = run.Json();
  EXPECT_EQ(summary["strategy"], "evolve");
  EXPECT_EQ(summary["tokens"], 0);
  ASSERT_TRUE(summary["best"].is_object()) << run.Describe();
  const auto shown = ShowRun(summary["run_id"]);
  std::set<std::string> settings;
  std::map<std::string, int> operators;
  double fastest = 0;
  for (const auto& candidate : shown["candidates_list"]) {
    EXPECT_TRUE(settings.insert(candidate["knobs"].dump()).second) << "tried twice: " << candidate["knobs"].dump();
    ++operators[candidate["search"].value("operator", "")];
    if (candidate["speedup"].is_number()) fastest = std::max(fastest, candidate["speedup"].get<double>());
    if (candidate["search"].value("generation", 0) > 0) {
      EXPECT_FALSE(candidate["parent"].is_null()) << candidate.dump();
    }
  }
  EXPECT_EQ(settings.size(), 8u);  // vector_add's seed has exactly 8 settings: all, each once
  EXPECT_EQ(operators["seed"], 1);
  EXPECT_GT(operators["mutation"] + operators["crossover"], 0);
  EXPECT_DOUBLE_EQ(summary["best"]["speedup"].get<double>(), fastest);
  // The archive's cells come from the machine code: vector width and OpenMP.
  ASSERT_TRUE(shown["archive"].is_array());
  for (const auto& elite : shown["archive"]) {
    EXPECT_NE(elite["cell"].get<std::string>().find("/v"), std::string::npos) << elite.dump();
  }
  const CliResult text = RunKsmith({"runs", "show", summary["run_id"], "--db", Db()});
  EXPECT_NE(text.out.find("archive ("), std::string::npos) << text.out;
}

}  // namespace
}  // namespace ksmith::it
