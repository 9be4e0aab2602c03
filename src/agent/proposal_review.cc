#include "agent/proposal_review.h"

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {

const char* ReviewActionName(ReviewAction::Kind kind) {
  switch (kind) {
    case ReviewAction::Kind::kApprove: return "approve";
    case ReviewAction::Kind::kEdit: return "edit";
    case ReviewAction::Kind::kConstrain: return "constrain";
    case ReviewAction::Kind::kRollBack: return "rollback";
    case ReviewAction::Kind::kStop: return "stop";
  }
  return "approve";
}

std::string DescribeIntervention(const Intervention& intervention) {
  const std::string candidate =
      intervention.candidate_number ? fmt::format("candidate {}", *intervention.candidate_number) : "the proposal";
  if (intervention.action == "approve") return candidate + " approved as proposed";
  if (intervention.action == "edit") {
    int added = 0, removed = 0;
    bool in_hunks = false;  // past the two header lines, a line of `--n;` is a removed line
    for (const auto& line : SplitLines(intervention.detail.value("diff", std::string()))) {
      if (line.starts_with("@@")) in_hunks = true;
      if (!in_hunks) continue;
      if (line.starts_with("+")) ++added;
      if (line.starts_with("-")) ++removed;
    }
    return fmt::format("{} edited before it was judged (+{} -{} lines)", candidate, added, removed);
  }
  if (intervention.action == "constrain") return "constraint added: " + intervention.detail.value("constraint", std::string());
  if (intervention.action == "rollback") {
    return fmt::format("rolled back to candidate {} (the proposal was set aside)",
                       intervention.detail.value("to_candidate", int64_t{0}));
  }
  if (intervention.action == "stop") return "stopped the run (the proposal was set aside)";
  return intervention.action;
}

std::vector<ChatMessage> WithConstraints(std::vector<ChatMessage> messages, const std::vector<std::string>& constraints) {
  if (constraints.empty()) return messages;
  std::string block = "\n\nConstraints from the person running this search (every kernel you write must keep to them):";
  for (const auto& constraint : constraints) block += "\n- " + constraint;
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->role != "user") continue;
    it->content += block;
    return messages;
  }
  messages.push_back({"user", block.substr(2)});
  return messages;
}

}  // namespace ksmith
