#include "core/strings.h"

#include <algorithm>

#include <fmt/format.h>

namespace ksmith {

std::string_view Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> NearestNames(std::string_view name,
                                      const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& candidate : candidates) {
    size_t distance = EditDistance(name, candidate);
    const bool contains = !name.empty() && (candidate.find(name) != std::string::npos ||
                                            name.find(candidate) != std::string_view::npos);
    if (contains) distance = std::min<size_t>(distance, 1);
    if (distance <= limit) scored.emplace_back(distance, candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> nearest;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) nearest.push_back(scored[i].second);
  return nearest;
}

std::string TrimLog(std::string_view log, size_t max_lines, size_t max_bytes) {
  const auto lines = SplitLines(log);
  // Compiler logs put the cause first; show from the first error, not the tail.
  size_t first = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("error") != std::string::npos ||
        lines[i].find("undefined reference") != std::string::npos) {
      first = i > 0 && lines[i - 1].find("In function") != std::string::npos ? i - 1 : i;
      break;
    }
  }
  std::string kept;
  size_t kept_lines = 0;
  for (size_t i = first; i < lines.size() && kept_lines < max_lines; ++i, ++kept_lines) {
    if (kept.size() + lines[i].size() + 1 > max_bytes) break;
    kept += lines[i];
    kept += '\n';
  }
  const size_t omitted = lines.size() - kept_lines;
  if (omitted > 0) kept += fmt::format("[... {} more lines of the log omitted]\n", omitted);
  return kept;
}

std::string Tail(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string_view tail = text.substr(text.size() - max_bytes);
  const auto newline = tail.find('\n');
  if (newline != std::string_view::npos && newline + 1 < tail.size()) tail.remove_prefix(newline + 1);
  return "[...]\n" + std::string(tail);
}

std::string FirstLine(std::string_view text, size_t max_chars) {
  text = Trim(text);
  const size_t newline = text.find('\n');
  std::string line(Trim(text.substr(0, newline)));
  const bool cut = newline != std::string_view::npos || line.size() > max_chars;
  if (line.size() > max_chars) line.resize(max_chars);
  if (cut) line += "...";
  return line;
}

std::string AlignedTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t column = 0; column < row.size(); ++column) widths[column] = std::max(widths[column], row[column].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (size_t column = 0; column < row.size(); ++column) {
      line += column + 1 < row.size() ? fmt::format("{:<{}}  ", row[column], widths[column]) : row[column];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

}  // namespace ksmith
