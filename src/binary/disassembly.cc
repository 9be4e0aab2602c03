#include "binary/disassembly.h"

#include <sstream>

#include "core/strings.h"
#include "core/subprocess.h"

namespace ksmith {

Result<std::string> Disassemble(const std::filesystem::path& shared_object) {
  SpawnOptions options;
  options.argv = {"objdump", "-d", "--no-show-raw-insn", "-M", "att", shared_object.string()};
  options.environment = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  auto run = RunCommand(options, std::chrono::seconds(60), size_t{256} << 20);
  if (!run.ok()) return run.error();
  if (!run->succeeded()) {
    return MakeError(ErrorKind::kIo, "objdump failed on {} ({}): {}", shared_object.string(),
                     run->Describe(), Tail(run->output, 500));
  }
  return std::move(run->output);
}

Result<std::vector<InstructionUse>> FindInstructions(const std::filesystem::path& shared_object,
                                                     const std::vector<std::string>& mnemonics) {
  auto text = Disassemble(shared_object);
  if (!text.ok()) return text.error();
  std::vector<InstructionUse> uses;
  std::string function;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    // "0000000000001139 <name>:" opens a function; "    1139:\tmnemonic operands" is code.
    if (!line.empty() && line.back() == ':' && line.find('<') != std::string::npos) {
      function = line.substr(line.find('<') + 1, line.rfind('>') - line.find('<') - 1);
      continue;
    }
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || line.find(':') > tab) continue;
    std::istringstream words(line.substr(tab + 1));
    std::string first, second, third;
    words >> first >> second >> third;
    for (const auto& wanted : mnemonics) {
      const auto space = wanted.find(' ');
      if (space != std::string::npos) {
        const std::string name = wanted.substr(0, space), operand = wanted.substr(space + 1);
        if ((first == name && second == operand) || (second == name && third == operand)) {
          uses.push_back({wanted, function});
        }
      } else if (first == wanted || second == wanted) {  // second: after a prefix (lock, rep...)
        uses.push_back({wanted, function});
      }
    }
  }
  return uses;
}

}  // namespace ksmith
