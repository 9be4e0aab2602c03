// The process-wide settings a kernel's call could change to slow down whatever runs after it in
// the same worker (the baseline): the OpenMP thread count and dynamic adjustment, OpenBLAS's
// thread count, the floating-point environment (rounding and exception masks, flush-to-zero
// and denormals-are-zero) and the CPU affinity. The worker captures them before the candidate
// is loaded, checks and restores them after its load, after each correctness call and after
// each timing round (never inside a timed request), and reports every change.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

namespace ksmith {

struct ProcessState {
  int omp_max_threads = -1;       // -1: the OpenMP runtime is not loaded
  int omp_dynamic = -1;
  int openblas_threads = -1;      // -1: OpenBLAS is not loaded
  unsigned mxcsr = 0;             // SSE control and status, status flags masked off
  unsigned short x87_control = 0;
  cpu_set_t affinity{};

  static ProcessState Capture();
  /// How this state differs from `expected`, one phrase per setting: "the OpenMP thread count
  /// (2 -> 1)". A runtime that was not loaded in `expected` is compared with what its
  /// environment variable (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS) asks for, when set.
  std::vector<std::string> ChangesFrom(const ProcessState& expected) const;
  /// Puts `this` back in place.
  void Restore() const;
};

}  // namespace ksmith
