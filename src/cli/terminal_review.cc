#include "cli/terminal_review.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "agent/feedback.h"
#include "core/files.h"
#include "core/strings.h"
#include "core/unified_diff.h"

namespace ksmith {
namespace {

constexpr size_t kRationaleLines = 20;
constexpr size_t kDiffLines = 80;

// At most `max_lines` of `text`, each indented, and how many more there were.
std::string Indented(std::string_view text, size_t max_lines) {
  const std::vector<std::string> lines = SplitLines(text);
  std::string shown;
  for (size_t i = 0; i < lines.size() && i < max_lines; ++i) shown += "  " + lines[i] + "\n";
  if (lines.size() > max_lines) shown += fmt::format("  ... {} more lines ([v]iew shows the whole kernel)\n", lines.size() - max_lines);
  return shown;
}

std::string Describe(const Attempt& attempt) {
  std::string status = attempt.status;
  if (attempt.speedup) status += fmt::format(" {:.2f}x", *attempt.speedup);
  return status;
}

// The first word of a line, lowercased, and the rest trimmed.
std::pair<std::string, std::string> Command(const std::string& line) {
  const std::string_view trimmed = Trim(line);
  const size_t space = trimmed.find_first_of(" \t");
  std::string word(trimmed.substr(0, space));
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string rest(space == std::string_view::npos ? std::string_view() : Trim(trimmed.substr(space)));
  return {word, rest};
}

const char* kHelp =
    "  a, approve          judge the kernel as it is\n"
    "  e, edit             open it in your editor ($VISUAL, $EDITOR), then judge it as you left it\n"
    "  c, constraint TEXT  add a rule every later prompt carries (\"keep block size 256\"), then decide\n"
    "  r, rollback N       set this proposal aside and go on from candidate N (refine)\n"
    "  v, view             show the whole kernel\n"
    "  s, stop             set this proposal aside and end the run\n";

}  // namespace

std::string EditorFromEnvironment() {
  for (const char* name : {"VISUAL", "EDITOR"}) {
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return value;
  }
  return "vi";
}

TerminalReviewer::TerminalReviewer(std::istream& in, std::FILE* out, std::string editor)
    : in_(in), out_(out), editor_(std::move(editor)) {}

void TerminalReviewer::Print(const std::string& text) {
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

std::optional<std::string> TerminalReviewer::Ask(const std::string& prompt) {
  Print(prompt);
  std::string line;
  if (!std::getline(in_, line)) return std::nullopt;
  return line;
}

void TerminalReviewer::ShowProposal(const ProposalView& proposal, const RunState& state) {
  std::string text = fmt::format("\n==== candidate {} proposed", proposal.number);
  if (!proposal.role.empty()) text += " by the " + proposal.role;
  if (proposal.parent != nullptr) text += fmt::format(", from candidate {} ({})", proposal.parent->number, Describe(*proposal.parent));
  text += " ====\n";
  if (!proposal.explanation.empty()) text += "Rationale:\n" + Indented(proposal.explanation, kRationaleLines);
  if (!proposal.knobs.empty()) text += "Knobs: " + proposal.knobs.dump() + "\n";
  if (proposal.parent != nullptr && !proposal.parent->source.empty()) {
    auto diff = UnifiedDiff(proposal.parent->source, proposal.source, fmt::format("candidate {}", proposal.parent->number),
                            fmt::format("candidate {}", proposal.number));
    if (!diff.ok()) {
      text += "(no diff: " + diff.error().message + ")\n" + Indented(proposal.source, kDiffLines);
    } else if (diff->empty()) {
      text += fmt::format("The same kernel as candidate {}.\n", proposal.parent->number);
    } else {
      text += fmt::format("Diff against candidate {}:\n", proposal.parent->number) + Indented(*diff, kDiffLines);
    }
  } else {
    text += fmt::format("The kernel ({} lines):\n", SplitLines(proposal.source).size()) + Indented(proposal.source, kDiffLines);
  }
  if (const auto constraints = state.Constraints(); !constraints.empty()) {
    text += "Constraints in every prompt:\n";
    for (const auto& constraint : constraints) text += "  - " + constraint + "\n";
  }
  Print(text);
}

ReviewAction TerminalReviewer::Review(const ProposalView& proposal, const RunState& state, bool can_roll_back) {
  using Kind = ReviewAction::Kind;
  ShowProposal(proposal, state);
  const std::string menu = can_roll_back ? "[a]pprove [e]dit [c]onstraint [r]ollback N [v]iew [s]top [?]help > "
                                         : "[a]pprove [e]dit [c]onstraint [v]iew [s]top [?]help > ";
  while (true) {
    const std::optional<std::string> line = Ask(menu);
    if (!line) {
      Print("\n(the input ended: stopping the run)\n");
      return {Kind::kStop};
    }
    const auto [word, rest] = Command(*line);
    if (word == "a" || word == "approve") return {Kind::kApprove};
    if (word == "s" || word == "stop") return {Kind::kStop};
    if (word == "v" || word == "view") {
      Print(Indented(proposal.source, SIZE_MAX));
      continue;
    }
    if (word == "e" || word == "edit") {
      if (auto edited = Edit(proposal)) return {Kind::kEdit, std::move(*edited)};
      continue;
    }
    if (word == "c" || word == "constraint") {
      std::string constraint = rest;
      if (constraint.empty()) {
        const auto typed = Ask("constraint (one line; empty to cancel) > ");
        if (!typed) return {Kind::kStop};
        constraint = std::string(Trim(*typed));
      }
      if (constraint.empty()) continue;
      return {Kind::kConstrain, constraint};
    }
    if ((word == "r" || word == "rollback") && can_roll_back) {
      std::string target = rest;
      if (target.empty()) {
        std::string kernels;
        for (const auto& attempt : state.attempts) {
          if (!attempt.source.empty()) kernels += fmt::format("  {}: {}\n", attempt.number, Describe(attempt));
        }
        if (kernels.empty()) {
          Print("  no earlier kernel to roll back to\n");
          continue;
        }
        Print("Kernels of this run:\n" + kernels);
        const auto typed = Ask("roll back to candidate (empty to cancel) > ");
        if (!typed) return {Kind::kStop};
        target = std::string(Trim(*typed));
        if (target.empty()) continue;
      }
      int64_t number = 0;
      std::istringstream parse(target);
      if (!(parse >> number) || !parse.eof()) {
        Print(fmt::format("  '{}' is not a candidate number\n", target));
        continue;
      }
      const bool known = std::any_of(state.attempts.begin(), state.attempts.end(), [number](const Attempt& attempt) {
        return attempt.number == number && !attempt.source.empty();
      });
      if (!known) {
        Print(fmt::format("  no candidate {} with a kernel in this run\n", number));
        continue;
      }
      return {Kind::kRollBack, "", number};
    }
    if (word == "?" || word == "h" || word == "help") {
      Print(kHelp);
      continue;
    }
    Print(fmt::format("  '{}' is not a choice here\n{}", Trim(*line), kHelp));
  }
}

std::optional<std::string> TerminalReviewer::Edit(const ProposalView& proposal) {
  ScopedTempDir folder("ksmith-edit-");
  if (!folder.ok()) {
    Print("  cannot edit: " + folder.error() + "\n");
    return std::nullopt;
  }
  const auto path = folder.path() / fmt::format("candidate-{}{}", proposal.number, proposal.file_extension);
  if (Status written = WriteFileAtomic(path, proposal.source); !written.ok()) {
    Print("  cannot edit: " + written.error().message + "\n");
    return std::nullopt;
  }
  // The editor gets the terminal. $EDITOR may carry arguments ("code --wait"): it is a command
  // line, and the path one quoted word at its end.
  std::string quoted = "'";
  for (char c : path.string()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const std::string command = editor_ + " " + quoted + "'";
  const int status = std::system(command.c_str());
  if (status != 0) {
    Print(fmt::format("  the editor ({}) did not exit cleanly (status {}): the proposal is unchanged\n", editor_, status));
    return std::nullopt;
  }
  auto edited = ReadFile(path);
  if (!edited.ok()) {
    Print("  cannot read the edited kernel: " + edited.error().message + "\n");
    return std::nullopt;
  }
  if (*edited == proposal.source) {
    Print("  the kernel was not changed\n");
    return std::nullopt;
  }
  return std::move(edited.value());
}

void TerminalReviewer::ShowVerdict(const Attempt& attempt) {
  std::string text = fmt::format("---- candidate {}: {}", attempt.number, Describe(attempt));
  if (attempt.repeat_of) text += fmt::format(" (the same kernel as candidate {})", *attempt.repeat_of);
  text += " ----\n";
  if (attempt.verdict) text += Indented(SummarizeVerdict(*attempt.verdict), 6);
  Print(text);
}

}  // namespace ksmith
