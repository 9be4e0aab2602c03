#include "agent/code_extraction.h"

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

// The tags a model writes C-family code under, and each backend's own (its fence language, its
// file extension): a backend's code is found without a line here.
bool IsCodeLanguage(const std::string& language) {
  static const char* kLanguages[] = {"", "cpp", "c++", "cxx", "cc", "c", "hip"};
  if (std::find(std::begin(kLanguages), std::end(kLanguages), language) != std::end(kLanguages)) return true;
  for (const auto& name : BackendRegistry::Global().Names()) {
    const BackendTraits traits = TraitsOf(name);
    if (language == traits.fence_language || "." + language == traits.source_extension) return true;
  }
  return false;
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

// The fence that opens or closes a block: ``` or ~~~, possibly indented.
bool IsFence(std::string_view line, std::string_view* info) {
  const std::string_view trimmed = Trim(line);
  if (!trimmed.starts_with("```") && !trimmed.starts_with("~~~")) return false;
  *info = Trim(trimmed.substr(3));
  return true;
}

// Blanks out comments and string literals (keeping newlines), so that a function named in a
// comment or a string is not taken for a definition.
std::string CodeOnly(std::string_view code) {
  std::string out(code);
  enum { kCode, kLineComment, kBlockComment, kString, kChar } state = kCode;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '/' && next == '/') state = kLineComment, out[i] = ' ';
        else if (c == '/' && next == '*') state = kBlockComment, out[i] = ' ';
        else if (c == '"') state = kString;
        else if (c == '\'') state = kChar;
        break;
      case kLineComment:
        if (c == '\n') state = kCode; else out[i] = ' ';
        break;
      case kBlockComment:
        if (c == '*' && next == '/') { out[i] = out[i + 1] = ' '; ++i; state = kCode; }
        else if (c != '\n') out[i] = ' ';
        break;
      case kString:
      case kChar:
        if (c == '\\' && next != '\0') { out[i] = out[i + 1] = ' '; ++i; }
        else if (c == (state == kString ? '"' : '\'')) state = kCode;
        else if (c != '\n') out[i] = ' ';
        break;
    }
  }
  return out;
}

}  // namespace

std::vector<CodeBlock> FindCodeBlocks(std::string_view answer) {
  std::vector<CodeBlock> blocks;
  bool inside = false;
  CodeBlock current;
  for (const auto& line : SplitLines(answer)) {
    std::string_view info;
    if (IsFence(line, &info)) {
      if (inside) {
        blocks.push_back(std::move(current));
        current = CodeBlock{};
        inside = false;
      } else {
        inside = true;
        // "```cpp title=kernel.cu" and "```cuda {.numberLines}": the language is the first word.
        const auto space = info.find_first_of(" \t{");
        current.language = Lower(Trim(info.substr(0, space)));
      }
      continue;
    }
    if (inside) {
      current.text += line;
      current.text += '\n';
    }
  }
  if (inside) {
    current.closed = false;
    blocks.push_back(std::move(current));
  }
  return blocks;
}

std::vector<std::string> DefinedExternCFunctions(std::string_view code) {
  const std::string text = CodeOnly(code);
  // extern "C" [attributes] <return type> name(...) {   -- CodeOnly blanks the inside of string
  // literals, so the linkage reads `extern " "` here.
  std::vector<std::string> names;
  static const std::regex kExtern(R"(extern\s*"\s*"\s*(?:\{)?)");
  static const std::regex kFunction(R"(([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*(?:noexcept\s*)?\{)");
  const auto externs_begin = std::sregex_iterator(text.begin(), text.end(), kExtern);
  for (auto it = externs_begin; it != std::sregex_iterator(); ++it) {
    const size_t start = static_cast<size_t>(it->position() + it->length());
    // The declaration after `extern "C"` ends at the first ';' (a declaration only) or at its body.
    const size_t semicolon = text.find(';', start);
    const size_t brace = text.find('{', start);
    if (brace == std::string::npos) continue;
    if (semicolon != std::string::npos && semicolon < brace && text.compare(start - 1, 1, "{") != 0) continue;
    std::smatch match;
    const std::string tail = text.substr(start, brace - start + 1);
    if (std::regex_search(tail, match, kFunction)) {
      const std::string name = match[1];
      if (name != "__attribute__" && name != "__launch_bounds__") names.push_back(name);
    }
  }
  return names;
}

Result<ExtractedKernel> ExtractKernel(std::string_view answer, const std::string& function) {
  const auto blocks = FindCodeBlocks(answer);
  std::vector<std::string> others;
  bool truncated_match = false;
  for (size_t i = blocks.size(); i-- > 0;) {
    const auto& block = blocks[i];
    if (!IsCodeLanguage(block.language)) continue;
    const auto defined = DefinedExternCFunctions(block.text);
    const bool defines = std::find(defined.begin(), defined.end(), function) != defined.end();
    if (defines && block.closed) return ExtractedKernel{block.text, blocks.size(), i};
    if (!block.closed && (defines || block.text.find(function) != std::string::npos)) truncated_match = true;
    for (const auto& name : defined) {
      if (std::find(others.begin(), others.end(), name) == others.end()) others.push_back(name);
    }
  }
  if (truncated_match) {
    return MakeError(ErrorKind::kParse,
                     "the answer was cut off inside the code block that defines {} (the model ran out of "
                     "output tokens?)", function);
  }
  if (blocks.empty()) {
    // Bare code, no fences: take the whole answer if it defines the function.
    const auto defined = DefinedExternCFunctions(answer);
    if (std::find(defined.begin(), defined.end(), function) != defined.end()) {
      return ExtractedKernel{std::string(answer), 0, 0};
    }
    if (defined.empty()) return MakeError(ErrorKind::kParse, "the answer holds no code block");
    others = defined;
  }
  if (others.empty()) {
    return MakeError(ErrorKind::kParse, "none of the {} code block{} defines extern \"C\" {}", blocks.size(),
                     blocks.size() == 1 ? "" : "s", function);
  }
  return MakeError(ErrorKind::kParse, "the code defines extern \"C\" {} but not {}", fmt::join(others, ", "), function);
}

Result<ExtractedKernel> ExtractCandidateBlock(std::string_view answer, const std::function<bool(std::string_view)>& is_candidate,
                                              const std::string& what) {
  const auto blocks = FindCodeBlocks(answer);
  bool truncated = false;
  for (size_t i = blocks.size(); i-- > 0;) {
    const auto& block = blocks[i];
    if (!IsCodeLanguage(block.language)) continue;
    if (!block.closed) {
      truncated = true;
      continue;
    }
    if (is_candidate(block.text)) return ExtractedKernel{block.text, blocks.size(), i};
  }
  if (truncated) {
    return MakeError(ErrorKind::kParse, "the answer was cut off inside a code block (the model ran out of output tokens?)");
  }
  if (blocks.empty()) {
    if (is_candidate(answer)) return ExtractedKernel{std::string(answer), 0, 0};
    return MakeError(ErrorKind::kParse, "the answer holds no code block of {}", what);
  }
  return MakeError(ErrorKind::kParse, "none of the {} code block{} is {}", blocks.size(), blocks.size() == 1 ? "" : "s", what);
}

namespace {

bool IsPythonLanguage(const std::string& language) { return language.empty() || language == "python" || language == "py"; }

bool DefinesModelNew(std::string_view code) {
  static const std::regex kModelNew(R"((^|\n)class\s+ModelNew\b)");
  const std::string text(code);
  return std::regex_search(text, kModelNew);
}

}  // namespace

Result<ExtractedKernel> ExtractModelNew(std::string_view answer) {
  const auto blocks = FindCodeBlocks(answer);
  bool truncated_match = false;
  for (size_t i = blocks.size(); i-- > 0;) {
    const auto& block = blocks[i];
    if (!IsPythonLanguage(block.language)) continue;
    if (!DefinesModelNew(block.text)) continue;
    if (block.closed) return ExtractedKernel{block.text, blocks.size(), i};
    truncated_match = true;
  }
  if (truncated_match) {
    return MakeError(ErrorKind::kParse,
                     "the answer was cut off inside the code block that defines ModelNew (the model ran out of "
                     "output tokens?)");
  }
  if (blocks.empty()) {
    if (DefinesModelNew(answer)) return ExtractedKernel{std::string(answer), 0, 0};
    return MakeError(ErrorKind::kParse, "the answer holds no code block");
  }
  return MakeError(ErrorKind::kParse, "none of the {} code block{} defines class ModelNew (KernelBench's format: a "
                   "```python block with class ModelNew(nn.Module))", blocks.size(), blocks.size() == 1 ? "" : "s");
}

}  // namespace ksmith
