#include "agent/conversation.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {
namespace {

constexpr int64_t kCharactersPerToken = 3;
// Chat formats wrap every message in a few tokens of their own (role markers, separators).
constexpr int64_t kMessageOverheadTokens = 4;
constexpr size_t kMaxSummaryLineChars = 240;
constexpr const char* kCutMarker = "\n[... cut to fit the context window]\n";

int64_t Cost(const std::vector<ChatMessage>& messages) {
  int64_t tokens = 0;
  for (const auto& message : messages) tokens += EstimateTokens(message.content) + kMessageOverheadTokens;
  return tokens;
}

// Providers reject empty messages (Anthropic does), so an empty answer or feedback says so.
std::string NonEmpty(const std::string& text, const char* placeholder) { return text.empty() ? placeholder : text; }

const char* FenceTag(std::string_view source) {
  return source.find("__global__") != std::string_view::npos || source.find("cudaStream_t") != std::string_view::npos
             ? "cuda"
             : "cpp";
}

std::string SummaryLine(size_t index, const Turn& turn) {
  std::string summary = turn.summary.empty() ? FirstLine(turn.feedback, kMaxSummaryLineChars) : turn.summary;
  std::replace(summary.begin(), summary.end(), '\n', ' ');
  const std::string id = turn.number != 0 ? fmt::format(" (candidate {})", turn.number) : "";
  return fmt::format("- attempt {}{}: {}\n", index + 1, id, FirstLine(summary, kMaxSummaryLineChars));
}

bool SameTurn(const Turn& a, const Turn& b) {
  return a.candidate_id != 0 ? a.candidate_id == b.candidate_id : a.answer == b.answer;
}

// The head of `text` within `max_tokens`, with a note that the rest was cut.
std::string TruncateToTokens(const std::string& text, int64_t max_tokens) {
  if (EstimateTokens(text) <= max_tokens) return text;
  const int64_t marker = EstimateTokens(kCutMarker);
  if (max_tokens <= marker) return std::string();
  // Whole tokens' worth of characters, less one for the marker's share of a partial token.
  const int64_t keep = (max_tokens - marker - 1) * kCharactersPerToken;
  return keep > 0 ? text.substr(0, static_cast<size_t>(keep)) + kCutMarker : std::string();
}

// The message list for one choice of how many of the oldest turns are folded into the summary
// (and how many of the oldest summary lines are left out of it).
struct Layout {
  size_t folded = 0;        // turns [0, folded) are summarized, the rest kept whole
  size_t unlisted = 0;      // of the folded turns, how many get no summary line
  std::string system;       // possibly cut, as the last resort
  std::string task;         // possibly cut
  std::string best_source;  // possibly cut
  std::string instruction;  // possibly cut
};

struct Inputs {
  const std::vector<Turn>& turns;
  const std::optional<Turn>& best;
};

std::vector<ChatMessage> Assemble(const Inputs& in, const Layout& layout) {
  std::string first = layout.task;
  if (layout.folded > 0) {
    first += "\n\n## Earlier attempts, summarized (oldest first)\n";
    if (layout.unlisted > 0) {
      first += fmt::format("({} earlier attempt{} not listed)\n", layout.unlisted, layout.unlisted == 1 ? "" : "s");
    }
    for (size_t i = layout.unlisted; i < layout.folded; ++i) first += SummaryLine(i, in.turns[i]);
  }
  std::optional<size_t> best_index;
  if (in.best) {
    for (size_t i = 0; i < in.turns.size(); ++i) {
      if (SameTurn(in.turns[i], *in.best)) best_index = i;
    }
  }
  const bool best_kept = best_index && *best_index >= layout.folded;
  if (in.best && !best_kept) {
    const std::string which =
        best_index ? fmt::format("attempt {}", *best_index + 1) : std::string("an earlier attempt");
    first +=
        fmt::format("{}## The best kernel so far ({}: {})\nImprove on this one:\n```{}\n{}\n```\n",
                    first.ends_with("\n") ? "\n" : "\n\n", which, FirstLine(in.best->summary, kMaxSummaryLineChars),
                    FenceTag(layout.best_source), layout.best_source);
  }
  std::vector<ChatMessage> messages = {{"system", layout.system}, {"user", first}};
  for (size_t i = layout.folded; i < in.turns.size(); ++i) {
    messages.push_back({"assistant", NonEmpty(in.turns[i].answer, "(empty answer)")});
    messages.push_back({"user", NonEmpty(in.turns[i].feedback, "(no feedback)")});
  }
  std::string tail;
  if (best_kept && *best_index + 1 < in.turns.size()) {
    tail += fmt::format("\n\nThe best kernel so far is attempt {} above ({}).", *best_index + 1,
                        FirstLine(in.best->summary, kMaxSummaryLineChars));
  }
  if (!layout.instruction.empty()) tail += "\n\n" + layout.instruction;
  messages.back().content += tail;
  return messages;
}

}  // namespace

int64_t EstimateTokens(std::string_view text) {
  return (static_cast<int64_t>(text.size()) + kCharactersPerToken - 1) / kCharactersPerToken;
}

std::vector<ChatMessage> BuildConversation(const std::string& system_prompt, const std::string& task_prompt,
                                           const std::vector<Turn>& turns, const std::optional<Turn>& best,
                                           const std::string& best_source, const std::string& instruction,
                                           const ConversationBudget& budget) {
  const int64_t available = std::max<int64_t>(0, budget.context_tokens - budget.output_tokens);
  const Inputs in{turns, best};
  Layout layout{0, 0, system_prompt, task_prompt, best_source, instruction};
  auto over = [&] { return Cost(Assemble(in, layout)) - available; };
  // 1. Fold the oldest turns into the summary until the rest fits, counting the summary as it
  //    would be with no line listed: the latest turns whole matter more than a long list. Turns
  //    that cannot fit even with nothing else around them are skipped without a rebuild each.
  std::vector<int64_t> kept_cost(turns.size() + 1, 0);  // of turns [i, end)
  for (size_t i = turns.size(); i-- > 0;) {
    kept_cost[i] = kept_cost[i + 1] + EstimateTokens(turns[i].answer) + EstimateTokens(turns[i].feedback) +
                   2 * kMessageOverheadTokens;
  }
  const int64_t fixed_cost = EstimateTokens(system_prompt) + EstimateTokens(task_prompt) + 2 * kMessageOverheadTokens;
  while (layout.folded < turns.size() && fixed_cost + kept_cost[layout.folded] > available) ++layout.folded;
  for (layout.unlisted = layout.folded; layout.folded < turns.size() && over() > 0;) layout.unlisted = ++layout.folded;
  // 2. List as many summary lines as fit, the newest first (listing more only costs more).
  if (over() <= 0) {
    size_t low = 0, high = layout.unlisted;
    while (low < high) {
      layout.unlisted = (low + high) / 2;
      if (over() <= 0)
        high = layout.unlisted;
      else
        low = layout.unlisted + 1;
    }
    layout.unlisted = high;
  }
  // 3. Even the fixed parts do not fit: cut the oldest material first (the task prompt, written
  //    before anything else the model saw), then the best kernel, the system prompt and finally
  //    the instruction, each from its end.
  for (std::string* part : {&layout.task, &layout.best_source, &layout.system, &layout.instruction}) {
    const int64_t excess = over();
    if (excess <= 0) break;
    *part = TruncateToTokens(*part, std::max<int64_t>(0, EstimateTokens(*part) - excess));
  }
  // 4. What is left is headers and per-message overhead in a window too small for any useful
  //    request: cut the messages' contents, first to last, rather than exceed it.
  std::vector<ChatMessage> messages = Assemble(in, layout);
  for (auto& message : messages) {
    const int64_t excess = Cost(messages) - available;
    if (excess <= 0) break;
    message.content = TruncateToTokens(message.content, std::max<int64_t>(0, EstimateTokens(message.content) - excess));
  }
  return messages;
}

}  // namespace ksmith
