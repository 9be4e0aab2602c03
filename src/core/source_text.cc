#include "core/source_text.h"

#include <cctype>
#include <optional>
#include <string>

namespace ksmith {

namespace {

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A ' inside a number (1'000, 0xFF'FF) is a digit separator, not a character literal: the token
// it ends starts with a digit.
bool IsDigitSeparator(const std::string& text, size_t quote) {
  size_t start = quote;
  while (start > 0 && (IsIdentifierChar(text[start - 1]) || text[start - 1] == '.' ||
                       text[start - 1] == '\'')) {
    --start;
  }
  return start < quote && std::isdigit(static_cast<unsigned char>(text[start]));
}

// At text[quote] == '"' preceded by R (or u8R, LR...): returns the closing sequence )delim".
std::optional<std::string> RawStringCloser(const std::string& text, size_t quote) {
  if (quote == 0 || text[quote - 1] != 'R') return std::nullopt;
  if (quote >= 2 && IsIdentifierChar(text[quote - 2]) &&
      !(text[quote - 2] == '8' || text[quote - 2] == 'u' || text[quote - 2] == 'U' || text[quote - 2] == 'L')) {
    return std::nullopt;
  }
  const size_t open = text.find('(', quote);
  if (open == std::string::npos || open - quote > 17) return std::nullopt;
  return ")" + text.substr(quote + 1, open - quote - 1) + "\"";
}

void Blank(std::string& text, size_t from, size_t to) {
  for (size_t i = from; i < to && i < text.size(); ++i) {
    if (text[i] != '\n') text[i] = ' ';
  }
}

std::string Strip(std::string_view source, bool keep_literals) {
  std::string out(source);
  enum class State { kCode, kLineComment, kBlockComment, kString, kChar } state = State::kCode;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char next = i + 1 < out.size() ? out[i + 1] : '\0';
    switch (state) {
      case State::kCode:
        if (c == '/' && next == '/') {
          state = State::kLineComment;
          out[i] = ' ';
        } else if (c == '/' && next == '*') {
          state = State::kBlockComment;
          out[i] = ' ';
        } else if (c == '"') {
          if (auto closer = RawStringCloser(out, i)) {
            const size_t end = out.find(*closer, i + 1);
            const size_t stop = end == std::string::npos ? out.size() : end + closer->size() - 1;
            if (!keep_literals) Blank(out, i + 1, stop);
            i = stop;
          } else {
            state = State::kString;
          }
        } else if (c == '\'' && !IsDigitSeparator(out, i)) {
          state = State::kChar;
        }
        break;
      case State::kLineComment:
        if (c == '\n') state = State::kCode;
        else out[i] = ' ';
        break;
      case State::kBlockComment:
        if (c == '*' && next == '/') {
          out[i] = out[i + 1] = ' ';
          ++i;
          state = State::kCode;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
      case State::kString:
      case State::kChar:
        if (c == '\\' && next != '\0') {
          if (!keep_literals) {
            out[i] = ' ';
            if (next != '\n') out[i + 1] = ' ';
          }
          ++i;
        } else if ((state == State::kString && c == '"') || (state == State::kChar && c == '\'')) {
          state = State::kCode;
        } else if (c != '\n' && !keep_literals) {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

}  // namespace

std::string StripCommentsAndStrings(std::string_view source) { return Strip(source, false); }

std::string StripComments(std::string_view source) { return Strip(source, true); }

}  // namespace ksmith
