// One call of a kernel on a saved case, outside the evaluator: what `ncu` profiles for
// `ksmith eval --profile`, and what the GPU reference is cross-checked with. The folder holds
// kernel.so, layout.json and arena.bin (the host arena as the evaluator prepared it); the arena
// after the call is written to result.bin. Only trusted kernels and candidates that already passed
// verification are replayed.
#pragma once

#include <string>

namespace ksmith {

/// Returns 0 after one complete call, 3 on any failure (printed to stderr).
int ReplayOnce(const std::string& directory, int device);

}  // namespace ksmith
