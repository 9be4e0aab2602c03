#include "cli/parse_errors.h"

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {
namespace {

struct Command {
  const CLI::App* app = nullptr;
  std::string path;       // "ksmith optimize"
  std::string unmatched;  // the word after `path` that names none of its subcommands
};

// Every subcommand, parsed or not (CLI11's filterless overload gives only the parsed ones).
std::vector<const CLI::App*> AllSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// The deepest command `args` names, e.g. `ksmith runs show` for {"runs", "show", "7"}.
Command CommandOf(const CLI::App& root, const std::vector<std::string>& args) {
  Command command{&root, "ksmith"};
  for (const auto& arg : args) {
    if (arg.empty() || arg[0] == '-') continue;
    bool descended = false;
    for (const CLI::App* sub : AllSubcommands(*command.app)) {
      if (sub->get_name() == arg) {
        command = {sub, command.path + " " + arg};
        descended = true;
        break;
      }
    }
    if (!descended && !AllSubcommands(*command.app).empty()) {
      command.unmatched = arg;
      break;
    }
  }
  return command;
}

std::vector<std::string> FlagsOf(const CLI::App& app) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : app.get_options([](const CLI::Option*) { return true; })) {
    for (const auto& name : option->get_lnames()) flags.push_back("--" + name);
  }
  return flags;
}

std::vector<std::string> SubcommandsOf(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : AllSubcommands(app)) names.push_back(sub->get_name());
  return names;
}

std::string Join(const std::vector<std::string>& names, const std::string& separator) {
  std::string joined;
  for (const auto& name : names) joined += (joined.empty() ? "" : separator) + name;
  return joined;
}

// "; did you mean --max-candidates?" or "; did you mean `ksmith eval`?" (with a command
// prefix), or "".
std::string Suggestion(const std::string& word, const std::vector<std::string>& names, const std::string& command = "") {
  const auto nearest = NearestNames(word, names);
  if (nearest.empty()) return "";
  std::vector<std::string> shown;
  for (const auto& name : nearest) shown.push_back(command.empty() ? name : "`" + command + " " + name + "`");
  return "; did you mean " + Join(shown, " or ") + "?";  // the caller goes on with " See ..."
}

// One unexpected word, said for `command`.
std::string DescribeExtra(const Command& command, const std::string& word) {
  if (word.rfind("-", 0) == 0) {
    const std::string flag = word.substr(0, word.find('='));
    const std::string suggestion = Suggestion(flag, FlagsOf(*command.app));
    return fmt::format("unknown flag '{}' for `{}`{}{} `{} --help` for its flags", flag, command.path, suggestion,
                       suggestion.empty() ? "; see" : " See", command.path);
  }
  const auto subcommands = SubcommandsOf(*command.app);
  if (!subcommands.empty()) {
    const std::string suggestion = Suggestion(word, subcommands, command.path);
    return fmt::format("unknown command '{}' for `{}`{}{} `{} --help` for its commands ({})", word, command.path,
                       suggestion, suggestion.empty() ? "; see" : " See", command.path, Join(subcommands, ", "));
  }
  return fmt::format("unexpected argument '{}' for `{}`; run `{} --help` for what it takes", word, command.path,
                     command.path);
}

}  // namespace

std::string DescribeParseError(const CLI::App& root, const CLI::ParseError& error, const std::vector<std::string>& args) {
  const Command command = CommandOf(root, args);
  // CLI11 names a subcommand's errors after the subcommand: tell them apart by type.
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    // "The following argument was not expected: x" / "The following arguments were not expected: x y"
    const std::string what = error.what();
    const size_t colon = what.find(": ");
    std::vector<std::string> words;
    if (colon != std::string::npos) {
      std::string rest = what.substr(colon + 2);
      for (size_t start = 0; start < rest.size();) {
        const size_t end = rest.find(' ', start);
        const std::string word = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!word.empty()) words.push_back(word);
        if (end == std::string::npos) break;
        start = end + 1;
      }
    }
    // `ksmith runs shw 3` (a command whose subcommand is optional): the word meant as a command,
    // not the last of the extras CLI11 lists.
    if (!command.unmatched.empty() && command.unmatched.rfind("-", 0) != 0 && !AllSubcommands(*command.app).empty()) {
      return DescribeExtra(command, command.unmatched);
    }
    // A flag is the likelier slip than its value: name the first flag when there is one.
    for (const auto& word : words) {
      if (word.rfind("-", 0) == 0) return DescribeExtra(command, word);
    }
    if (!words.empty()) return DescribeExtra(command, words.front());
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr && AllSubcommands(*command.app).size() > 0 &&
      std::string(error.what()).find("ubcommand") != std::string::npos) {
    // `ksmith evaluate`, `ksmith runs shw`: the word that was meant as a command.
    if (!command.unmatched.empty()) return DescribeExtra(command, command.unmatched);
    const auto subcommands = SubcommandsOf(*command.app);
    return fmt::format("`{}` needs a command; run `{} --help` for what each does ({})", command.path, command.path,
                       Join(subcommands, ", "));
  }
  // Values: a number out of range, a word that is not a number, a missing value or file.
  return fmt::format("{}, in `{}`; run `{} --help` for what it accepts", error.what(), command.path, command.path);
}

}  // namespace ksmith
