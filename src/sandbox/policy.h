// The walls around candidate code, applied by the worker to itself before it loads a candidate.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

struct SandboxLimits {
  uint64_t cpu_seconds = 600;                 // RLIMIT_CPU [s]
  uint64_t memory_bytes = uint64_t{16} << 30;  // RLIMIT_AS [bytes]
  uint64_t file_bytes = uint64_t{64} << 20;    // RLIMIT_FSIZE [bytes]: caps the output log
  uint64_t processes = 256;                    // RLIMIT_NPROC (threads count; root ignores it)
};

struct SandboxPolicy {
  SandboxLimits limits;
  std::vector<std::filesystem::path> readable;  // besides the system library folders
  std::filesystem::path scratch;                // the worker's private working folder
  /// A CUDA worker: the driver maps device memory through files it opens read-write as it goes
  /// (/dev/nvidia*) and reserves address space far beyond any RLIMIT_AS, so writes are confined
  /// by Landlock to the device files instead of by seccomp, and the address space is unlimited.
  bool gpu = false;
  /// An OpenCL runtime's worker: PoCL unpacks a program binary into its cache folder (the
  /// scratch) and loads it from there, so files may be created, renamed and removed, in the
  /// scratch alone (Landlock), where Landlock holds.
  bool scratch_writable = false;
  /// Where the listener for the calls whose attempt is a violation goes (a socket to the
  /// evaluator's CallWatch, sandbox/call_watch.h); closed once handed over. -1: those calls are
  /// refused quietly, as every other is.
  int report_fd = -1;
};

/// Which protections took effect; each one that failed says why.
struct Protections {
  bool rlimits = false;
  bool no_new_privs = false;
  bool capabilities_dropped = false;  // effective, permitted, inheritable, ambient and bounding
  bool seccomp = false;             // no fork/exec/sockets/ptrace/file writes/signals to others
  bool attempts_reported = false;   // the forbidden calls reach the evaluator: trying one fails
  int landlock_abi = 0;             // 0: not active; file reads limited to libraries + scratch
  bool network_namespace = false;   // an empty network namespace
  std::vector<std::string> notes;   // why something is missing

  nlohmann::json ToJson() const;
  static Protections FromJson(const nlohmann::json& json);
  /// One line: "seccomp on (attempts reported), landlock abi 4, network namespace on, rlimits on".
  std::string Summary() const;
};

/// The policy a worker's "setup" request asks for: its "limits", "readable" folders and "scratch";
/// `report_fd` as SandboxPolicy's. What is missing keeps SandboxPolicy's defaults.
SandboxPolicy PolicyFromSetup(const nlohmann::json& setup, int report_fd);

/// Applies every protection the machine allows, in order: network namespace, rlimits,
/// capabilities, no_new_privs, Landlock, seccomp (and hands its listener over, with a report_fd).
/// Never fails as a whole: what could not be applied is noted.
Protections ApplySandbox(const SandboxPolicy& policy);

}  // namespace ksmith
