#include "agent/source_identity.h"

#include <cctype>

namespace ksmith {

std::string NormalizedSource(std::string_view source) {
  std::string normalized;
  normalized.reserve(source.size());
  bool pending_space = false;
  auto emit = [&](char c) {
    if (pending_space && !normalized.empty()) normalized += ' ';
    pending_space = false;
    normalized += c;
  };
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      while (i < source.size() && source[i] != '\n') ++i;
      pending_space = true;
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      const size_t end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? source.size() : end + 1;
      pending_space = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = true;
      continue;
    }
    if (c == '"' || c == '\'') {
      // A literal as it is, escapes included, up to its closing quote.
      emit(c);
      for (++i; i < source.size(); ++i) {
        normalized += source[i];
        if (source[i] == '\\' && i + 1 < source.size()) {
          normalized += source[++i];
        } else if (source[i] == c) {
          break;
        }
      }
      continue;
    }
    emit(c);
  }
  return normalized;
}

}  // namespace ksmith
