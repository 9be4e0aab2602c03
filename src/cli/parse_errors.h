// CLI11's parse errors in ksmith's one error style: `<what>, <where>; <what to do>`, naming the
// word that was wrong and the nearest flag or command it may have meant.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ksmith {

/// The message for `error`, raised while `root` parsed `args` (argv without the program name).
/// Without the "ksmith: error: " prefix.
std::string DescribeParseError(const CLI::App& root, const CLI::ParseError& error, const std::vector<std::string>& args);

}  // namespace ksmith
