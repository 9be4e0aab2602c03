// A person in the loop (`ksmith optimize --interactive`): each proposal is shown to them before it
// is judged, with its rationale and its difference from its parent, and they decide: judge it as it
// is, edit it first, add a constraint that joins every later prompt, roll back to an earlier kernel
// (this proposal is set aside), or stop the run. The optimize loop records every decision in the
// run store (RunStore::AddIntervention), so a resumed run keeps the constraints and rollbacks and
// a run's dataset shows what the person did. The terminal is one reviewer (cli/terminal_review.h);
// the loop knows only this interface.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/strategy.h"
#include "llm/chat_protocol.h"

namespace ksmith {

/// A kernel about to be judged, as the person sees it.
struct ProposalView {
  int64_t number = 0;           // the number it gets in the run if it is judged
  std::string role;             // who proposed it ("coder"; "" for a non-model proposer)
  std::string explanation;      // the model's words before its code: its rationale (may be empty)
  std::string source;
  nlohmann::json knobs = nlohmann::json::object();  // a non-model proposer's knob setting
  const Attempt* parent = nullptr;  // the kernel it was made from, when the strategy named one
  std::string file_extension;       // ".cc", ".cu", ".py": for the editor
};

struct ReviewAction {
  enum class Kind { kApprove, kEdit, kConstrain, kRollBack, kStop };
  Kind kind = Kind::kApprove;
  std::string text;        // kEdit: the kernel as edited; kConstrain: the constraint
  int64_t to_number = 0;   // kRollBack: the candidate to continue from
};

/// "approve", "edit", "constrain", "rollback", "stop": as the store records them.
const char* ReviewActionName(ReviewAction::Kind kind);

/// One line on what the person did: "candidate 3 edited before it was judged (+2 -1 lines)".
std::string DescribeIntervention(const Intervention& intervention);

/// `messages` with the person's constraints at the end of the last user message, where the model
/// reads them last; unchanged without constraints.
std::vector<ChatMessage> WithConstraints(std::vector<ChatMessage> messages, const std::vector<std::string>& constraints);

class ProposalReviewer {
 public:
  virtual ~ProposalReviewer() = default;
  /// What the person does with `proposal`. Asked again after a constraint, until they approve,
  /// edit, roll back or stop. `can_roll_back`: whether the strategy follows rollbacks. The
  /// reviewer checks what it can (a rollback names a candidate of `state` with a kernel); the loop
  /// checks again.
  virtual ReviewAction Review(const ProposalView& proposal, const RunState& state, bool can_roll_back) = 0;
  /// The verdict of a kernel the person let through, once it is in.
  virtual void ShowVerdict(const Attempt& attempt) = 0;
};

}  // namespace ksmith
