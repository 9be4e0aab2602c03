// C++ source text with comments (and string literals) blanked for scanning: the same length and
// newlines, so that an offset keeps its line. Raw strings and digit separators are understood.
// The audits scan with it, and the NVRTC form reads a candidate's includes and launches with it.
#pragma once

#include <string>
#include <string_view>

namespace ksmith {

/// The source with comments and string/char literals blanked (newlines kept, quote characters
/// kept), for scanning.
std::string StripCommentsAndStrings(std::string_view source);

/// The source with only comments blanked: for rules that look inside literals (PTX in asm).
std::string StripComments(std::string_view source);

}  // namespace ksmith
