// Which process owns something (a run in the store, a build's work folder): its host, pid and the
// pid's start time (so that a reused pid is not taken for the owner). A thing whose owner is gone
// was left by a killed process (SIGKILL, a lost machine): a run shows as interrupted and can be
// resumed, a work folder can be removed.
#pragma once

#include <cstdint>
#include <string>

namespace ksmith {

struct ProcessOwner {
  std::string host;
  int64_t pid = 0;
  int64_t start_ticks = 0;  // /proc/<pid>/stat field 22: the process's start, in clock ticks since boot

  /// This process.
  static ProcessOwner Current();

  enum class Liveness {
    kAlive,      // on this host, and the pid is still the same process
    kGone,       // on this host, and no such process (or the pid was reused)
    kElsewhere,  // another host: nothing here can tell
    kUnknown,    // recorded before owners were (schema 1): nothing to go by
  };
  Liveness Check() const;

  /// "pid 4242 on host gpu-7".
  std::string Describe() const;
  /// When the process started, as ISO 8601 UTC ("2026-11-21T10:35:12Z"), from this host's boot
  /// time and `start_ticks`; empty where that cannot be known (another host, no start time).
  std::string StartedAt() const;

  bool operator==(const ProcessOwner&) const = default;
};

/// Start ticks of `pid` on this host; 0 when it does not exist.
int64_t ProcessStartTicks(int64_t pid);

}  // namespace ksmith
