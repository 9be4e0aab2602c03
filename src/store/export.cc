#include "store/export.h"

#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "eval/verdict.h"

namespace ksmith {
namespace {

using nlohmann::json;

// A passed answer this much slower than another is the worse of a preference pair: below it,
// timing noise could make the "preference" a coin flip.
constexpr double kMinPreferredSpeedupRatio = 1.05;

struct RunContents {
  RunRecord run;
  std::vector<CandidateRecord> candidates;
  std::map<int64_t, LlmCallRecord> calls_by_id;
  std::optional<int64_t> first_call_id;   // the run's first model request
  std::map<int64_t, int64_t> number_of;   // store id -> number in the run
};

Result<RunContents> Load(const RunStore& store, const std::string& run_id) {
  RunContents contents;
  auto run = store.GetRun(run_id);
  if (!run.ok()) return run.error();
  contents.run = std::move(run).value();
  auto candidates = store.Candidates(run_id);
  if (!candidates.ok()) return candidates.error();
  contents.candidates = std::move(candidates).value();
  auto calls = store.LlmCalls(run_id);
  if (!calls.ok()) return calls.error();
  if (!calls->empty()) contents.first_call_id = calls->front().id;  // LlmCalls are in sequence order
  for (auto& call : *calls) contents.calls_by_id.emplace(call.id, std::move(call));
  contents.number_of = CandidateNumbers(contents.candidates);
  return contents;
}

// Both protocols allow content as a plain string or as a list of typed blocks.
std::string TextOf(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (!content.is_array()) return text;
  for (const auto& block : content) {
    if (block.is_object() && block.value("type", std::string()) == "text" && block.contains("text") &&
        block["text"].is_string()) {
      text += block["text"].get<std::string>();
    }
  }
  return text;
}

// The call a candidate answered with, when it has a reply to learn from. A kernel the person
// edited before it was judged (`--interactive`) is not the model's answer: its verdict says
// nothing about what the model wrote.
const LlmCallRecord* AnsweringCall(const RunContents& contents, const CandidateRecord& candidate) {
  if (!candidate.llm_call_id || candidate.origin == "edited") return nullptr;
  const auto found = contents.calls_by_id.find(*candidate.llm_call_id);
  if (found == contents.calls_by_id.end() || !found->second.call.reply) return nullptr;
  return &found->second;
}

json OptionalJson(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

// A parent by its number in the run; null when there is none.
json ParentNumber(const RunContents& contents, const CandidateRecord& candidate) {
  if (!candidate.parent_id) return nullptr;
  const auto found = contents.number_of.find(*candidate.parent_id);
  return found != contents.number_of.end() ? json(found->second) : json(nullptr);
}

bool Passed(const CandidateRecord& candidate) {
  return candidate.status == VerdictStatusName(VerdictStatus::kPassed);
}

// A failure of the model's answer. Pending means not judged yet, and an infra error is the
// evaluator's fault: neither says anything about the answer.
bool AnswerFailed(const CandidateRecord& candidate) {
  return !Passed(candidate) && candidate.status != "pending" &&
         candidate.status != VerdictStatusName(VerdictStatus::kInfraError);
}

bool ClearlySlower(const CandidateRecord& slower, const CandidateRecord& faster) {
  return Passed(slower) && slower.speedup && faster.speedup &&
         *slower.speedup * kMinPreferredSpeedupRatio <= *faster.speedup;
}

class LineWriter {
 public:
  explicit LineWriter(std::ostream& out) : out_(out) {}
  void Write(const json& line) {
    out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    ++lines_;
  }
  size_t lines() const { return lines_; }

 private:
  std::ostream& out_;
  size_t lines_ = 0;
};

void WriteTrajectory(const RunContents& contents, LineWriter& writer) {
  for (const CandidateRecord& candidate : contents.candidates) {
    json messages = json::array();
    json response = nullptr;
    if (candidate.llm_call_id) {
      if (const auto found = contents.calls_by_id.find(*candidate.llm_call_id); found != contents.calls_by_id.end()) {
        messages = PromptMessages(found->second.call.request);
        if (found->second.call.reply) response = found->second.call.reply->content;
      }
    }
    writer.Write({{"run_id", contents.run.id},
                  {"task", contents.run.task},
                  {"backend", contents.run.backend},
                  {"sequence", candidate.sequence},
                  {"candidate", candidate.number()},
                  {"parent", ParentNumber(contents, candidate)},
                  {"candidate_id", candidate.id},
                  {"parent_id", candidate.parent_id ? json(*candidate.parent_id) : json(nullptr)},
                  {"origin", candidate.origin},
                  {"role", candidate.role},
                  {"messages", messages},
                  {"response", response},
                  {"source", candidate.source},
                  {"knobs", candidate.knobs},
                  {"search", candidate.search},
                  {"status", candidate.status},
                  {"speedup", OptionalJson(candidate.speedup)},
                  {"verdict", candidate.verdict ? *candidate.verdict : json(nullptr)}});
  }
}

// The exact texts of the run's answers that passed: an assistant message of a later prompt with one
// of them is an answer to learn; any other is context (a wrong answer, or one cut to fit).
std::set<std::string> PassedAnswers(const RunContents& contents) {
  std::set<std::string> texts;
  for (const CandidateRecord& candidate : contents.candidates) {
    const LlmCallRecord* call = AnsweringCall(contents, candidate);
    if (call != nullptr && Passed(candidate)) texts.insert(call->call.reply->content);
  }
  return texts;
}

// `prompt` with a weight on each assistant message, then `answer` (which passed), weight 1.
json WeightedMessages(json prompt, const std::string& answer, const std::set<std::string>& passed_answers) {
  for (json& message : prompt) {
    if (message["role"] != "assistant") continue;
    message["weight"] = passed_answers.count(message["content"].get<std::string>()) > 0 ? 1 : 0;
  }
  prompt.push_back({{"role", "assistant"}, {"content", answer}, {"weight", 1}});
  return prompt;
}

json SftLine(const RunContents& contents, const CandidateRecord& candidate, json messages) {
  return {{"messages", std::move(messages)},
          {"speedup", OptionalJson(candidate.speedup)},
          {"task", contents.run.task},
          {"run_id", contents.run.id},
          {"candidate", candidate.number()},
          {"candidate_id", candidate.id}};
}

void WriteSft(const RunContents& contents, LineWriter& writer) {
  const std::set<std::string> passed_answers = PassedAnswers(contents);
  for (const CandidateRecord& candidate : contents.candidates) {
    const LlmCallRecord* call = AnsweringCall(contents, candidate);
    if (call == nullptr || !Passed(candidate)) continue;
    writer.Write(SftLine(contents, candidate,
                         WeightedMessages(PromptMessages(call->call.request), call->call.reply->content,
                                          passed_answers)));
  }
}

void WriteSftFinal(const RunContents& contents, LineWriter& writer) {
  const CandidateRecord* best = nullptr;
  const LlmCallRecord* best_call = nullptr;
  for (const CandidateRecord& candidate : contents.candidates) {
    const LlmCallRecord* call = AnsweringCall(contents, candidate);
    if (call == nullptr || !Passed(candidate)) continue;
    if (best == nullptr || candidate.speedup.value_or(0) > best->speedup.value_or(0)) {
      best = &candidate;
      best_call = call;
    }
  }
  if (best == nullptr || !contents.first_call_id) return;
  // The first request of a run holds no feedback; were it ever to hold a turn, the prompt still
  // stops before the first answer.
  json prompt = json::array();
  for (const json& message : PromptMessages(contents.calls_by_id.at(*contents.first_call_id).call.request)) {
    if (message["role"] == "assistant") break;
    prompt.push_back(message);
  }
  writer.Write(SftLine(contents, *best, WeightedMessages(std::move(prompt), best_call->call.reply->content, {})));
}

// Why a format found nothing to write in the run, and what would export what it has.
std::string EmptyNote(const RunContents& contents, ExportFormat format) {
  const std::string& id = contents.run.id;
  if (contents.candidates.empty()) return fmt::format("run {} has no candidates yet", id);
  if (format == ExportFormat::kTrajectory) return {};
  size_t answers = 0, passed = 0;
  for (const CandidateRecord& candidate : contents.candidates) {
    if (AnsweringCall(contents, candidate) == nullptr) continue;
    ++answers;
    if (Passed(candidate)) ++passed;
  }
  if (answers == 0) {
    return fmt::format(
        "run {} has no model answers to learn from: its {} candidate{} came from the {} strategy, not from a "
        "model (`--format trajectory` exports them)",
        id, contents.candidates.size(), contents.candidates.size() == 1 ? "" : "s", contents.run.strategy);
  }
  if (passed == 0) {
    return fmt::format(
        "none of the {} model answer{} of run {} passed, and an SFT example or a preference pair needs one that "
        "did (`--format trajectory` exports the failures)",
        answers, answers == 1 ? "" : "s", id);
  }
  return fmt::format(
      "run {} has no preference pair: a pair is a passing answer and a failed or clearly slower one to the same "
      "prompt (`--format sft` exports the passing answers)",
      id);
}

struct Answer {
  const CandidateRecord* candidate;
  const LlmCallRecord* call;
};

void WritePairs(const RunContents& contents, LineWriter& writer) {
  // Groups by starting point, in order of their first candidate.
  std::vector<std::pair<std::optional<int64_t>, std::vector<Answer>>> groups;
  for (const CandidateRecord& candidate : contents.candidates) {
    const LlmCallRecord* call = AnsweringCall(contents, candidate);
    if (call == nullptr) continue;
    auto group = groups.begin();
    while (group != groups.end() && group->first != candidate.parent_id) ++group;
    if (group == groups.end()) {
      groups.emplace_back(candidate.parent_id, std::vector<Answer>());
      group = std::prev(groups.end());
    }
    group->second.push_back({&candidate, call});
  }
  for (const auto& [parent_id, answers] : groups) {
    for (const Answer& chosen : answers) {
      if (!Passed(*chosen.candidate)) continue;
      for (const Answer& rejected : answers) {
        if (rejected.candidate == chosen.candidate) continue;
        if (!AnswerFailed(*rejected.candidate) && !ClearlySlower(*rejected.candidate, *chosen.candidate)) continue;
        const std::string& chosen_text = chosen.call->call.reply->content;
        const std::string& rejected_text = rejected.call->call.reply->content;
        if (chosen_text == rejected_text) continue;  // teaches nothing
        writer.Write({{"prompt", PromptMessages(chosen.call->call.request)},
                      {"chosen", chosen_text},
                      {"rejected", rejected_text},
                      {"chosen_status", chosen.candidate->status},
                      {"rejected_status", rejected.candidate->status},
                      {"chosen_speedup", OptionalJson(chosen.candidate->speedup)},
                      {"rejected_speedup", OptionalJson(rejected.candidate->speedup)},
                      {"task", contents.run.task},
                      {"run_id", contents.run.id}});
      }
    }
  }
}

}  // namespace

Result<ExportFormat> ParseExportFormat(std::string_view name) {
  for (ExportFormat format :
       {ExportFormat::kTrajectory, ExportFormat::kSft, ExportFormat::kSftFinal, ExportFormat::kPairs}) {
    if (name == ExportFormatName(format)) return format;
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   "unknown export format '{}' (valid: trajectory, sft, sft-final, pairs)", name);
}

const char* ExportFormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::kTrajectory: return "trajectory";
    case ExportFormat::kSft: return "sft";
    case ExportFormat::kSftFinal: return "sft-final";
    case ExportFormat::kPairs: return "pairs";
  }
  return "trajectory";
}

json PromptMessages(const json& request_body) {
  json messages = json::array();
  if (!request_body.is_object()) return messages;
  // Anthropic keeps the system prompt apart; training data wants it as the first message.
  if (request_body.contains("system")) {
    const std::string system = TextOf(request_body["system"]);
    if (!system.empty()) messages.push_back({{"role", "system"}, {"content", system}});
  }
  const auto listed = request_body.value("messages", json::array());
  if (!listed.is_array()) return messages;
  for (const auto& message : listed) {
    if (!message.is_object()) continue;
    const auto role = message.value("role", json());
    messages.push_back({{"role", role.is_string() ? role.get<std::string>() : std::string()},
                        {"content", TextOf(message.value("content", json()))}});
  }
  return messages;
}

Result<ExportResult> ExportRun(const RunStore& store, const std::string& run_id, ExportFormat format,
                               std::ostream& out) {
  auto contents = Load(store, run_id);
  if (!contents.ok()) return contents.error();
  LineWriter writer(out);
  switch (format) {
    case ExportFormat::kTrajectory: WriteTrajectory(*contents, writer); break;
    case ExportFormat::kSft: WriteSft(*contents, writer); break;
    case ExportFormat::kSftFinal: WriteSftFinal(*contents, writer); break;
    case ExportFormat::kPairs: WritePairs(*contents, writer); break;
  }
  out.flush();
  if (!out) return MakeError(ErrorKind::kIo, "cannot write the export of run '{}'", run_id);
  ExportResult result;
  result.lines = writer.lines();
  if (result.lines == 0) result.note = EmptyNote(*contents, format);
  return result;
}

}  // namespace ksmith
