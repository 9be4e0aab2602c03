// Landlock rulesets: which parts of the file tree a process may read, run, or write. Built in the
// evaluator; applied by the worker to itself, or by a spawned compiler just before it starts.
#pragma once

#include <filesystem>
#include <vector>

#include "core/result.h"

namespace ksmith {

/// 0 when Landlock is not available.
int LandlockAbi();

class LandlockRuleset {
 public:
  /// Everything not listed is denied: `readable` may be read (files and folder listings),
  /// `executable` read and run, `writable` read, written, created in and removed from. Paths
  /// that do not exist are skipped. Fails with kUnsupported where the kernel has no Landlock.
  static Result<LandlockRuleset> Create(const std::vector<std::filesystem::path>& readable,
                                        const std::vector<std::filesystem::path>& executable,
                                        const std::vector<std::filesystem::path>& writable);
  LandlockRuleset(LandlockRuleset&& other) noexcept : fd_(other.fd_), abi_(other.abi_) { other.fd_ = -1; }
  LandlockRuleset& operator=(LandlockRuleset&&) = delete;
  LandlockRuleset(const LandlockRuleset&) = delete;
  ~LandlockRuleset();

  int fd() const { return fd_; }
  int abi() const { return abi_; }

  /// Restricts the calling thread (and what it execs) to the ruleset; sets no_new_privs first.
  /// Async-signal-safe, for use between fork and exec. Returns false when the kernel refused.
  static bool RestrictSelf(int ruleset_fd);

  /// Lets the calling process write beneath `path` too, resolved now: for a path that names the
  /// process itself (/proc/self/...), which only the child knows once it has its final pid.
  /// Async-signal-safe. Returns false when the path does not open or the kernel refused.
  static bool AllowWritingInChild(int ruleset_fd, const char* path);

 private:
  LandlockRuleset(int fd, int abi) : fd_(fd), abi_(abi) {}
  int fd_;
  int abi_;
};

}  // namespace ksmith
