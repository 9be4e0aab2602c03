#include "agent/optimize_loop.h"

#include <chrono>
#include <future>
#include <map>

#include <fmt/format.h>

#include "agent/code_extraction.h"
#include "agent/elite_archive.h"
#include "agent/model_format.h"
#include "agent/source_identity.h"
#include "core/strings.h"

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

Attempt FromRecord(const CandidateRecord& record, const std::string& answer) {
  Attempt attempt;
  attempt.candidate_id = record.id;
  attempt.number = record.number();
  attempt.parent_id = record.parent_id;
  attempt.origin = record.origin;
  attempt.role = record.role;
  attempt.answer = answer;
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
  RunState state;
  for (const auto& record : *candidates) {
    std::string answer;
    if (record.llm_call_id) {
      if (auto found = answers.find(*record.llm_call_id); found != answers.end()) answer = found->second;
    }
    state.attempts.push_back(FromRecord(record, answer));
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

std::future<Verdict> OptimizeLoop::StartEvaluation(size_t index) {
  const Attempt& attempt = state_.attempts[index];
  CandidateSource candidate;
  const CandidateFormat& format = ModelFormatOf(settings_.format).format();
  candidate.format = &format;
  // The path names the candidate in messages (and a Python one's file in tracebacks), by its
  // number in the run, as everything else a person reads does.
  candidate.path = fmt::format("{} candidate {}{}", run_id_, attempt.number, format.FileExtension());
  candidate.text = attempt.source;
  candidate.file_bytes = attempt.source.size();
  return evaluator_.Submit(candidate);
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
  return {};
}

Status OptimizeLoop::RecordVerdicts(const std::vector<size_t>& indices, std::vector<std::future<Verdict>>& verdicts) {
  Status status;
  // Every verdict is collected, even after a failure, so that no evaluation outlives the loop.
  for (size_t i = 0; i < indices.size(); ++i) {
    Verdict verdict = verdicts[i].get();
    if (status.ok()) status = RecordVerdict(indices[i], std::move(verdict));
  }
  return status;
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
  return {};
}

Result<Attempt> OptimizeLoop::RecordModelAnswer(const Step& step, LlmCall call, bool& exhausted) {
  call.role = step.role;
  exhausted = call.provider_exhausted;
  if (exhausted) return Attempt{};
  auto call_id = store_.AddLlmCall(run_id_, call);
  if (!call_id.ok()) return call_id.error();
  if (!call.cached) budget_.ChargeCall(call.input_tokens, call.output_tokens);
  CandidateRecord record;
  record.run_id = run_id_;
  record.parent_id = step.parent_id;
  record.origin = step.origin;
  record.role = step.role;
  record.search = step.search;
  record.llm_call_id = *call_id;
  if (!call.reply) {
    ++failed_calls_in_row_;
    last_call_error_ = call.error;
    record.extraction_error = "the model call failed: " + call.error;
  } else {
    failed_calls_in_row_ = 0;
    auto kernel = ModelFormatOf(settings_.format).Extract(call.reply->content, task_);
    if (kernel.ok()) {
      record.source = kernel->source;
    } else {
      record.extraction_error = kernel.error().message;
    }
    record.explanation = Explanation(call.reply->content);
  }
  auto candidate_id = store_.AddCandidate(record, &record.sequence);
  if (!candidate_id.ok()) return candidate_id.error();
  budget_.ChargeCandidate();
  record.id = *candidate_id;
  record.status = record.extraction_error.empty() ? "pending" : "extraction_failed";
  Attempt attempt = FromRecord(record, call.reply ? call.reply->content : std::string());
  if (!record.extraction_error.empty()) {
    Report(attempt.number, fmt::format("candidate {}: no kernel ({})", attempt.number, FirstLine(record.extraction_error, 100)));
  }
  return attempt;
}

Result<LoopOutcome> OptimizeLoop::Run() {
  auto loaded = LoadRunState(store_, run_id_);
  if (!loaded.ok()) return loaded.error();
  state_ = std::move(loaded.value());
  LoopOutcome outcome;
  outcome.status = "finished";
  // Resume: what was proposed but not yet judged is judged first (a repeat of an earlier kernel
  // takes its verdict); nothing judged is redone.
  std::vector<size_t> pending;
  std::vector<std::pair<size_t, size_t>> repeats;  // (attempt, the earlier one with its kernel)
  for (size_t i = 0; i < state_.attempts.size(); ++i) {
    const auto original = EarlierSameKernel(i);
    if (state_.attempts[i].status != "pending") continue;
    if (original) {
      repeats.emplace_back(i, *original);
    } else {
      pending.push_back(i);
    }
  }
  if (!StopRequested()) {
    std::vector<std::future<Verdict>> verdicts;
    for (size_t index : pending) verdicts.push_back(StartEvaluation(index));
    if (auto status = RecordVerdicts(pending, verdicts); !status.ok()) return status.error();
    for (const auto& [index, original] : repeats) {
      if (auto status = RecordRepeat(index, original); !status.ok()) return status.error();
    }
  }
  while (outcome.stop_reason.empty()) {
    if (StopRequested()) {
      outcome.status = "stopped";
      outcome.stop_reason = "interrupted; resume with `ksmith optimize --resume " + run_id_ + "`";
      break;
    }
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
    std::vector<Step> steps = strategy_.Next(state_);
    if (steps.empty()) {
      outcome.stop_reason = fmt::format("the {} strategy has nothing left to try", strategy_.name());
      break;
    }
    // Every model call of the batch is in flight at once; each answer is recorded and its
    // evaluation queued as soon as it and those before it are in, while the later calls are
    // still running: the batch's candidates are evaluated side by side.
    std::vector<std::future<LlmCall>> calls;
    for (const auto& step : steps) {
      if (!step.asks_model()) continue;
      if (provider_ == nullptr) return MakeError(ErrorKind::kInternal, "the {} strategy asked for a model, but none is configured", strategy_.name());
      ChatRequest request = settings_.request;
      request.messages = step.messages;
      calls.push_back(std::async(std::launch::async, [this, request] { return provider_->Complete(request); }));
    }
    size_t next_call = 0;
    std::vector<std::pair<size_t, size_t>> repeats;  // (attempt, earlier attempt of this batch)
    std::vector<size_t> evaluating;
    std::vector<std::future<Verdict>> verdicts;
    for (const auto& step : steps) {
      Attempt attempt;
      if (step.asks_model()) {
        bool exhausted = false;
        auto recorded = RecordModelAnswer(step, calls[next_call++].get(), exhausted);
        if (!recorded.ok()) return recorded.error();
        if (exhausted) {
          outcome.stop_reason = "the replayed run has no more recorded answers";
          continue;  // the calls still in flight are collected, then the run ends
        }
        attempt = std::move(recorded.value());
      } else {
        CandidateRecord record;
        record.run_id = run_id_;
        record.parent_id = step.parent_id;
        record.origin = step.origin;
        record.role = step.role;
        record.source = step.source;
        record.knobs = KnobsToJson(step.knobs);
        record.search = step.search;
        auto candidate_id = store_.AddCandidate(record, &record.sequence);
        if (!candidate_id.ok()) return candidate_id.error();
        budget_.ChargeCandidate();
        record.id = *candidate_id;
        record.status = "pending";
        attempt = FromRecord(record, "");
      }
      state_.attempts.push_back(std::move(attempt));
      const size_t index = state_.attempts.size() - 1;
      if (state_.attempts.back().status == "pending" && !StopRequested()) {
        if (const auto original = EarlierSameKernel(index)) {
          // Judged already, or being judged in this batch: its verdict is this one's.
          if (state_.attempts[*original].verdict) {
            if (auto status = RecordRepeat(index, *original); !status.ok()) return status.error();
          } else {
            repeats.emplace_back(index, *original);
          }
          continue;
        }
        evaluating.push_back(index);
        verdicts.push_back(StartEvaluation(evaluating.back()));
      }
    }
    if (auto recorded = RecordVerdicts(evaluating, verdicts); !recorded.ok()) return recorded.error();
    for (const auto& [index, original] : repeats) {
      if (auto status = RecordRepeat(index, original); !status.ok()) return status.error();
    }
    if (const std::string summary = strategy_.BatchSummary(state_); !summary.empty() && !StopRequested()) {
      Report(0, summary);
    }
  }
  if (const Attempt* best = state_.Best()) outcome.best_candidate_id = best->candidate_id;
  if (auto finished = store_.FinishRun(run_id_, outcome.status, outcome.stop_reason, outcome.best_candidate_id);
      !finished.ok()) {
    return finished.error();
  }
  outcome.state = std::move(state_);
  return outcome;
}

}  // namespace ksmith
