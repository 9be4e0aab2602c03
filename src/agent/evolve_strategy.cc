// Evolutionary search: islands of kernels that evolve apart and exchange their best every few
// generations, each island keeping a MAP-Elites archive (agent/elite_archive.h) of the fastest
// kernel per kind. A generation is one batch of proposals judged side by side. Parents come from
// the archive (its best half the time, else any cell, so that kernels of other kinds get improved
// too); the operators are mutation (one parent and its facts), crossover (two measured parents)
// and contrastive comparison (measured kernels side by side with their times); an island whose
// kernels all failed repairs its last one before starting over. Without a model, the same
// machinery mutates and crosses the settings of the seed's `@tune` knobs.
//
// With a model, the next generation is written while the last one is judged (ProposesAhead), so
// that the evaluator is busy while the model writes: generation g breeds from generations up to
// g-2, all judged by then, and never from whatever of g-1 happens to be judged, so that a resumed
// run still proposes what the first run would. Without overlap (--no-overlap, or the knob
// proposer, whose proposals cost nothing to write) generation g breeds from g-1.
//
// Everything is replayed from the run's attempts (each records its island, generation, operator
// and parents in CandidateRecord::search), so a resumed run continues the same search. A setting
// already tried is never proposed again, and a model's kernel that repeats an earlier one is not
// evaluated again (the optimize loop's NormalizedSource check).
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "agent/elite_archive.h"
#include "agent/evolve_prompts.h"
#include "agent/knob_variation.h"
#include "agent/prompt.h"
#include "agent/strategy.h"

namespace ksmith {
namespace {

constexpr size_t kMigrationInterval = 3;  // generations between migrations
constexpr size_t kRepairsBeforeRestart = 2;
constexpr size_t kContrastedKernels = 3;

struct Placement {
  size_t island = 0;
  size_t generation = 0;
};

Placement PlacementOf(const Attempt& attempt, size_t islands) {
  Placement placement;
  const nlohmann::json& search = attempt.search;
  if (!search.is_object()) return placement;
  if (const auto island = search.find("island"); island != search.end() && island->is_number_integer() && *island >= 0) {
    placement.island = island->get<size_t>() % islands;
  }
  if (const auto generation = search.find("generation");
      generation != search.end() && generation->is_number_integer() && *generation >= 0) {
    placement.generation = generation->get<size_t>();
  }
  return placement;
}

// The search's state, replayed from the run's attempts in order.
struct Population {
  std::vector<EliteArchive> islands;
  std::vector<std::vector<size_t>> island_attempts;  // indices into the attempts, per island
  EliteArchive all;
  size_t next_generation = 0;
};

void Migrate(Population& population) {
  const size_t count = population.islands.size();
  if (count < 2) return;
  std::vector<std::optional<Elite>> bests;
  for (const auto& island : population.islands) {
    const Elite* best = island.Best();
    bests.push_back(best != nullptr ? std::optional<Elite>(*best) : std::nullopt);
  }
  // A ring: each island's best joins the next island's archive.
  for (size_t i = 0; i < count; ++i) {
    if (bests[i]) population.islands[(i + 1) % count].Offer(*bests[i]);
  }
}

// The generation the next proposals belong to: one past the last proposed.
size_t NextGeneration(const RunState& state, size_t islands) {
  size_t next = 0;
  for (const auto& attempt : state.attempts) next = std::max(next, PlacementOf(attempt, islands).generation + 1);
  return next;
}

// The run's first attempts, those of generations before `generation` (attempts are in the order
// they were proposed, so they are a prefix).
RunState GenerationsBefore(const RunState& state, size_t generation, size_t islands) {
  RunState before;
  for (const auto& attempt : state.attempts) {
    if (PlacementOf(attempt, islands).generation >= generation) break;
    before.attempts.push_back(attempt);
  }
  return before;
}

bool AnyPending(const RunState& state) {
  return std::any_of(state.attempts.begin(), state.attempts.end(), [](const Attempt& a) { return a.pending(); });
}

Population Replay(const RunState& state, size_t islands) {
  Population population;
  population.islands.resize(islands);
  population.island_attempts.resize(islands);
  bool any = false;
  size_t generation = 0;
  auto finish_generation = [&population](size_t finished) {
    if ((finished + 1) % kMigrationInterval == 0) Migrate(population);
  };
  for (size_t i = 0; i < state.attempts.size(); ++i) {
    const Attempt& attempt = state.attempts[i];
    const Placement placement = PlacementOf(attempt, islands);
    while (any && generation < placement.generation) finish_generation(generation++);
    generation = std::max(generation, placement.generation);
    any = true;
    population.island_attempts[placement.island].push_back(i);
    population.islands[placement.island].Offer(attempt, i);
    population.all.Offer(attempt, i);
    // A repeat is not judged again, but its island found that kernel too: it gets the original.
    if (attempt.repeat_of && *attempt.repeat_of >= 1 && static_cast<size_t>(*attempt.repeat_of) <= i) {
      const size_t original = static_cast<size_t>(*attempt.repeat_of) - 1;
      if (state.attempts[original].number == *attempt.repeat_of) population.islands[placement.island].Offer(state.attempts[original], original);
    }
  }
  if (any) {
    finish_generation(generation);
    population.next_generation = generation + 1;
  }
  return population;
}

// Half the time the archive's best (exploitation), else any of its cells (the kinds of kernel
// that are not the fastest yet).
const Elite& ChooseParent(const EliteArchive& archive, std::mt19937_64& rng) {
  if (UniformBelow(rng, 2) == 0) return *archive.Best();
  auto cell = archive.cells().begin();
  std::advance(cell, static_cast<long>(UniformBelow(rng, archive.size())));
  return cell->second;
}

// Another parent than `first`: from the island, else from every island; null when there is none.
const Elite* SecondParent(const EliteArchive& island, const EliteArchive& all, const Elite& first, std::mt19937_64& rng) {
  for (const EliteArchive* archive : {&island, &all}) {
    std::vector<const Elite*> others;
    for (const auto& [cell, elite] : archive->cells()) {
      if (elite.number != first.number) others.push_back(&elite);
    }
    if (!others.empty()) return others[UniformBelow(rng, others.size())];
  }
  return nullptr;
}

class EvolveStrategy : public Strategy {
 public:
  EvolveStrategy(const StrategyContext& context, std::optional<KnobSpace> knobs)
      : knobs_(std::move(knobs)),
        tune_source_(context.tune_source),
        max_attempts_(context.max_attempts),
        generation_size_(std::max<size_t>(1, context.parallel)),
        // An island without a candidate in every generation would never propose: no more islands
        // than a generation has candidates.
        islands_(std::clamp<size_t>(context.islands, 1, std::max<size_t>(1, context.parallel))),
        seed_(context.seed),
        overlap_(context.overlap) {
    const PromptContext prompt = context.prompt();
    system_prompt_ = BuildSystemPrompt(prompt);
    task_prompt_ = BuildTaskPrompt(prompt, "");
    first_prompt_ = BuildTaskPrompt(prompt, context.starting_point);
  }

  std::string name() const override { return "evolve"; }
  bool needs_model() const override { return !knobs_.has_value(); }
  bool ProposesAhead() const override { return overlap_ && !knobs_; }
  std::optional<size_t> Capacity() const override {
    if (!knobs_) return std::nullopt;
    return CountSettings(knobs_->knobs());
  }

  std::string BatchSummary(const RunState& state) const override {
    // The generations judged in full (a later one may be judged while the next is written).
    size_t judged = NextGeneration(state, islands_);
    while (judged > 0 && AnyPending(GenerationsBefore(state, judged, islands_))) --judged;
    const Population population = Replay(GenerationsBefore(state, judged, islands_), islands_);
    const Elite* best = population.all.Best();
    if (population.next_generation == 0) return "";
    std::string line = fmt::format("generation {} judged: the archive holds {} kind{} of kernel", population.next_generation - 1,
                                   population.all.size(), population.all.size() == 1 ? "" : "s");
    if (best != nullptr) {
      line += fmt::format("; best {:.2f}x, candidate {} ({})", best->speedup, best->number, best->features.Describe());
    }
    return line;
  }

  std::vector<Step> Next(const RunState& state) override {
    if (state.attempts.size() >= max_attempts_) return {};
    const size_t generation = NextGeneration(state, islands_);
    // What this generation breeds from; with overlap, the one before the last.
    const size_t lag = ProposesAhead() ? 1 : 0;
    const RunState bred_from = GenerationsBefore(state, generation > lag ? generation - lag : 0, islands_);
    if (AnyPending(bred_from)) return {};  // wait for its verdicts
    const Population population = Replay(bred_from, islands_);
    const size_t count = std::min(generation_size_, max_attempts_ - state.attempts.size());
    std::set<std::string> tried;
    for (const auto& attempt : state.attempts) tried.insert(attempt.knobs.dump());
    std::vector<Step> steps;
    for (size_t slot = 0; slot < count; ++slot) {
      const size_t island = slot % islands_;
      // One stream per slot of a generation: a resumed run draws what the first run drew.
      std::mt19937_64 rng(seed_ ^ (0x9E3779B97F4A7C15ULL * (generation * 1024 + slot + 1)));
      std::optional<Step> step = knobs_ ? KnobStep(bred_from, population, island, tried, rng)
                                        : ModelStep(bred_from, population, island, rng);
      if (!step) continue;
      step->search["island"] = island;
      step->search["generation"] = generation;
      steps.push_back(std::move(*step));
    }
    return steps;
  }

 private:
  static void SetParents(Step& step, const RunState& state, const std::vector<size_t>& attempt_indices) {
    nlohmann::json numbers = nlohmann::json::array();
    for (size_t index : attempt_indices) numbers.push_back(state.attempts[index].number);
    step.search["parents"] = numbers;
    if (!attempt_indices.empty()) step.parent_id = state.attempts[attempt_indices.front()].candidate_id;
  }

  std::optional<Step> KnobStep(const RunState& state, const Population& population, size_t island,
                               std::set<std::string>& tried, std::mt19937_64& rng) const {
    const EliteArchive& archive = population.islands[island];
    auto setting_of = [&](const Elite& elite) {
      return knobs_->FromJson(state.attempts[elite.attempt_index].knobs).value_or(knobs_->Random(rng));
    };
    Step step;
    step.role.clear();
    step.origin = "tune";  // a setting of the seed's knobs, as tune's candidates are
    KnobSetting proposed;
    std::vector<size_t> parents;
    if (archive.empty()) {
      const bool first = state.attempts.empty() && tried.empty();
      step.search["operator"] = first ? "seed" : "random";
      proposed = first ? knobs_->Defaults() : knobs_->Random(rng);
    } else {
      const Elite& parent = ChooseParent(archive, rng);
      const Elite* other = UniformBelow(rng, 10) < 4 ? SecondParent(archive, population.all, parent, rng) : nullptr;
      parents.push_back(parent.attempt_index);
      if (other != nullptr) {
        parents.push_back(other->attempt_index);
        step.search["operator"] = "crossover";
        proposed = knobs_->Cross(setting_of(parent), setting_of(*other), rng);
      } else {
        step.search["operator"] = "mutation";
        proposed = knobs_->Mutate(setting_of(parent), rng);
      }
    }
    auto untried = knobs_->Untried(proposed, tried, rng);
    if (!untried) return std::nullopt;
    if (KnobsToJson(*untried) != KnobsToJson(proposed)) step.search["moved_from_tried"] = true;
    tried.insert(KnobsToJson(*untried).dump());
    step.knobs = *untried;
    step.source = ApplyKnobs(tune_source_, step.knobs);
    SetParents(step, state, parents);
    return step;
  }

  std::optional<Step> ModelStep(const RunState& state, const Population& population, size_t island,
                                std::mt19937_64& rng) const {
    const EliteArchive& archive = population.islands[island];
    Step step;  // origin "llm", role "coder": the operator is in step.search
    auto measured = [&state](size_t index) {
      const Attempt& attempt = state.attempts[index];
      return MeasuredKernel{attempt.number, attempt.source, &*attempt.verdict};
    };
    std::string instruction;
    std::vector<size_t> parents;
    if (archive.empty()) {
      // Nothing passed on this island yet: repair its last kernel while it has failed only a few
      // times in a row, else start over from the task.
      const auto& mine = population.island_attempts[island];
      // The failures since the island last started over from the task.
      size_t failures = 0;
      for (auto it = mine.rbegin(); it != mine.rend() && !state.attempts[*it].passed(); ++it) {
        ++failures;
        if (state.attempts[*it].search.value("operator", std::string()) == "initial") break;
      }
      const Attempt* last = mine.empty() ? nullptr : &state.attempts[mine.back()];
      if (last != nullptr && !last->passed() && last->verdict && !last->source.empty() && failures >= 1 &&
          failures <= kRepairsBeforeRestart) {
        step.search["operator"] = "repair";
        parents.push_back(mine.back());
        instruction = RepairInstruction(measured(mine.back()));
      } else {
        step.search["operator"] = "initial";
        step.messages = {{"system", system_prompt_}, {"user", first_prompt_}};
        return step;
      }
    } else {
      const Elite& parent = ChooseParent(archive, rng);
      const size_t draw = UniformBelow(rng, 100);
      const Elite* other = draw >= 50 ? SecondParent(archive, population.all, parent, rng) : nullptr;
      parents.push_back(parent.attempt_index);
      if (other == nullptr) {
        step.search["operator"] = "mutation";
        instruction = MutationInstruction(measured(parent.attempt_index));
      } else if (draw < 75) {
        step.search["operator"] = "crossover";
        parents.push_back(other->attempt_index);
        instruction = CrossoverInstruction(measured(parent.attempt_index), measured(other->attempt_index));
      } else {
        step.search["operator"] = "contrastive";
        // The fastest kernels of every island, and this island's slowest elite for contrast.
        std::vector<size_t> shown;
        for (const Elite* elite : population.all.Ranked()) {
          if (shown.size() + 1 >= kContrastedKernels) break;
          shown.push_back(elite->attempt_index);
        }
        const auto ranked = archive.Ranked();
        const size_t slowest = ranked.back()->attempt_index;
        if (std::find(shown.begin(), shown.end(), slowest) == shown.end()) shown.push_back(slowest);
        if (std::find(shown.begin(), shown.end(), other->attempt_index) == shown.end() && shown.size() < 2) {
          shown.push_back(other->attempt_index);
        }
        std::stable_sort(shown.begin(), shown.end(), [&state](size_t a, size_t b) {
          return state.attempts[a].speedup.value_or(0) > state.attempts[b].speedup.value_or(0);
        });
        std::vector<MeasuredKernel> kernels;
        for (size_t index : shown) kernels.push_back(measured(index));
        parents = shown;
        instruction = ContrastiveInstruction(kernels);
      }
    }
    step.messages = {{"system", system_prompt_}, {"user", task_prompt_ + "\n\n" + instruction}};
    SetParents(step, state, parents);
    return step;
  }

  std::optional<KnobSpace> knobs_;
  std::string tune_source_;
  size_t max_attempts_;
  size_t generation_size_;
  size_t islands_;
  uint64_t seed_;
  bool overlap_;
  std::string system_prompt_;
  std::string task_prompt_;   // without a starting point: the parents are shown instead
  std::string first_prompt_;  // with the starting point, for an island's first kernel
};

}  // namespace

Result<std::unique_ptr<Strategy>> MakeEvolveStrategy(const StrategyContext& context) {
  if (context.proposer == "model") return std::unique_ptr<Strategy>(std::make_unique<EvolveStrategy>(context, std::nullopt));
  if (context.proposer != "knobs") {
    return MakeError(ErrorKind::kInvalidArgument, "evolve: unknown proposer '{}': choose model or knobs", context.proposer);
  }
  auto knobs = ParseTuneKnobs(context.tune_source);
  if (!knobs.ok()) return MakeError(ErrorKind::kInvalidArgument, "evolve: {}", knobs.error().message);
  if (knobs->empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "evolve without a model mutates the kernel's @tune knobs, and this kernel declares none (add lines "
                     "like `// @tune BLOCK: 64, 128, 256` with an #ifndef BLOCK default, see docs/design.md), or give "
                     "a model with --provider");
  }
  return std::unique_ptr<Strategy>(std::make_unique<EvolveStrategy>(context, KnobSpace(std::move(knobs.value()))));
}

}  // namespace ksmith
