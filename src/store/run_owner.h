// Which process runs a run: its host, pid and the pid's start time (so that a reused pid is not
// taken for the owner). A run marked "running" whose owner is gone was killed (SIGKILL, a lost
// machine) and shows as interrupted; one whose owner lives cannot be resumed by a second process.
#pragma once

#include <cstdint>
#include <string>

namespace ksmith {

struct RunOwner {
  std::string host;
  int64_t pid = 0;
  int64_t start_ticks = 0;  // /proc/<pid>/stat field 22: the process's start, in clock ticks since boot

  /// This process.
  static RunOwner Current();

  enum class Liveness {
    kAlive,      // on this host, and the pid is still the same process
    kGone,       // on this host, and no such process (or the pid was reused)
    kElsewhere,  // another host: nothing here can tell
    kUnknown,    // recorded before owners were (schema 1): nothing to go by
  };
  Liveness Check() const;

  /// "pid 4242 on host gpu-7".
  std::string Describe() const;

  bool operator==(const RunOwner&) const = default;
};

/// Start ticks of `pid` on this host; 0 when it does not exist.
int64_t ProcessStartTicks(int64_t pid);

}  // namespace ksmith
