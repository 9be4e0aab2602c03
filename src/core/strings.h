// Small string helpers shared by the CLI, the task loader and the verdict renderer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ksmith {

std::string_view Trim(std::string_view text);
std::vector<std::string> SplitLines(std::string_view text);

/// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(std::string_view a, std::string_view b);

/// The candidates closest to `name` (distance <= max(2, |name|/3)), nearest first, at most 3.
std::vector<std::string> NearestNames(std::string_view name, const std::vector<std::string>& candidates);

/// Keeps a log readable: at most `max_lines` lines and `max_bytes` bytes, starting at the first
/// error (or linker "undefined reference"), with a note saying how much was cut.
std::string TrimLog(std::string_view log, size_t max_lines, size_t max_bytes);

/// The first line of `text`, at most `max_chars` long ("..." marks a cut): for one-line messages.
std::string FirstLine(std::string_view text, size_t max_chars);

/// The last `max_bytes` of `text`, starting at a line boundary when possible.
std::string Tail(std::string_view text, size_t max_bytes);

/// Rows of cells, padded so that each column lines up (two spaces between); the last column is
/// not padded, and no line ends in spaces.
std::string AlignedTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace ksmith
