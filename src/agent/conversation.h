// The refine conversation under a context budget: the system prompt and the task always stay,
// the best candidate so far always stays whole, the latest turns stay whole, and older turns are
// folded into a one-line-per-attempt summary so the request never exceeds the model's window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/chat_protocol.h"

namespace ksmith {

/// One attempt of the chain: what the model answered and what ksmith said back.
struct Turn {
  int64_t candidate_id = 0;  // the store's id: which candidate this is
  int64_t number = 0;        // its number in the run, the one people and the model are shown; 0: none
  std::string answer;     // the model's whole answer (assistant message)
  std::string feedback;   // RenderFeedback / RenderExtractionFeedback
  std::string summary;    // SummarizeVerdict, or the extraction error in one line
};

struct ConversationBudget {
  int64_t context_tokens = 128'000;  // the model's window
  int64_t output_tokens = 8'192;     // reserved for the answer
};

/// A conservative token estimate for budgeting (no tokenizer: about 3 characters per token).
int64_t EstimateTokens(std::string_view text);

/// The messages for the next request: system, task, then the turns, ending with a user message.
/// `best` (when set and not among the kept turns) is re-stated whole as the candidate to improve.
/// `instruction` is appended to the last user message (e.g. "the same error three times: ...").
/// Turns are dropped oldest first into the summary until the estimate fits the budget; a summary
/// too long for it loses its oldest lines. When even the system prompt, the task and the best do
/// not fit, the task prompt is cut first, then the best, the system prompt and the instruction,
/// each keeping its head: the sum of EstimateTokens over the messages never exceeds
/// context_tokens - output_tokens. Roles alternate user/assistant after the system message.
std::vector<ChatMessage> BuildConversation(const std::string& system_prompt, const std::string& task_prompt,
                                           const std::vector<Turn>& turns, const std::optional<Turn>& best,
                                           const std::string& best_source, const std::string& instruction,
                                           const ConversationBudget& budget);

}  // namespace ksmith
