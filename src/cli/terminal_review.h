// The person in the loop at a terminal (`ksmith optimize --interactive`): each proposal is printed
// with its rationale and its diff against its parent, and a line read from the terminal decides
// what happens to it; each verdict is printed once it is in. Edits open the kernel in the person's
// editor ($VISUAL, else $EDITOR, else vi).
#pragma once

#include <cstdio>
#include <istream>
#include <string>

#include "agent/proposal_review.h"

namespace ksmith {

class TerminalReviewer : public ProposalReviewer {
 public:
  /// Reads decisions from `in`, writes to `out`; `editor` is a shell command that is given the
  /// kernel's file as its last argument.
  TerminalReviewer(std::istream& in, std::FILE* out, std::string editor);

  ReviewAction Review(const ProposalView& proposal, const RunState& state, bool can_roll_back) override;
  void ShowVerdict(const Attempt& attempt) override;

 private:
  void ShowProposal(const ProposalView& proposal, const RunState& state);
  /// The next line the person typed, without the newline; nullopt at the end of input.
  std::optional<std::string> Ask(const std::string& prompt);
  /// The kernel as the editor left it; nullopt (after saying why) when the editor failed.
  std::optional<std::string> Edit(const ProposalView& proposal);
  void Print(const std::string& text);

  std::istream& in_;
  std::FILE* out_;
  std::string editor_;
};

/// $VISUAL, else $EDITOR, else "vi".
std::string EditorFromEnvironment();

}  // namespace ksmith
