#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "agent/kernel_features.h"
#include "agent/optimize_loop.h"
#include "agent/strategy.h"
#include "store/run_store_test_support.h"
#include "agent/strategy_test_support.h"

namespace ksmith {
namespace {

using testing::LoadVectorAdd;

const std::string kTunable = testing::TunableVectorAdd("64, 128, 256");

// What the loop records for a step once judged: passed at `speedup` with vectors of `bits`
// (a kind of kernel of its own per width), or failed.
Attempt Judged(const Step& step, int64_t number, std::optional<double> speedup, int bits = 256) {
  Attempt attempt;
  attempt.candidate_id = 1000 + number;
  attempt.number = number;
  attempt.parent_id = step.parent_id;
  attempt.origin = step.origin;
  attempt.role = step.role;
  attempt.knobs = KnobsToJson(step.knobs);
  attempt.search = step.search;
  attempt.source = step.source.empty() ? "// kernel " + std::to_string(number) + "\n" : step.source;
  attempt.answer = "```cpp\n" + attempt.source + "```";
  Verdict& verdict = attempt.verdict.emplace();
  if (!speedup) {
    verdict.status = VerdictStatus::kWrongOutput;
    verdict.reason = "3 of 185 elements off";
    attempt.status = "wrong_output";
    return attempt;
  }
  verdict.status = VerdictStatus::kPassed;
  attempt.status = "passed";
  attempt.speedup = *speedup;
  Timing& timing = verdict.timing.emplace();
  timing.speedup = {*speedup, *speedup * 0.97, *speedup * 1.03};
  timing.comparison = *speedup > 1 ? "faster" : "slower";
  timing.candidate_us.median = 100 / *speedup;
  timing.bound_by = "memory";
  timing.roofline_fraction = 0.3;
  StageRecord build{"build", "ok", 0, {}, 0};
  VectorCode& code = build.details.build.emplace().vector_code.emplace();
  code.instructions = 50;
  (bits == 512 ? code.arithmetic_512_bit : bits == 256 ? code.arithmetic_256_bit : code.arithmetic_128_bit) = 4;
  verdict.stages.push_back(std::move(build));
  return attempt;
}

std::string Operator(const Step& step) { return step.search.value("operator", std::string()); }

StrategyContext Context(const Task& task, const std::string& proposer, size_t islands, size_t parallel, size_t max) {
  StrategyContext context{task, "cpu", nullptr};
  context.proposer = proposer;
  context.tune_source = kTunable;
  context.starting_point = kTunable;
  context.islands = islands;
  context.parallel = parallel;
  context.max_attempts = max;
  context.seed = 42;
  // Generation by generation, each bred from the one before; the overlapped schedule has its own test.
  context.overlap = false;
  return context;
}

// What the loop records for a step whose evaluation is still running.
Attempt Pending(const Step& step, int64_t number) {
  Attempt attempt = Judged(step, number, 1.0);
  attempt.verdict.reset();
  attempt.speedup.reset();
  attempt.status = "pending";
  return attempt;
}

TEST(EvolveKnobs, StartsFromTheDefaultsThenBreedsFromTheArchiveAndNeverRepeatsASetting) {
  const Task task = LoadVectorAdd();
  auto strategy = MakeEvolveStrategy(Context(task, "knobs", 2, 2, 100));
  ASSERT_TRUE(strategy.ok()) << strategy.error().message;
  EXPECT_FALSE((*strategy)->needs_model());
  EXPECT_EQ((*strategy)->Capacity(), 9u);
  RunState state;
  std::set<std::string> seen;
  std::map<std::string, int> operators;
  for (int generation = 0;; ++generation) {
    const auto steps = (*strategy)->Next(state);
    if (steps.empty()) break;
    ASSERT_LE(steps.size(), 2u);
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      EXPECT_FALSE(step.asks_model());
      EXPECT_EQ(step.origin, "tune");
      EXPECT_EQ(step.search["generation"], generation);
      EXPECT_EQ(step.search["island"], i % 2);
      EXPECT_TRUE(seen.insert(KnobsToJson(step.knobs).dump()).second) << "repeated " << FormatSetting(step.knobs);
      EXPECT_NE(step.source.find("#define BLOCK"), std::string::npos);
      ++operators[Operator(step)];
      if (generation == 0 && i == 0) {
        EXPECT_EQ(FormatSetting(step.knobs), "BLOCK=64 UNROLL=1");
      }
      if (Operator(step) == "mutation" || Operator(step) == "crossover") {
        ASSERT_TRUE(step.parent_id.has_value());
        EXPECT_GE(step.search["parents"].size(), Operator(step) == "crossover" ? 2u : 1u);
      }
    }
    for (const Step& step : steps) {
      const int64_t number = static_cast<int64_t>(state.attempts.size()) + 1;
      // Faster with a bigger block: the search should find the block of 256.
      const double speedup = std::stod(step.knobs[0].second) / 64.0;
      state.attempts.push_back(Judged(step, number, speedup, step.knobs[1].second == "4" ? 512 : 256));
    }
  }
  EXPECT_EQ(seen.size(), 9u) << "every setting of the space, each once";
  EXPECT_EQ(operators["seed"], 1);
  EXPECT_GT(operators["mutation"] + operators["crossover"], 0);
  EXPECT_EQ(state.Best()->knobs["BLOCK"], "256");
}

TEST(EvolveKnobs, AResumedSearchReadsItsPlacementsAndFeaturesBackFromTheStore) {
  const Task task = LoadVectorAdd();
  auto strategy = MakeEvolveStrategy(Context(task, "knobs", 2, 3, 100));
  ASSERT_TRUE(strategy.ok());
  testing::StoreFolder folder;
  auto store = folder.Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateRun(testing::SampleRun("r1"), testing::kSampleTaskToml).ok());
  // Two generations judged in memory and recorded as the optimize loop records them.
  RunState state;
  for (int generation = 0; generation < 2; ++generation) {
    for (const Step& step : (*strategy)->Next(state)) {
      CandidateRecord record;
      record.run_id = "r1";
      record.parent_id = step.parent_id;
      record.origin = step.origin;
      record.source = step.source;
      record.knobs = KnobsToJson(step.knobs);
      record.search = step.search;
      auto id = store->AddCandidate(record, &record.sequence);
      ASSERT_TRUE(id.ok()) << id.error().message;
      Attempt attempt = Judged(step, record.sequence + 1, 1.0 + 0.1 * static_cast<double>(record.sequence),
                               record.sequence % 2 == 0 ? 512 : 256);
      attempt.candidate_id = *id;
      ASSERT_TRUE(store->AddVerdict(*id, attempt.verdict->ToJson()).ok());
      state.attempts.push_back(std::move(attempt));
    }
  }
  auto loaded = LoadRunState(*store, "r1");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->attempts.size(), state.attempts.size());
  for (size_t i = 0; i < state.attempts.size(); ++i) {
    EXPECT_EQ(loaded->attempts[i].search, state.attempts[i].search);
    EXPECT_EQ(loaded->attempts[i].knobs, state.attempts[i].knobs);
    ASSERT_TRUE(loaded->attempts[i].verdict.has_value());
    EXPECT_EQ(FeaturesOf(*loaded->attempts[i].verdict).Cell(), FeaturesOf(*state.attempts[i].verdict).Cell());
  }
  // A new strategy on the stored run proposes what the first proposes on its own state.
  auto resumed = MakeEvolveStrategy(Context(task, "knobs", 2, 3, 100));
  ASSERT_TRUE(resumed.ok());
  const auto expected = (*strategy)->Next(state), got = (*resumed)->Next(*loaded);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].knobs, expected[i].knobs);
    EXPECT_EQ(got[i].search, expected[i].search);
    EXPECT_EQ(got[i].parent_id, expected[i].parent_id);
  }
  EXPECT_EQ(got.front().search["generation"], 2);
}

TEST(EvolveKnobs, AKernelWithoutKnobsIsAnExplainedError) {
  const Task task = LoadVectorAdd();
  StrategyContext context = Context(task, "knobs", 2, 2, 10);
  context.tune_source = "extern \"C\" void vector_add() {}";
  auto strategy = MakeEvolveStrategy(context);
  ASSERT_FALSE(strategy.ok());
  EXPECT_NE(strategy.error().message.find("--provider"), std::string::npos) << strategy.error().message;
  context.proposer = "oracle";
  EXPECT_FALSE(MakeEvolveStrategy(context).ok());
}

TEST(EvolveModel, IslandsStartFromTheTaskRepairWhatBrokeAndShowParentsWithTheirTimes) {
  const Task task = LoadVectorAdd();
  auto strategy = MakeEvolveStrategy(Context(task, "model", 2, 2, 100));
  ASSERT_TRUE(strategy.ok());
  EXPECT_TRUE((*strategy)->needs_model());
  RunState state;
  auto first = (*strategy)->Next(state);
  ASSERT_EQ(first.size(), 2u);
  for (const Step& step : first) {
    EXPECT_EQ(Operator(step), "initial");
    ASSERT_TRUE(step.asks_model());
    EXPECT_NE(step.messages.back().content.find("BLOCK"), std::string::npos) << "the seed is the starting point";
  }
  state.attempts.push_back(Judged(first[0], 1, 1.5));           // island 0 passes
  state.attempts.push_back(Judged(first[1], 2, std::nullopt));  // island 1 fails
  auto second = (*strategy)->Next(state);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(Operator(second[0]), "mutation");
  EXPECT_EQ(second[0].search["parents"], nlohmann::json::array({1}));
  EXPECT_EQ(second[0].parent_id, 1001);
  const std::string mutation = second[0].messages.back().content;
  EXPECT_NE(mutation.find("// kernel 1"), std::string::npos);
  EXPECT_NE(mutation.find("candidate 1: 66.7 us, 1.50x [1.46, 1.54] (faster)"), std::string::npos) << mutation;
  EXPECT_NE(mutation.find("256-bit vector arithmetic"), std::string::npos) << mutation;
  EXPECT_EQ(Operator(second[1]), "repair");
  EXPECT_EQ(second[1].parent_id, 1002);
  EXPECT_NE(second[1].messages.back().content.find("3 of 185 elements off"), std::string::npos);
}

TEST(EvolveModel, ContrastAndCrossoverShowSeveralMeasuredKernelsFastestFirst) {
  const Task task = LoadVectorAdd();
  auto strategy = MakeEvolveStrategy(Context(task, "model", 1, 16, 100));
  ASSERT_TRUE(strategy.ok());
  RunState state;
  const auto first = (*strategy)->Next(state);
  ASSERT_EQ(first.size(), 16u);
  // Three kinds of kernel pass; the rest fail.
  state.attempts.push_back(Judged(first[0], 1, 1.2, 128));
  state.attempts.push_back(Judged(first[1], 2, 2.0, 512));
  state.attempts.push_back(Judged(first[2], 3, 1.6, 256));
  for (size_t i = 3; i < first.size(); ++i) state.attempts.push_back(Judged(first[i], static_cast<int64_t>(i) + 1, std::nullopt));
  std::map<std::string, int> operators;
  for (const Step& step : (*strategy)->Next(state)) {
    ++operators[Operator(step)];
    const std::string prompt = step.messages.back().content;
    if (Operator(step) == "contrastive") {
      const size_t fastest = prompt.find("candidate 2: 50.0 us, 2.00x");
      ASSERT_NE(fastest, std::string::npos) << prompt;
      EXPECT_GE(step.search["parents"].size(), 2u);
      EXPECT_EQ(step.search["parents"][0], 2) << "fastest first";
      EXPECT_NE(prompt.find("what made the faster ones faster"), std::string::npos);
    }
    if (Operator(step) == "crossover") {
      EXPECT_EQ(step.search["parents"].size(), 2u);
      EXPECT_NE(prompt.find("combines the strengths"), std::string::npos);
    }
  }
  EXPECT_GT(operators["mutation"], 0);
  EXPECT_GT(operators["crossover"], 0);
  EXPECT_GT(operators["contrastive"], 0);
}

TEST(EvolveModel, OverlappedAGenerationIsWrittenWhileTheLastIsJudgedAndBredFromTheOneBefore) {
  const Task task = LoadVectorAdd();
  StrategyContext context = Context(task, "model", 2, 2, 100);
  context.overlap = true;
  auto strategy = MakeEvolveStrategy(context);
  ASSERT_TRUE(strategy.ok());
  EXPECT_TRUE((*strategy)->ProposesAhead());
  RunState state;
  const auto first = (*strategy)->Next(state);
  ASSERT_EQ(first.size(), 2u);
  state.attempts.push_back(Pending(first[0], 1));
  state.attempts.push_back(Pending(first[1], 2));
  // Generation 1 is written while generation 0 is judged: nothing to breed from yet.
  const auto second = (*strategy)->Next(state);
  ASSERT_EQ(second.size(), 2u);
  for (const Step& step : second) {
    EXPECT_EQ(step.search["generation"], 1);
    EXPECT_EQ(Operator(step), "initial");
  }
  state.attempts.push_back(Pending(second[0], 3));
  state.attempts.push_back(Pending(second[1], 4));
  EXPECT_TRUE((*strategy)->Next(state).empty()) << "generation 2 breeds from generation 0, still being judged";
  EXPECT_EQ((*strategy)->BatchSummary(state), "") << "no generation is judged yet";
  state.attempts[0] = Judged(first[0], 1, 1.5);
  state.attempts[1] = Judged(first[1], 2, std::nullopt);
  // Generation 0 is judged, generation 1 is not: generation 2 breeds from generation 0 alone.
  const auto third = (*strategy)->Next(state);
  ASSERT_EQ(third.size(), 2u);
  EXPECT_EQ(third[0].search["generation"], 2);
  EXPECT_EQ(Operator(third[0]), "mutation");
  EXPECT_EQ(third[0].search["parents"], nlohmann::json::array({1}));
  EXPECT_EQ(Operator(third[1]), "repair");
  EXPECT_EQ(third[1].search["parents"], nlohmann::json::array({2}));
  EXPECT_NE((*strategy)->BatchSummary(state).find("generation 0 judged"), std::string::npos) << (*strategy)->BatchSummary(state);

  // A strategy made afresh on the same state (a resume) proposes the same, whatever was judged of
  // generation 1 meanwhile.
  state.attempts.push_back(Pending(third[0], 5));
  state.attempts.push_back(Pending(third[1], 6));
  state.attempts[2] = Judged(second[0], 3, 2.5);
  auto resumed = MakeEvolveStrategy(context);
  ASSERT_TRUE(resumed.ok());
  const auto fourth = (*strategy)->Next(state), fourth_resumed = (*resumed)->Next(state);
  ASSERT_EQ(fourth.size(), fourth_resumed.size());
  for (size_t i = 0; i < fourth.size(); ++i) {
    EXPECT_EQ(fourth[i].search, fourth_resumed[i].search);
    EXPECT_EQ(fourth[i].messages.back().content, fourth_resumed[i].messages.back().content);
  }

  // Without a model nothing is gained by writing ahead: each generation sees the last one judged.
  auto knobs = MakeEvolveStrategy([&] {
    StrategyContext knob_context = Context(task, "knobs", 2, 2, 100);
    knob_context.overlap = true;
    return knob_context;
  }());
  ASSERT_TRUE(knobs.ok());
  EXPECT_FALSE((*knobs)->ProposesAhead());
}

TEST(EvolveModel, MigrationCarriesAnIslandsBestToTheNextIsland) {
  const Task task = LoadVectorAdd();
  auto strategy = MakeEvolveStrategy(Context(task, "model", 2, 2, 100));
  ASSERT_TRUE(strategy.ok());
  RunState state;
  // Island 0 passes from the start; island 1 fails every time.
  for (int generation = 0; generation < 3; ++generation) {
    const auto steps = (*strategy)->Next(state);
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_NE(Operator(steps[1]), "mutation") << "island 1 has nothing to mutate before the migration";
    state.attempts.push_back(Judged(steps[0], static_cast<int64_t>(state.attempts.size()) + 1, 1.1 + generation));
    state.attempts.push_back(Judged(steps[1], static_cast<int64_t>(state.attempts.size()) + 1, std::nullopt));
  }
  // After the third generation island 0's best (candidate 5, 3.1x) joined island 1.
  const auto after = (*strategy)->Next(state);
  ASSERT_EQ(after.size(), 2u);
  const std::string op = Operator(after[1]);
  EXPECT_TRUE(op == "mutation" || op == "crossover" || op == "contrastive") << op;
  EXPECT_EQ(after[1].search["parents"][0], 5);
  EXPECT_NE((*strategy)->BatchSummary(state).find("best 3.10x, candidate 5"), std::string::npos)
      << (*strategy)->BatchSummary(state);
}

}  // namespace
}  // namespace ksmith
