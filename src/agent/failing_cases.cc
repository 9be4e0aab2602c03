#include "agent/failing_cases.h"

#include <map>

#include <fmt/format.h>

#include "agent/prompt.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr int64_t kTinyDim = 8;  // below it, a size is smaller than a typical block or vector width
constexpr size_t kMaxStoppedChars = 200;

struct Count {
  int64_t judged = 0;
  int64_t failed = 0;
  int64_t smallest_dim = 0;
  bool every_group_failed = true;  // a shape: it failed under every distribution it was judged with
};

std::string JoinNames(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return text;
}

// What the inputs of the failing distributions have, as far as the distribution says.
std::string DistributionAdvice(const std::vector<std::string>& failing) {
  if (failing.size() != 1) return "look at what those inputs have that the others lack (range, sign, equal values).";
  if (failing.front() == "large") {
    return "check for overflow and cancellation (exp of a large value without subtracting the maximum, squares "
           "and long sums in low precision).";
  }
  if (failing.front() == "ties") return "check comparisons and how ties are handled.";
  if (failing.front() == "positive") return "check what the kernel assumes about signs (a maximum started at 0, abs).";
  return "look at what those inputs have that the others lack (range, sign, equal values).";
}

}  // namespace

FailingCasesText DescribeFailingCases(const CaseTally& tally) {
  FailingCasesText text;
  if (tally.judged <= 0) return text;
  std::map<std::string, Count> shapes, distributions;
  bool mixed = false;  // some draws of one shape and distribution fail, others pass
  for (const CaseGroup& group : tally.groups) {
    Count& shape = shapes[group.shape];
    shape.judged += group.cases;
    shape.failed += group.failed;
    shape.smallest_dim = group.smallest_dim;
    shape.every_group_failed = shape.every_group_failed && group.failed > 0;
    Count& distribution = distributions[group.distribution];
    distribution.judged += group.cases;
    distribution.failed += group.failed;
    mixed = mixed || (group.failed > 0 && group.failed < group.cases);
  }
  // The shapes single themselves out only where a failing shape fails whatever its inputs: a
  // shape that fails under one distribution and passes under the others failed for its values
  // (exp overflowing on large inputs fails most shapes and passes a few by luck of the draw).
  int64_t failing_shapes = 0;
  bool by_shape = true, only_tiny_fail = true, larger_pass = false;
  for (const auto& [name, shape] : shapes) {
    const bool tiny = shape.smallest_dim > 0 && shape.smallest_dim < kTinyDim;
    if (shape.failed > 0) ++failing_shapes;
    if (shape.failed > 0 && !shape.every_group_failed) by_shape = false;
    if (shape.failed > 0 && !tiny) only_tiny_fail = false;
    if (shape.failed == 0 && shape.smallest_dim >= kTinyDim) larger_pass = true;
  }
  std::vector<std::string> failing_distributions;
  for (const auto& [name, distribution] : distributions) {
    if (distribution.failed > 0) failing_distributions.push_back(name);
  }
  const auto all_shapes = static_cast<int64_t>(shapes.size());
  const auto all_distributions = static_cast<int64_t>(distributions.size());

  const std::string shape_part =
      failing_shapes < all_shapes ? fmt::format("{} of {} shapes", failing_shapes, all_shapes)
      : all_shapes == 1           ? std::string("the one shape judged")
                                  : fmt::format("every one of the {} shapes", all_shapes);
  const std::string distribution_part =
      static_cast<int64_t>(failing_distributions.size()) < all_distributions
          ? fmt::format("under {} inputs only ({} of {} distributions)", JoinNames(failing_distributions),
                        failing_distributions.size(), all_distributions)
      : all_distributions == 1 ? fmt::format("under its one input distribution ({})", failing_distributions.front())
      : all_distributions == 2 ? std::string("under both input distributions")
                               : fmt::format("under all {} input distributions", all_distributions);
  text.coverage = fmt::format("Wrong on {}: {}, {}.\n", FailingCasesCount(tally), shape_part, distribution_part);
  if (!tally.stopped.empty()) {
    text.coverage += fmt::format("Judging stopped there, {} cases short, when a later case failed otherwise: {}\n",
                                 tally.planned - tally.judged, FirstLine(tally.stopped, kMaxStoppedChars));
  }

  // Hints, each only where the failures single it out.
  if (tally.judged >= 2 && tally.failed == tally.judged) {
    text.hints.push_back(
        "It fails on every case judged, whatever the shape or the inputs: the main computation is wrong, not an "
        "edge case.");
    return text;
  }
  by_shape = by_shape && failing_shapes < all_shapes;
  if (by_shape && only_tiny_fail && larger_pass) {
    text.hints.push_back(
        "It fails only on tiny shapes (a dimension below 8), whatever the inputs, and passes on larger ones: "
        "sizes smaller than your block, tile or vector width must work too.");
  } else if (by_shape) {
    text.hints.push_back(fmt::format(
        "It fails on {} of {} shapes, whatever the inputs, and passes on the others: it depends on the sizes; "
        "check the tail after blocking or vectorizing, and sizes that are not multiples of your block, tile or "
        "vector widths.",
        failing_shapes, all_shapes));
  }
  const bool by_values = static_cast<int64_t>(failing_distributions.size()) < all_distributions;
  if (by_values) {
    std::vector<std::string> described;
    for (const auto& name : failing_distributions) described.push_back(DescribeDistribution(name));
    text.hints.push_back(fmt::format("It fails only under inputs {}, and passes under the others: it depends on the "
                                     "values; {}",
                                     JoinNames(described), DistributionAdvice(failing_distributions)));
  }
  // Draws that differ in their values alone: told only where neither shapes nor inputs explain it.
  if (mixed && !by_shape && !by_values) {
    text.hints.push_back(
        "Some draws of one shape and distribution fail and others pass: look for a data race, memory read before "
        "it is written, or a branch on the input values.");
  }
  return text;
}

FailingCasesText DescribeCasesBeforeFailure(const CaseTally& tally, const CaseRef& at) {
  FailingCasesText text;
  text.coverage = tally.judged == 0 ? std::string("It failed on the first case.\n")
                                    : fmt::format("The {} case{} before it passed.\n", tally.judged,
                                                  tally.judged == 1 ? "" : "s");
  bool larger_passed = false;
  for (const CaseGroup& group : tally.groups) {
    larger_passed = larger_passed || (group.failed == 0 && group.smallest_dim >= kTinyDim);
  }
  if (at.smallest_dim > 0 && at.smallest_dim < kTinyDim && larger_passed) {
    text.hints.push_back(
        "It happened on a tiny shape (a dimension below 8) after larger shapes passed: sizes smaller than your "
        "block, tile or vector width must work too.");
  }
  return text;
}

std::string FailingCasesCount(const CaseTally& tally) {
  return tally.stopped.empty() ? fmt::format("{} of {} cases", tally.failed, tally.judged)
                               : fmt::format("{} of {} cases judged", tally.failed, tally.judged);
}

}  // namespace ksmith
