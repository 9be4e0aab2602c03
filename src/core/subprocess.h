// Every process ksmith starts goes through here: the compiler, the sandboxed worker, probes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

/// Resource limits a child runs under, inherited by every process it starts (each process is held
/// to them on its own); 0: no limit.
struct ChildLimits {
  uint64_t data_bytes = 0;           // RLIMIT_DATA: heap and private writable mappings [bytes]
  uint64_t address_space_bytes = 0;  // RLIMIT_AS: every mapping, the stack included [bytes]
  uint64_t stack_bytes = 0;          // RLIMIT_STACK's hard limit (a program may raise its own up to it) [bytes]
  uint64_t cpu_seconds = 0;          // RLIMIT_CPU: SIGXCPU at this many seconds [s], SIGKILL a little later
  /// Not an rlimit: RunCommand watches the child and everything it starts (every 100 ms) and
  /// kills them all once their anonymous resident memory together exceeds this [bytes].
  uint64_t tree_memory_bytes = 0;
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no slash
  /// The child's whole environment (no inheritance unless `inherit_environment`).
  std::vector<std::string> environment;
  bool inherit_environment = false;
  std::filesystem::path working_directory;  // empty: the parent's
  /// The child's stdout and stderr go to this file (created or truncated); empty: /dev/null.
  std::filesystem::path output_path;
  /// Parent descriptors handed to the child as 3, 4, ...; every other descriptor is closed.
  std::vector<int> passed_descriptors;
  /// A Landlock ruleset (core/landlock.h) the child applies to itself before exec; -1: none.
  int landlock_ruleset_fd = -1;
  /// Paths the child may also write, resolved in the child once it has its final pid, so that
  /// /proc/self names it (the CUDA driver starts only where it may write /proc/self/task: it
  /// names its threads).
  std::vector<std::string> landlock_writable_in_child;
  /// The child starts in a new network namespace (a user namespace too where that is what the
  /// kernel allows): it has no network. And every process it starts ends with it: what it left
  /// running when it exits is killed, even a daemon that left its session and process group.
  bool isolate = false;
  /// With any limit set, the child also dumps no core.
  ChildLimits limits;
};

struct ProcessExit {
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;      // the signal that ended it, or 0
  bool timed_out = false;
  double elapsed_s = 0;  // [seconds]
  /// What the kernel accounted to the child and the descendants it waited for (wait4).
  double cpu_s = 0;             // [s] user + system
  uint64_t peak_rss_bytes = 0;  // [bytes] the largest resident set of any one of them
  /// Killed by RunCommand because the processes together held more than ChildLimits::tree_memory_bytes.
  bool tree_memory_exceeded = false;
  uint64_t peak_tree_bytes = 0;  // [bytes] the most the watched tree held together (0: not watched)
  std::string output;    // captured stdout + stderr (RunCommand only)

  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
  /// "exit code 1", "killed by SIGSEGV (signal 11)", "timed out after 3.0 s".
  std::string Describe() const;
};

/// Starts a child process. It dies with the parent (PR_SET_PDEATHSIG).
Result<pid_t> SpawnProcess(const SpawnOptions& options);

/// Waits for `pid`; kills it with SIGKILL once `timeout` passes (nullopt: wait forever), or once
/// it and its descendants hold more than `tree_memory_bytes` together (0: not watched).
ProcessExit WaitForProcess(pid_t pid, std::optional<std::chrono::milliseconds> timeout,
                           uint64_t tree_memory_bytes = 0);

/// Runs a command to completion, capturing stdout and stderr together (at most `max_output_bytes`).
Result<ProcessExit> RunCommand(const SpawnOptions& options, std::chrono::milliseconds timeout,
                               size_t max_output_bytes = size_t{4} << 20);

}  // namespace ksmith
