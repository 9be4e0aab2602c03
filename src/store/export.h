// Exports a recorded run as JSONL training data: one JSON object per line, built only from what
// the store holds (the request bodies sent, the replies received, the verdicts). docs/export.md
// is the user's reference; this is the contract in brief.
//
// Prompt messages come from the LLM call's request body, normalized to [{role, content}]:
// OpenAI's "messages" as they are; Anthropic's "system" becomes a leading {"role": "system"}
// message. Content given as a list of blocks ([{"type": "text", "text": ...}]) is joined into
// one string; blocks that are not text are left out.
//
// Candidates are named by their number in the run ("candidate", "parent": 1, 2, 3..., as the
// summary, report.md and `runs show` give them); "candidate_id" and "parent_id" are the store's
// ids, unique across its runs.
//
// kTrajectory: one line per candidate, in sequence order, failures included:
//   {run_id, task, backend, sequence, candidate, parent, candidate_id, parent_id, origin, role,
//    messages, response, source, knobs, status, speedup, verdict}
//   messages is [] and response null when the candidate came from no LLM call (tune, seed);
//   response is also null when the call got no reply. parent, parent_id, speedup, verdict may
//   be null.
//
// kSft: one line per passed candidate that came from an LLM call with a reply:
//   {"messages": prompt messages + {"role": "assistant", "content": reply content, "weight": 1},
//    "speedup", "task", "run_id", "candidate", "candidate_id"}
//   Every assistant message carries "weight" (the chat fine-tuning convention: 0 is context, not
//   learned): 1 only for an answer of this run whose verdict passed, found by its exact text among
//   the run's passed answers; 0 for any other (a refine conversation's wrong first answer, a
//   repeat of it, a text cut to fit the window).
//
// kSftFinal: at most one line per run: the run's first prompt (its first model request: the
//   system prompt and the task, before any feedback) and the best passing answer (the highest
//   speedup; an untimed pass counts as 0; the earliest on a tie), weight 1. Same keys as kSft.
//
// kPairs: preference pairs between LLM candidates that started from the same point. LLM
//   candidates with a reply are grouped by parent_id (no parent is a group of its own). Within a
//   group, chosen is a passed candidate; rejected is one whose answer failed (any status but
//   passed, pending and infra_error, which is the evaluator's fault, extraction_failed included)
//   or a passed one at least 5% slower (rejected speedup * 1.05 <= chosen speedup; both timed).
//   Each (chosen, rejected) pair is written once, and never when both replies are the same text.
//   The prompt is the chosen candidate's messages. Groups come in order of their first
//   candidate, pairs in order of (chosen sequence, rejected sequence):
//   {"prompt": messages, "chosen": reply content, "rejected": reply content, "chosen_status",
//    "rejected_status", "chosen_speedup", "rejected_speedup", "task", "run_id"}
//
// A run can hold no example of a format (a tune run has no model answers; a run where no answer
// passed has no SFT example): nothing is written, and the result's note says why.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "store/run_store.h"

namespace ksmith {

enum class ExportFormat { kTrajectory, kSft, kSftFinal, kPairs };

/// "trajectory", "sft", "sft-final" or "pairs"; anything else is kInvalidArgument listing the
/// valid names.
Result<ExportFormat> ParseExportFormat(std::string_view name);
const char* ExportFormatName(ExportFormat format);

/// A request body's prompt as [{role, content}] (see above); [] when it has none.
nlohmann::json PromptMessages(const nlohmann::json& request_body);

struct ExportResult {
  size_t lines = 0;  // written
  /// When no line was written, why: what the run lacks for this format, and which format would
  /// export what it has. "" when lines were written.
  std::string note;
};

/// Writes the run as JSONL. kNotFound for an unknown run; kIo when `out` fails.
Result<ExportResult> ExportRun(const RunStore& store, const std::string& run_id, ExportFormat format,
                               std::ostream& out);

}  // namespace ksmith
