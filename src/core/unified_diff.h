// Unified diffs between two texts, as `diff -u` writes them (diffutils, in every Debian): what a
// person reviewing a kernel reads, and what the run store keeps of a person's edit.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// The unified diff that turns `before` into `after`, its headers naming them by the labels;
/// empty when the texts are equal. Fails only when diff cannot run.
Result<std::string> UnifiedDiff(std::string_view before, std::string_view after, const std::string& before_label,
                                const std::string& after_label);

}  // namespace ksmith
