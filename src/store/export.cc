#include "store/export.h"

#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

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
  for (auto& call : *calls) contents.calls_by_id.emplace(call.id, std::move(call));
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

// The call a candidate answered with, when it has a reply to learn from.
const LlmCallRecord* AnsweringCall(const RunContents& contents, const CandidateRecord& candidate) {
  if (!candidate.llm_call_id) return nullptr;
  const auto found = contents.calls_by_id.find(*candidate.llm_call_id);
  if (found == contents.calls_by_id.end() || !found->second.call.reply) return nullptr;
  return &found->second;
}

json OptionalJson(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

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
                  {"candidate_id", candidate.id},
                  {"parent_id", candidate.parent_id ? json(*candidate.parent_id) : json(nullptr)},
                  {"origin", candidate.origin},
                  {"role", candidate.role},
                  {"messages", messages},
                  {"response", response},
                  {"source", candidate.source},
                  {"knobs", candidate.knobs},
                  {"status", candidate.status},
                  {"speedup", OptionalJson(candidate.speedup)},
                  {"verdict", candidate.verdict ? *candidate.verdict : json(nullptr)}});
  }
}

void WriteSft(const RunContents& contents, LineWriter& writer) {
  for (const CandidateRecord& candidate : contents.candidates) {
    const LlmCallRecord* call = AnsweringCall(contents, candidate);
    if (call == nullptr || !Passed(candidate)) continue;
    json messages = PromptMessages(call->call.request);
    messages.push_back({{"role", "assistant"}, {"content", call->call.reply->content}});
    writer.Write({{"messages", messages},
                  {"speedup", OptionalJson(candidate.speedup)},
                  {"task", contents.run.task},
                  {"run_id", contents.run.id},
                  {"candidate_id", candidate.id}});
  }
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
  for (ExportFormat format : {ExportFormat::kTrajectory, ExportFormat::kSft, ExportFormat::kPairs}) {
    if (name == ExportFormatName(format)) return format;
  }
  return MakeError(ErrorKind::kInvalidArgument, "unknown export format '{}' (valid: trajectory, sft, pairs)", name);
}

const char* ExportFormatName(ExportFormat format) {
  switch (format) {
    case ExportFormat::kTrajectory: return "trajectory";
    case ExportFormat::kSft: return "sft";
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

Result<size_t> ExportRun(const RunStore& store, const std::string& run_id, ExportFormat format, std::ostream& out) {
  auto contents = Load(store, run_id);
  if (!contents.ok()) return contents.error();
  LineWriter writer(out);
  switch (format) {
    case ExportFormat::kTrajectory: WriteTrajectory(*contents, writer); break;
    case ExportFormat::kSft: WriteSft(*contents, writer); break;
    case ExportFormat::kPairs: WritePairs(*contents, writer); break;
  }
  out.flush();
  if (!out) return MakeError(ErrorKind::kIo, "cannot write the export of run '{}'", run_id);
  return writer.lines();
}

}  // namespace ksmith
