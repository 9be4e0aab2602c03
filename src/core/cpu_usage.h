// CPU time accounting from /proc: what a process used, and what the whole machine did, so that
// a measurement can tell whether something else was running while it ran.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace ksmith {

/// User plus system time of every thread of `pid` [clock ticks]; nullopt if unreadable.
std::optional<uint64_t> ProcessCpuTicks(pid_t pid);

struct MachineCpuTicks {
  uint64_t busy = 0;   // user, nice, system, irq, softirq [clock ticks], all cores
  uint64_t steal = 0;  // taken by the hypervisor for other guests
};

std::optional<MachineCpuTicks> ReadMachineCpuTicks();

/// Clock ticks per second (sysconf(_SC_CLK_TCK)).
double ClockTicksPerSecond();

}  // namespace ksmith
