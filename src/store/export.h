// Exports a recorded run as JSONL training data: one JSON object per line, built only from what
// the store holds (the request bodies sent, the replies received, the verdicts).
//
// Prompt messages come from the LLM call's request body, normalized to [{role, content}]:
// OpenAI's "messages" as they are; Anthropic's "system" becomes a leading {"role": "system"}
// message. Content given as a list of blocks ([{"type": "text", "text": ...}]) is joined into
// one string; blocks that are not text are left out.
//
// kTrajectory: one line per candidate, in sequence order, failures included:
//   {run_id, task, backend, sequence, candidate_id, parent_id, origin, role, messages, response,
//    source, knobs, status, speedup, verdict}
//   messages is [] and response null when the candidate came from no LLM call (tune, seed);
//   response is also null when the call got no reply. parent_id, speedup, verdict may be null.
//
// kSft: one line per passed candidate that came from an LLM call with a reply:
//   {"messages": prompt messages + {"role": "assistant", "content": reply content},
//    "speedup", "task", "run_id", "candidate_id"}
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
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "store/run_store.h"

namespace ksmith {

enum class ExportFormat { kTrajectory, kSft, kPairs };

/// "trajectory", "sft" or "pairs"; anything else is kInvalidArgument listing the valid names.
Result<ExportFormat> ParseExportFormat(std::string_view name);
const char* ExportFormatName(ExportFormat format);

/// A request body's prompt as [{role, content}] (see above); [] when it has none.
nlohmann::json PromptMessages(const nlohmann::json& request_body);

/// Writes the run as JSONL and returns the number of lines written. kNotFound for an unknown run;
/// kIo when `out` fails.
Result<size_t> ExportRun(const RunStore& store, const std::string& run_id, ExportFormat format,
                         std::ostream& out);

}  // namespace ksmith
