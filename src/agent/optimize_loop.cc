#include "agent/optimize_loop.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <map>

#include <fmt/format.h>

#include "agent/code_extraction.h"
#include "agent/elite_archive.h"
#include "agent/model_format.h"
#include "agent/source_identity.h"
#include "core/strings.h"
#include "core/unified_diff.h"

namespace ksmith {
namespace {

constexpr size_t kExplanationChars = 2000;

// The model's words before its code: what it says it did. Bounded; the full answer is in the
// store anyway.
std::string Explanation(const std::string& answer) {
  const size_t fence = answer.find("```");
  std::string text(Trim(std::string_view(answer).substr(0, fence == std::string::npos ? 0 : fence)));
  if (text.size() > kExplanationChars) text = text.substr(0, kExplanationChars) + " [...]";
  return text;
}

// The model's words (its explanation) with the kernel the person edited its answer into: what was
// judged, as the conversation shows it to the model.
std::string AsEdited(const std::string& words, const std::string& source) {
  return fmt::format("{}\n\n(The person running this search edited this kernel before it was judged; as judged:)\n\n"
                     "```\n{}\n```\n",
                     words, source);
}

// The candidate a step makes, before its kernel is known.
CandidateRecord RecordOf(const std::string& run_id, const Step& step) {
  CandidateRecord record;
  record.run_id = run_id;
  record.parent_id = step.parent_id;
  record.origin = step.origin;
  record.role = step.role;
  record.search = step.search;
  return record;
}

Attempt FromRecord(const CandidateRecord& record, const std::string& answer) {
  Attempt attempt;
  attempt.candidate_id = record.id;
  attempt.number = record.number();
  attempt.parent_id = record.parent_id;
  attempt.origin = record.origin;
  attempt.role = record.role;
  attempt.answer = record.origin == "edited" && !answer.empty() ? AsEdited(record.explanation, record.source) : answer;
  attempt.explanation = record.explanation;
  attempt.source = record.source;
  attempt.extraction_error = record.extraction_error;
  attempt.knobs = record.knobs;
  attempt.search = record.search;
  if (record.verdict) {
    // A stored verdict that does not read (a store edited by hand) leaves the attempt unevaluated
    // in words but keeps its recorded status.
    if (auto verdict = Verdict::FromJson(*record.verdict); verdict.ok()) attempt.verdict = std::move(verdict.value());
  }
  attempt.status = record.status;
  attempt.speedup = record.speedup;
  if (record.verdict && record.verdict->contains("repeat_of_candidate")) {
    attempt.repeat_of = record.verdict->value("repeat_of_candidate", int64_t{0});
  }
  return attempt;
}

}  // namespace

Result<RunState> LoadRunState(const RunStore& store, const std::string& run_id) {
  auto candidates = store.Candidates(run_id);
  if (!candidates.ok()) return candidates.error();
  auto calls = store.LlmCalls(run_id);
  if (!calls.ok()) return calls.error();
  std::map<int64_t, std::string> answers;
  for (const auto& record : *calls) {
    if (record.call.reply) answers[record.id] = record.call.reply->content;
  }
  auto profiles = store.Profiles(run_id);
  if (!profiles.ok()) return profiles.error();
  RunState state;
  std::map<int64_t, size_t> attempt_of_call;  // llm call id -> the attempt it made
  for (const auto& record : *candidates) {
    std::string answer;
    if (record.llm_call_id) {
      if (auto found = answers.find(*record.llm_call_id); found != answers.end()) answer = found->second;
      attempt_of_call[*record.llm_call_id] = state.attempts.size();
    }
    state.attempts.push_back(FromRecord(record, answer));
    // A profiled re-evaluation's profile stage joins the verdict, for the prompts.
    Attempt& attempt = state.attempts.back();
    if (const auto profiled = profiles->find(record.id); profiled != profiles->end() && attempt.verdict) {
      auto verdict = Verdict::FromJson(profiled->second);
      const StageRecord* stage = verdict.ok() ? verdict->FindStage(StageId::kProfile) : nullptr;
      if (stage != nullptr && attempt.verdict->FindStage(StageId::kProfile) == nullptr) attempt.verdict->stages.push_back(*stage);
    }
  }
  // A call that made no candidate is a note (a plan, a judgment) when it was answered; it falls
  // after the attempts whose calls came before it.
  size_t attempts_before = 0;
  for (const auto& record : *calls) {
    if (const auto made = attempt_of_call.find(record.id); made != attempt_of_call.end()) {
      attempts_before = std::max(attempts_before, made->second + 1);
      continue;
    }
    // A kernel-writing call without its candidate (a process killed between the two writes) is
    // not a note: it is redone.
    if (record.call.reply && !WritesKernels(record.call.role)) {
      state.notes.push_back({record.call.role, record.call.reply->content, attempts_before});
    }
  }
  auto interventions = store.Interventions(run_id);
  if (!interventions.ok()) return interventions.error();
  const std::map<int64_t, int64_t> number_of = CandidateNumbers(*candidates);
  for (const auto& record : *interventions) {
    Intervention intervention{record.action, static_cast<size_t>(record.attempts_before), std::nullopt, record.detail};
    const auto made = record.candidate_id ? number_of.find(*record.candidate_id) : number_of.end();
    if (made != number_of.end()) intervention.candidate_number = made->second;
    state.interventions.push_back(std::move(intervention));
  }
  return state;
}

void OptimizeLoop::Report(int64_t candidate, const std::string& line) {
  if (!settings_.progress) return;
  LoopProgress progress;
  progress.attempts = state_.attempts.size();
  for (const auto& attempt : state_.attempts) {
    if (attempt.verdict) ++progress.evaluated;
    if (attempt.verdict || !attempt.extraction_error.empty()) ++progress.decided;
    if (attempt.passed()) ++progress.passed;
  }
  if (const Attempt* best = state_.Best()) progress.best_speedup = best->speedup;
  progress.tokens = budget_.tokens();
  progress.cost_dollars = budget_.dollars();
  progress.last = line;
  progress.candidate = candidate;
  settings_.progress(progress);
}

Status OptimizeLoop::StartEvaluation(size_t index) {
  if (const auto original = EarlierSameKernel(index)) {
    // Judged already, or being judged: its verdict is this one's.
    waiting_repeats_.emplace_back(index, *original);
    return ResolveRepeats();
  }
  const Attempt& attempt = state_.attempts[index];
  CandidateSource candidate;
  const CandidateFormat& format = ModelFormatOf(settings_.format).format();
  candidate.format = &format;
  // The path names the candidate in messages (and a Python one's file in tracebacks), by its
  // number in the run, as everything else a person reads does.
  candidate.path = fmt::format("{} candidate {}{}", run_id_, attempt.number, format.FileExtension());
  candidate.text = attempt.source;
  candidate.file_bytes = attempt.source.size();
  evaluating_.push_back({index, Timed(evaluator_.Submit(candidate))});
  return {};
}

std::future<Verdict> OptimizeLoop::Timed(std::future<Verdict> submitted) {
  clock_.EvaluationStarted();
  // A thread per evaluation notes when its verdict is in, so that the clock sees the evaluator
  // idle the moment it is, not when the loop next looks.
  return std::async(std::launch::async, [this, submitted = std::move(submitted)]() mutable {
    struct Ended {
      ActivityClock& clock;
      ~Ended() { clock.EvaluationEnded(); }
    } ended{clock_};
    return submitted.get();
  });
}

void OptimizeLoop::MaybeProfile() {
  if (settings_.profile_every == 0 || profiler_done_ || draining_ || StopRequested()) return;
  if (!evaluator_.profiles()) {
    profiler_done_ = true;
    Report(0, "no profiler facts in this run: the backend has no profiler (ncu profiles on --backend cuda)");
    return;
  }
  if (std::any_of(evaluating_.begin(), evaluating_.end(), [](const InFlight& job) { return job.profile; })) return;
  const Attempt* best = state_.Best();
  if (best == nullptr || !best->verdict || profiled_.contains(best->candidate_id)) return;
  const size_t decided = std::count_if(state_.attempts.begin(), state_.attempts.end(), [](const Attempt& a) { return !a.pending(); });
  // The first best is profiled at once; later ones once enough verdicts came since.
  if (!profiled_.empty() && decided < decided_at_profile_ + settings_.profile_every) return;
  decided_at_profile_ = decided;
  const size_t index = static_cast<size_t>(best - state_.attempts.data());
  CandidateSource candidate;
  const CandidateFormat& format = ModelFormatOf(settings_.format).format();
  candidate.format = &format;
  candidate.path = fmt::format("{} candidate {} (profiled){}", run_id_, best->number, format.FileExtension());
  candidate.text = best->source;
  candidate.file_bytes = best->source.size();
  profiled_.insert(best->candidate_id);
  Report(0, fmt::format("profiling candidate {}, the best so far, with the profiler", best->number));
  evaluating_.push_back({index, Timed(evaluator_.SubmitProfiled(candidate)), true});
}

Status OptimizeLoop::RecordProfile(size_t index, const Verdict& profiled) {
  if (StopRequested()) return {};
  Attempt& attempt = state_.attempts[index];
  const StageRecord* stage = profiled.FindStage(StageId::kProfile);
  const auto& facts = stage != nullptr ? stage->details.profile : std::nullopt;
  if (facts == std::nullopt || facts->facts.empty()) {
    // ncu missing, not allowed, or the kernel no longer passes: said once, and the run goes on.
    profiler_done_ = true;
    const std::string why = stage != nullptr ? stage->details.summary : profiled.reason;
    Report(0, fmt::format("no profiler facts for candidate {} ({}); the search goes on without them", attempt.number,
                          FirstLine(why.empty() ? VerdictStatusName(profiled.status) : why, 160)));
    return {};
  }
  if (auto stored = store_.SetProfile(attempt.candidate_id, profiled.ToJson()); !stored.ok()) return stored;
  if (attempt.verdict && attempt.verdict->FindStage(StageId::kProfile) == nullptr) attempt.verdict->stages.push_back(*stage);
  Report(0, fmt::format("candidate {} profiled: {}", attempt.number, FirstLine(facts->facts.front(), 160)));
  return {};
}

Status OptimizeLoop::RecordVerdict(size_t index, Verdict verdict) {
  // Ctrl-C reaches the sandboxed workers too; a verdict they ended in is not the candidate's.
  // Left pending, the candidate is evaluated again on resume.
  if (StopRequested()) return {};
  Attempt& attempt = state_.attempts[index];
  const nlohmann::json json = verdict.ToJson();
  if (auto recorded = store_.AddVerdict(attempt.candidate_id, json); !recorded.ok()) return recorded;
  attempt.status = VerdictStatusName(verdict.status);
  if (verdict.timing) attempt.speedup = verdict.timing->speedup.median;
  std::string line = fmt::format("candidate {}: {}", attempt.number, attempt.status);
  if (attempt.speedup) line += fmt::format(" {:.2f}x", *attempt.speedup);
  if (const std::string placement = DescribePlacement(attempt.search); !placement.empty()) line += " [" + placement + "]";
  if (!attempt.passed() && !verdict.reason.empty()) line += " (" + FirstLine(verdict.reason, 100) + ")";
  // As the store keeps it, so that a resumed run, which reads it back, gives the same feedback.
  if (auto stored = Verdict::FromJson(json); stored.ok()) attempt.verdict = std::move(stored.value());
  Report(attempt.number, line);  // after the verdict is in, so that the counts include it
  if (settings_.reviewer != nullptr) settings_.reviewer->ShowVerdict(attempt);
  return {};
}

Status OptimizeLoop::CollectVerdicts(bool wait) {
  constexpr auto kPoll = std::chrono::milliseconds(20);
  Status status;
  while (true) {
    bool recorded = false;
    // Every verdict that is in is taken, even after a store error, so that none is left behind.
    for (auto it = evaluating_.begin(); it != evaluating_.end();) {
      if (it->verdict.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      Verdict verdict = it->verdict.get();
      const size_t index = it->index;
      const bool profile = it->profile;
      it = evaluating_.erase(it);
      recorded = true;
      if (status.ok()) status = profile ? RecordProfile(index, verdict) : RecordVerdict(index, std::move(verdict));
    }
    if (recorded || !wait || evaluating_.empty()) break;
    evaluating_.front().verdict.wait_for(kPoll);
  }
  if (!status.ok()) return status;
  if (Status resolved = ResolveRepeats(); !resolved.ok()) return resolved;
  ReportFinishedBatches();
  MaybeProfile();
  return {};
}

Status OptimizeLoop::DrainEvaluations() {
  Status status;
  while (!evaluating_.empty()) {
    if (Status collected = CollectVerdicts(true); status.ok()) status = collected;
  }
  return status;
}

Status OptimizeLoop::ResolveRepeats() {
  for (auto it = waiting_repeats_.begin(); it != waiting_repeats_.end();) {
    const auto [index, original] = *it;
    if (!state_.attempts[original].verdict) {
      ++it;
      continue;
    }
    it = waiting_repeats_.erase(it);
    if (Status status = RecordRepeat(index, original); !status.ok()) return status;
  }
  return {};
}

void OptimizeLoop::ReportFinishedBatches() {
  while (!open_batches_.empty()) {
    const auto& batch = open_batches_.front();
    const bool decided = std::none_of(batch.begin(), batch.end(), [this](size_t index) { return state_.attempts[index].pending(); });
    if (!decided) return;
    open_batches_.erase(open_batches_.begin());
    if (const std::string summary = strategy_.BatchSummary(state_); !summary.empty() && !StopRequested()) {
      Report(0, summary);
    }
  }
}

std::optional<size_t> OptimizeLoop::EarlierSameKernel(size_t index) {
  const Attempt& attempt = state_.attempts[index];
  if (attempt.source.empty()) return std::nullopt;
  const auto [found, inserted] = kernels_seen_.emplace(NormalizedSource(attempt.source), index);
  if (inserted || found->second == index) return std::nullopt;
  return found->second;
}

Status OptimizeLoop::RecordRepeat(size_t index, size_t original_index) {
  const Attempt& original = state_.attempts[original_index];
  Attempt& attempt = state_.attempts[index];
  if (!original.verdict) return {};  // its evaluation was interrupted: this one stays pending too
  nlohmann::json json = original.verdict->ToJson();
  json["repeat_of_candidate"] = original.number;
  if (auto recorded = store_.AddVerdict(attempt.candidate_id, json); !recorded.ok()) return recorded;
  attempt.verdict = original.verdict;
  attempt.status = original.status;
  attempt.speedup = original.speedup;
  attempt.repeat_of = original.number;
  Report(attempt.number, fmt::format("candidate {}: the same kernel as candidate {} (comments and spacing aside): {} again, "
                     "not evaluated twice",
                     attempt.number, original.number, attempt.status));
  if (settings_.reviewer != nullptr) settings_.reviewer->ShowVerdict(attempt);
  return {};
}

RoleRoute OptimizeLoop::RouteFor(const std::string& role) const {
  if (const auto found = settings_.roles.find(role); found != settings_.roles.end() && found->second.provider != nullptr) {
    return found->second;
  }
  return {provider_, settings_.request};
}

Status OptimizeLoop::RecordNote(const Step& step, LlmCall call, bool& exhausted) {
  call.role = step.role;
  exhausted = call.provider_exhausted;
  if (exhausted) return {};
  auto call_id = store_.AddLlmCall(run_id_, call);
  if (!call_id.ok()) return call_id.error();
  if (!call.cached) budget_.ChargeCall(call.input_tokens, call.output_tokens);
  if (!call.reply) {
    ++failed_calls_in_row_;
    last_call_error_ = call.error;
    Report(0, fmt::format("{}: the model call failed ({})", step.role, FirstLine(call.error, 100)));
    return {};
  }
  failed_calls_in_row_ = 0;
  state_.notes.push_back({step.role, call.reply->content, state_.attempts.size()});
  Report(0, fmt::format("{}: {}", step.role, FirstLine(std::string(Trim(call.reply->content)), 160)));
  return {};
}

Result<OptimizeLoop::Review> OptimizeLoop::ReviewProposal(CandidateRecord& record, std::optional<int64_t> llm_call_id) {
  // Without a person, or without a kernel to show, the proposal is judged as it is.
  if (settings_.reviewer == nullptr || !record.extraction_error.empty()) return Review{};
  ProposalView view;
  view.number = static_cast<int64_t>(state_.attempts.size()) + 1;
  view.role = record.role;
  view.explanation = record.explanation;
  view.source = record.source;
  view.knobs = record.knobs;
  view.file_extension = ModelFormatOf(settings_.format).format().FileExtension();
  for (const auto& attempt : state_.attempts) {
    if (record.parent_id && attempt.candidate_id == *record.parent_id) view.parent = &attempt;
  }
  // Recorded in the store, then in the run's state, as LoadRunState would read it back.
  auto record_intervention = [&](const InterventionRecord& intervention) -> Status {
    auto added = store_.AddIntervention(intervention);
    if (!added.ok()) return added.error();
    state_.interventions.push_back({intervention.action, static_cast<size_t>(intervention.attempts_before), std::nullopt,
                                    intervention.detail});
    return {};
  };
  // Ctrl-C is not the person's decision: the proposal is left undecided (its call is redone on
  // resume) and nothing is recorded.
  while (true) {
    if (StopRequested()) return Review{false, std::nullopt};
    const ReviewAction action = settings_.reviewer->Review(view, state_, strategy_.FollowsRollbacks());
    if (StopRequested()) return Review{false, std::nullopt};
    InterventionRecord intervention;
    intervention.run_id = run_id_;
    intervention.action = ReviewActionName(action.kind);
    intervention.llm_call_id = llm_call_id;
    intervention.attempts_before = static_cast<int64_t>(state_.attempts.size());
    switch (action.kind) {
      case ReviewAction::Kind::kConstrain: {
        const std::string constraint(Trim(action.text));
        if (constraint.empty()) continue;
        intervention.detail = {{"constraint", constraint}};
        if (Status recorded = record_intervention(intervention); !recorded.ok()) return recorded.error();
        Report(0, fmt::format("constraint added, for every later prompt: {}", constraint));
        continue;
      }
      case ReviewAction::Kind::kRollBack: {
        const auto target = std::find_if(state_.attempts.begin(), state_.attempts.end(), [&](const Attempt& attempt) {
          return attempt.number == action.to_number && !attempt.source.empty();
        });
        if (!strategy_.FollowsRollbacks() || target == state_.attempts.end()) {
          Report(0, strategy_.FollowsRollbacks()
                        ? fmt::format("no candidate {} with a kernel to roll back to", action.to_number)
                        : fmt::format("the {} strategy chooses its own parents: it cannot roll back", strategy_.name()));
          continue;
        }
        intervention.detail = {{"to_candidate", action.to_number}, {"set_aside", record.source}};
        if (Status recorded = record_intervention(intervention); !recorded.ok()) return recorded.error();
        Report(0, fmt::format("rolled back: the proposal is set aside and the search goes on from candidate {}",
                              action.to_number));
        return Review{false, std::nullopt};
      }
      case ReviewAction::Kind::kStop:
        intervention.detail = {{"set_aside", record.source}};
        if (Status recorded = record_intervention(intervention); !recorded.ok()) return recorded.error();
        person_stopped_ = true;
        return Review{false, std::nullopt};
      case ReviewAction::Kind::kEdit: {
        if (action.text == record.source || Trim(action.text).empty()) {
          Report(0, Trim(action.text).empty() ? "the edited kernel is empty: the proposal is unchanged"
                                              : "the kernel was not changed");
          continue;
        }
        // The diff is for the record: where diff cannot run, the edit is kept whole instead.
        auto diff = UnifiedDiff(record.source, action.text, "proposed", "edited");
        intervention.detail = diff.ok() ? nlohmann::json{{"diff", *diff}}
                                        : nlohmann::json{{"edited_source", action.text}, {"diff_error", diff.error().message}};
        record.source = action.text;
        record.origin = "edited";
        // The knobs named the proposed setting, not the kernel as edited.
        record.knobs = nlohmann::json::object();
        return Review{true, std::move(intervention)};
      }
      case ReviewAction::Kind::kApprove:
        return Review{true, std::move(intervention)};
    }
  }
}

Result<Attempt> OptimizeLoop::AddReviewedCandidate(CandidateRecord& record, const Review& review,
                                                   const std::string& answer) {
  const InterventionRecord* decision = review.decision ? &*review.decision : nullptr;
  auto candidate_id = store_.AddCandidate(record, &record.sequence, decision);
  if (!candidate_id.ok()) return candidate_id.error();
  budget_.ChargeCandidate();
  record.id = *candidate_id;
  record.status = record.extraction_error.empty() ? "pending" : "extraction_failed";
  if (decision != nullptr) {
    state_.interventions.push_back({decision->action, static_cast<size_t>(decision->attempts_before), record.number(),
                                    decision->detail});
  }
  return FromRecord(record, answer);
}

Result<Attempt> OptimizeLoop::RecordProposal(const Step& step, bool& declined) {
  CandidateRecord record = RecordOf(run_id_, step);
  record.source = step.source;
  record.knobs = KnobsToJson(step.knobs);
  auto review = ReviewProposal(record, std::nullopt);
  if (!review.ok()) return review.error();
  declined = !review->judge;
  if (declined) return Attempt{};
  return AddReviewedCandidate(record, *review, "");
}

Result<Attempt> OptimizeLoop::RecordModelAnswer(const Step& step, LlmCall call, bool& exhausted, bool& declined) {
  call.role = step.role;
  exhausted = call.provider_exhausted;
  declined = false;
  if (exhausted) return Attempt{};
  auto call_id = store_.AddLlmCall(run_id_, call);
  if (!call_id.ok()) return call_id.error();
  if (!call.cached) budget_.ChargeCall(call.input_tokens, call.output_tokens);
  // Answers that arrive after the person stopped are kept as calls, never judged.
  declined = person_stopped_;
  if (declined) return Attempt{};
  CandidateRecord record = RecordOf(run_id_, step);
  record.llm_call_id = *call_id;
  if (!call.reply) {
    ++failed_calls_in_row_;
    last_call_error_ = call.error;
    record.extraction_error = "the model call failed: " + call.error;
  } else {
    failed_calls_in_row_ = 0;
    auto kernel = ModelFormatOf(settings_.format).Extract(call.reply->content, task_, settings_.backend);
    if (kernel.ok()) {
      record.source = kernel->source;
    } else {
      record.extraction_error = kernel.error().message;
    }
    record.explanation = Explanation(call.reply->content);
  }
  auto review = ReviewProposal(record, *call_id);
  if (!review.ok()) return review.error();
  declined = !review->judge;
  if (declined) return Attempt{};
  auto added = AddReviewedCandidate(record, *review, call.reply ? call.reply->content : std::string());
  if (!added.ok()) return added.error();
  Attempt attempt = std::move(added.value());
  if (!record.extraction_error.empty()) {
    Report(attempt.number, fmt::format("candidate {}: no kernel ({})", attempt.number, FirstLine(record.extraction_error, 100)));
  }
  return attempt;
}

Status OptimizeLoop::RunBatch(const std::vector<Step>& steps, std::string& stop_reason) {
  constexpr auto kPoll = std::chrono::milliseconds(50);
  // Every model call of the batch is in flight at once; each answer is recorded and its
  // evaluation queued as soon as it and those before it are in, while the later calls are
  // still running: the batch's candidates are evaluated side by side.
  std::vector<std::future<LlmCall>> calls;
  for (const auto& step : steps) {
    if (!step.asks_model()) continue;
    RoleRoute route = RouteFor(step.role);
    if (route.provider == nullptr) {
      return MakeError(ErrorKind::kInternal, "the {} strategy asked for a model, but none is configured", strategy_.name());
    }
    route.request.messages = WithConstraints(step.messages, state_.Constraints());
    clock_.ProposalStarted();
    calls.push_back(std::async(std::launch::async, [this, route] {
      struct Ended {
        ActivityClock& clock;
        ~Ended() { clock.ProposalEnded(); }
      } ended{clock_};
      return route.provider->Complete(route.request);
    }));
  }
  size_t next_call = 0;
  std::vector<size_t> batch;
  Status status;
  for (const auto& step : steps) {
    Attempt attempt;
    if (step.asks_model()) {
      std::future<LlmCall>& call = calls[next_call++];
      // Verdicts of earlier batches are recorded while the model writes.
      while (call.wait_for(kPoll) != std::future_status::ready) {
        if (status.ok()) status = CollectVerdicts(false);
      }
      bool exhausted = false;
      if (!step.writes_kernel) {
        if (Status noted = RecordNote(step, call.get(), exhausted); !noted.ok() && status.ok()) status = noted;
        if (exhausted) stop_reason = "the replayed run has no more recorded answers";
        continue;
      }
      bool declined = false;
      auto recorded = RecordModelAnswer(step, call.get(), exhausted, declined);
      if (!recorded.ok()) {
        if (status.ok()) status = recorded.error();
        continue;  // the calls still in flight are collected first
      }
      if (exhausted) {
        stop_reason = "the replayed run has no more recorded answers";
        continue;
      }
      if (declined) continue;
      attempt = std::move(recorded.value());
    } else {
      if (person_stopped_ || !status.ok()) continue;
      bool declined = false;
      auto recorded = RecordProposal(step, declined);
      if (!recorded.ok()) return recorded.error();
      if (declined) continue;
      attempt = std::move(recorded.value());
    }
    if (!status.ok()) continue;
    state_.attempts.push_back(std::move(attempt));
    const size_t index = state_.attempts.size() - 1;
    batch.push_back(index);
    if (state_.attempts.back().pending() && !StopRequested()) {
      if (Status started = StartEvaluation(index); !started.ok()) status = started;
      // A person sees each verdict before the next proposal, in a batch too.
      while (settings_.reviewer != nullptr && status.ok() && state_.attempts[index].pending() && !evaluating_.empty()) {
        status = CollectVerdicts(true);
      }
    }
  }
  if (!batch.empty()) open_batches_.push_back(std::move(batch));
  if (!status.ok()) return status;
  ReportFinishedBatches();
  return {};
}

Result<LoopOutcome> OptimizeLoop::Run() {
  auto loaded = LoadRunState(store_, run_id_);
  if (!loaded.ok()) return loaded.error();
  state_ = std::move(loaded.value());
  LoopOutcome outcome;
  outcome.status = "finished";
  // Resume: what was proposed but not yet judged is judged first (a repeat of an earlier kernel
  // takes its verdict); nothing judged is redone.
  for (const auto& attempt : state_.attempts) {
    if (attempt.verdict && attempt.verdict->FindStage(StageId::kProfile) != nullptr) profiled_.insert(attempt.candidate_id);
  }
  Status status;
  for (size_t i = 0; i < state_.attempts.size() && status.ok(); ++i) {
    if (!state_.attempts[i].pending()) {
      (void)EarlierSameKernel(i);  // the kernels seen, for later repeats
    } else if (!StopRequested()) {
      status = StartEvaluation(i);  // an error still drains what was started, below
    }
  }
  while (outcome.stop_reason.empty() && status.ok()) {
    status = CollectVerdicts(false);
    if (!status.ok()) break;
    if (StopRequested()) break;  // marked stopped below
    if (auto exhausted = budget_.Exhausted(std::chrono::steady_clock::now())) {
      outcome.stop_reason = *exhausted;
      break;
    }
    if (failed_calls_in_row_ >= settings_.max_failed_calls_in_row) {
      outcome.status = "failed";
      outcome.stop_reason = fmt::format("the model failed {} times in a row; last: {}", failed_calls_in_row_,
                                        last_call_error_);
      break;
    }
    // A strategy that does not propose ahead sees every candidate judged; so does a person.
    if (!evaluating_.empty() && (!strategy_.ProposesAhead() || settings_.reviewer != nullptr)) {
      status = CollectVerdicts(true);
      continue;
    }
    std::vector<Step> steps = strategy_.Next(state_);
    if (steps.empty()) {
      if (!evaluating_.empty()) {
        status = CollectVerdicts(true);  // it waits for verdicts
        continue;
      }
      outcome.stop_reason = strategy_.FinishedBecause(state_);
      if (outcome.stop_reason.empty()) outcome.stop_reason = fmt::format("the {} strategy has nothing left to try", strategy_.name());
      break;
    }
    status = RunBatch(steps, outcome.stop_reason);
    if (person_stopped_ && outcome.stop_reason.empty()) outcome.stop_reason = "the person stopped the run";
  }
  // Every evaluation is collected, even after an error, so that none outlives the loop; no new
  // profile starts while they are.
  draining_ = true;
  if (Status drained = DrainEvaluations(); status.ok()) status = drained;
  if (!status.ok()) return status.error();
  // Interrupted while the last verdicts came in: those candidates stay pending, for a resume.
  if (StopRequested()) {
    outcome.status = "stopped";
    outcome.stop_reason = "interrupted; resume with `ksmith optimize --resume " + run_id_ + "`";
  }
  auto run = store_.GetRun(run_id_);
  if (!run.ok()) return run.error();
  outcome.activity = Activity::FromJson(run->activity);
  outcome.activity += clock_.Snapshot();
  if (auto saved = store_.SetRunActivity(run_id_, outcome.activity.ToJson()); !saved.ok()) return saved.error();
  if (const Attempt* best = state_.Best()) outcome.best_candidate_id = best->candidate_id;
  if (auto finished = store_.FinishRun(run_id_, outcome.status, outcome.stop_reason, outcome.best_candidate_id);
      !finished.ok()) {
    return finished.error();
  }
  outcome.state = std::move(state_);
  return outcome;
}

}  // namespace ksmith
