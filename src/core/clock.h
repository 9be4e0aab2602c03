// The one clock ksmith measures its own durations with.
#pragma once

#include <chrono>

namespace ksmith {

using SteadyClock = std::chrono::steady_clock;

/// Seconds elapsed since `start` on the steady clock.
inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace ksmith
