// When two candidates are the same kernel: the same source once comments and spacing are set
// aside. A model that answers with a kernel it already sent gets the verdict it already had,
// without a second build and evaluation, and is told it repeated itself.
#pragma once

#include <string>
#include <string_view>

namespace ksmith {

/// `source` without comments, with every run of whitespace made one space (none at the ends).
/// String and character literals are kept exactly, "//" inside them included.
std::string NormalizedSource(std::string_view source);

}  // namespace ksmith
