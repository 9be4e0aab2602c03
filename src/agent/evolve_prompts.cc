#include "agent/evolve_prompts.h"

#include <fmt/format.h>

#include "agent/feedback.h"

namespace ksmith {
namespace {

constexpr const char* kAnswerForm = kKernelAnswerForm;

std::string Listing(const MeasuredKernel& kernel) { return KernelListing(kernel.number, kernel.source); }

}  // namespace

std::string KernelListing(int64_t number, const std::string& source) {
  return fmt::format("Candidate {}:\n```\n{}\n```\n", number, source);
}

std::string MeasuredLine(const MeasuredKernel& kernel) {
  const Verdict& verdict = *kernel.verdict;
  std::string line = fmt::format("candidate {}: ", kernel.number);
  if (verdict.timing) {
    const Timing& timing = *verdict.timing;
    line += fmt::format("{:.1f} us, {:.2f}x [{:.2f}, {:.2f}] ({}) against the baseline", timing.candidate_us.median,
                        timing.speedup.median, timing.speedup.low, timing.speedup.high, timing.comparison);
  } else {
    line += SummarizeVerdict(verdict);
  }
  const std::string features = FeaturesOf(verdict).Describe();
  if (!features.empty()) line += "; " + features;
  return line;
}

std::string MutationInstruction(const MeasuredKernel& parent) {
  return fmt::format(
      "One of the best kernels found so far, and what was measured of it:\n\n{}\n{}\n\n{}\n\n"
      "Write a faster kernel from it. Find its bottleneck in the facts above and make one change that addresses "
      "it (a different tiling, wider loads, fewer passes over memory, another parallel split...); keep what "
      "already works. {}",
      Listing(parent), MeasuredLine(parent), RenderFeedback(*parent.verdict, parent.source), kAnswerForm);
}

std::string CrossoverInstruction(const MeasuredKernel& first, const MeasuredKernel& second) {
  return fmt::format(
      "Two correct kernels, measured on the same machine:\n\n{}\n{}\n\n{}\n{}\n\n"
      "They are fast in different ways (see their features). Write one kernel that combines the strengths "
      "of both. {}",
      Listing(first), MeasuredLine(first), Listing(second), MeasuredLine(second), kAnswerForm);
}

std::string ContrastiveInstruction(const std::vector<MeasuredKernel>& fastest_first) {
  std::string listings, lines;
  for (const auto& kernel : fastest_first) {
    listings += Listing(kernel) + "\n";
    lines += "- " + MeasuredLine(kernel) + "\n";
  }
  return fmt::format(
      "Correct kernels for this task, measured on the same machine, fastest first:\n\n{}Their times:\n{}\n"
      "First say in a few sentences what made the faster ones faster than the slower ones, from the code and "
      "the measurements. Then write a kernel that takes that further. {}",
      listings, lines, kAnswerForm);
}

std::string RepairInstruction(const MeasuredKernel& broken) {
  return fmt::format(
      "This kernel tried an idea worth keeping, but it failed:\n\n{}\n{}\n\n"
      "Fix it without giving up its idea. {}",
      Listing(broken), RenderFeedback(*broken.verdict, broken.source), kAnswerForm);
}

}  // namespace ksmith
