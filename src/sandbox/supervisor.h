// The evaluator's side of a worker: start it, send requests with deadlines, and turn every way a
// worker can fail (crash, hang, exit, garbage on the channel) into a WorkerFailure value.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/subprocess.h"
#include "sandbox/call_watch.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"

namespace ksmith {

struct WorkerOptions {
  std::filesystem::path executable;  // ksmith-worker
  std::filesystem::path scratch;     // private working folder; the log lands here
  int threads = 0;                   // OMP_NUM_THREADS; 0: all cores
  /// Also passed to the worker as it is, e.g. "LD_LIBRARY_PATH=..." for the CUDA libraries.
  std::vector<std::string> extra_environment;
  /// When it turns true, a request in flight stops waiting and the worker is killed (a
  /// kInfrastructure failure that says so). Null: never. Must outlive the worker.
  const std::atomic<bool>* cancel = nullptr;
};

// kForbiddenCall: the candidate tried a call the sandbox denies (sandbox/call_watch.h); it wins over
// whatever happened next, which its description adds.
enum class WorkerFailureKind { kTimedOut, kCrashed, kExited, kProtocol, kInfrastructure, kForbiddenCall };

struct WorkerFailure {
  WorkerFailureKind kind = WorkerFailureKind::kInfrastructure;
  std::string description;  // "killed by SIGSEGV (signal 11) while running case 3"
  int signal = 0;           // kCrashed: the signal that ended the worker
};

class WorkerProcess {
 public:
  static Result<std::unique_ptr<WorkerProcess>> Start(const WorkerOptions& options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  /// Sends `request` and waits up to `timeout` for a reply of type `expected_type` (or "error"
  /// / "load_error", which the worker sends for its own failures). Every request carries a fresh
  /// random nonce that the reply must echo, so a frame that a candidate forged, or a stale reply,
  /// is a protocol failure. On any failure the worker is killed and reaped, and the failure says
  /// what happened; `activity` names the step for messages. `descriptor`, when given, travels
  /// right after the request (SCM_RIGHTS). A reply that follows a call the candidate tried and
  /// the sandbox denied is a kForbiddenCall failure: the attempt is the violation.
  std::optional<Message> Request(Message request, const std::string& expected_type,
                                 std::chrono::milliseconds timeout, const std::string& activity,
                                 int descriptor = -1);

  /// Asks the worker to exit and checks that it did, cleanly and with nothing left unread.
  /// Returns false (with failure() set) otherwise.
  bool Close(std::chrono::milliseconds timeout);

  /// Set once a request failed.
  const std::optional<WorkerFailure>& failure() const { return failure_; }
  /// The cancel flag of the evaluation that takes a worker started ahead of it (a spare).
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  /// Whether a worker between requests still waits for the next: its channel neither closed
  /// (it died) nor holding data nobody asked for.
  bool Waiting() const;
  pid_t pid() const { return pid_; }
  /// The tail of what the candidate printed (stdout and stderr).
  std::string OutputTail(size_t max_bytes) const;
  /// CPU time the whole worker has used so far [clock ticks], from /proc.
  std::optional<uint64_t> CpuTicks() const;
  /// Every call the sandbox denied so far, trusted code's included.
  std::vector<DeniedCall> DeniedCalls() const;

 private:
  WorkerProcess(pid_t pid, int channel_fd, std::filesystem::path log_path, uint64_t nonce_seed,
                const std::atomic<bool>* cancel, std::unique_ptr<CallWatch> watch)
      : pid_(pid), channel_fd_(channel_fd), log_path_(std::move(log_path)), nonce_seed_(nonce_seed), cancel_(cancel),
        watch_(std::move(watch)) {}
  /// Waits until the channel has data, the deadline passes or the cancel flag is set; returns
  /// false only when cancelled.
  bool WaitForReply(std::chrono::steady_clock::time_point deadline) const;
  void Fail(WorkerFailureKind kind, std::string description, int signal = 0);

  pid_t pid_;
  int channel_fd_;
  std::filesystem::path log_path_;
  std::optional<WorkerFailure> failure_;
  bool reaped_ = false;
  uint64_t nonce_seed_;
  const std::atomic<bool>* cancel_;
  uint64_t requests_ = 0;
  std::unique_ptr<CallWatch> watch_;  // null where its thread could not start
};

}  // namespace ksmith
