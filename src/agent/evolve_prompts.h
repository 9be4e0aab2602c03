// What evolve asks a model (and what team's coder and debugger build on): the user message after
// the system and task prompts, for each of its operators. Every kernel shown comes with what was measured of it (its time, speedup and
// interval, roofline position and features), so that the model reasons from facts, not from
// how the code looks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/kernel_features.h"
#include "eval/verdict.h"

namespace ksmith {

struct MeasuredKernel {
  int64_t number = 0;  // in the run
  std::string source;
  const Verdict* verdict = nullptr;  // never null
};

/// How every kernel-writing instruction ends.
inline constexpr const char* kKernelAnswerForm =
    "Answer with a short explanation, then one complete kernel in one code block.";

/// "Candidate 7:" and the kernel in a code block.
std::string KernelListing(int64_t number, const std::string& source);

/// One parent and its verdict's feedback: improve it by one change that addresses its bottleneck.
std::string MutationInstruction(const MeasuredKernel& parent);
/// Two measured parents: combine what makes each fast.
std::string CrossoverInstruction(const MeasuredKernel& first, const MeasuredKernel& second);
/// Measured kernels side by side, fastest first, with their times: say what made the faster ones
/// faster, then write one that goes further.
std::string ContrastiveInstruction(const std::vector<MeasuredKernel>& fastest_first);
/// A kernel whose idea is worth keeping but which failed: fix it without giving the idea up.
std::string RepairInstruction(const MeasuredKernel& broken);

/// "candidate 7: 412.3 us, 1.84x [1.80, 1.88] faster than the baseline; memory-bound at 50-75%
/// of the limit, 256-bit vector arithmetic": one line of what was measured.
std::string MeasuredLine(const MeasuredKernel& kernel);

}  // namespace ksmith
