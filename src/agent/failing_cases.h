// What a wrong kernel's tally of correctness cases (CaseTally, eval/stage_details.h) tells a model:
// how widely it fails, and a hint only where the failures single something out.
//
// Hints used to come from the first failing case alone: a kernel wrong on every case was told "it
// fails on a tiny shape" and "check for overflow" because the first case was tiny and the one
// after it large. A hint about shapes or inputs now needs cases that pass beside the ones that
// fail: only tiny shapes fail while larger ones pass, one distribution fails while the others
// pass, and so on.
//
// Shapes are counted, not listed: the eval shapes are hidden so that a kernel cannot be fitted to
// them, and feedback names only the first failing case (as it always has).
#pragma once

#include <string>
#include <vector>

#include "eval/stage_details.h"

namespace ksmith {

struct FailingCasesText {
  /// "Wrong on 185 of 185 cases: every one of the 14 shapes, under all 5 input distributions.\n",
  /// with a line on what stopped the count when it stopped early.
  std::string coverage;
  /// Each a sentence, without "Hint: ".
  std::vector<std::string> hints;
};

/// The coverage and the hints for `tally`; both empty for a tally that judged nothing.
FailingCasesText DescribeFailingCases(const CaseTally& tally);

/// "185 of 185 cases", or "3 of 10 cases judged" when the count stopped early.
std::string FailingCasesCount(const CaseTally& tally);

/// For a failure that ended the correctness stage at case `at` (a crash, a hang), where `tally`
/// holds the cases that passed before it: how many passed, and a hint that the shape is the cause
/// only where `at` is tiny and larger cases passed. A kernel that crashes on every case crashes on
/// the first, and the first case is tiny: that singles nothing out.
FailingCasesText DescribeCasesBeforeFailure(const CaseTally& tally, const CaseRef& at);

}  // namespace ksmith
