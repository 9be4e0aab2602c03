// Verdicts turned into words a model can act on: the first compiler errors with their source
// lines, which shape and distribution failed and how, integrity violations explained, time and
// speedup with their interval, roofline position, resources. Reads the typed verdict: what failed
// comes from its fields, never from its reason; a verdict the store kept as JSON is read with
// Verdict::FromJson (older verdicts included), so a resumed run renders the same text.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "eval/verdict.h"

namespace ksmith {

/// The feedback message for one evaluated candidate. `source` is the candidate's text (for
/// quoting the lines compiler errors point at). Bounded in size whatever the verdict holds.
std::string RenderFeedback(const Verdict& verdict, std::string_view source);
/// The same for a verdict as JSON; a message saying so when it is not a verdict.
std::string RenderFeedback(const nlohmann::json& verdict, std::string_view source);

/// Feedback for an answer that yielded no kernel (the extraction error, what to do instead).
std::string RenderExtractionFeedback(const std::string& extraction_error);

/// One line (at most 220 characters) for a summary of older turns:
/// "passed, 1.84x [1.80, 1.88] (faster), 39% of the memory roofline" or
/// "wrong_output: rows=37, cols=5 normal, 3 of 185 elements off, max error 0.031 at [17]".
std::string SummarizeVerdict(const Verdict& verdict);
/// The same for a verdict as JSON; "no verdict" when it is not one.
std::string SummarizeVerdict(const nlohmann::json& verdict);

}  // namespace ksmith
