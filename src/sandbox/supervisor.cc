#include "sandbox/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "core/cpu_usage.h"
#include "core/files.h"
#include "core/strings.h"
#include "sandbox/shared_memory.h"
#include "tensor/random.h"

namespace ksmith {

namespace fs = std::filesystem;

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(const WorkerOptions& options) {
  if (!fs::exists(options.executable)) {
    return MakeError(ErrorKind::kNotFound, "worker executable {} not found (set KSMITH_WORKER)",
                     options.executable.string());
  }
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return MakeError(ErrorKind::kIo, "socketpair failed: {}", std::strerror(errno));
  }
  // The worker hands the listener of its seccomp filter over on its own socket (call_watch.h):
  // the channel stays request, reply.
  int report[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report) != 0) {
    const int saved = errno;
    ::close(sockets[0]);
    ::close(sockets[1]);
    return MakeError(ErrorKind::kIo, "socketpair failed: {}", std::strerror(saved));
  }
  SpawnOptions spawn;
  spawn.argv = {options.executable.string(), "--channel-fd", "3", "--report-fd", "4"};
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(cores);
  // Passive waiting: idle OpenMP threads sleep instead of spinning, so the candidate and the
  // baseline do not steal each other's cores, and an idle worker uses no CPU.
  spawn.environment = {"PATH=/usr/bin:/bin", "OMP_WAIT_POLICY=passive",
                       "OMP_NUM_THREADS=" + std::to_string(threads),
                       "OPENBLAS_NUM_THREADS=" + std::to_string(threads),
                       // OpenBLAS threads otherwise spin after each call, stealing the cores the
                       // candidate runs on next: 2^4 cycles, then sleep.
                       "OPENBLAS_THREAD_TIMEOUT=4", "LC_ALL=C"};
  spawn.environment.insert(spawn.environment.end(), options.extra_environment.begin(),
                           options.extra_environment.end());
  spawn.working_directory = options.scratch;
  spawn.output_path = options.scratch / "worker.log";
  spawn.passed_descriptors = {sockets[1], report[1]};
  auto pid = SpawnProcess(spawn);
  ::close(sockets[1]);
  ::close(report[1]);
  if (!pid.ok()) {
    ::close(sockets[0]);
    ::close(report[0]);
    return pid.error();
  }
  std::random_device device;
  const uint64_t nonce_seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  return std::unique_ptr<WorkerProcess>(
      new WorkerProcess(*pid, sockets[0], spawn.output_path, nonce_seed, options.cancel, CallWatch::Start(report[0])));
}

WorkerProcess::~WorkerProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    WaitForProcess(pid_, std::nullopt);
  }
  ::close(channel_fd_);
}

void WorkerProcess::Fail(WorkerFailureKind kind, std::string description, int signal) {
  if (!reaped_) {
    if (kind != WorkerFailureKind::kExited && kind != WorkerFailureKind::kCrashed) ::kill(pid_, SIGKILL);
    WaitForProcess(pid_, std::nullopt);
    reaped_ = true;
  }
  // A crash or a hang after a denied call is the attempt's doing, or beside the point; the
  // evaluator's own trouble (a cancel) stays its own.
  const bool candidate_side = kind != WorkerFailureKind::kForbiddenCall && kind != WorkerFailureKind::kInfrastructure;
  if (const std::string tried = watch_ ? watch_->CandidateReason() : ""; candidate_side && !tried.empty()) {
    description = tried + "; then " + description;
    kind = WorkerFailureKind::kForbiddenCall;
  }
  failure_ = WorkerFailure{kind, std::move(description), signal};
}

std::vector<DeniedCall> WorkerProcess::DeniedCalls() const { return watch_ ? watch_->Denied() : std::vector<DeniedCall>{}; }

std::optional<Message> WorkerProcess::Request(Message request, const std::string& expected_type,
                                              std::chrono::milliseconds timeout,
                                              const std::string& activity, int descriptor) {
  if (failure_) return std::nullopt;
  const uint64_t nonce = MixCounter(nonce_seed_, 0x40ce, requests_++);
  request.header["nonce"] = nonce;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const bool sent = WriteMessage(channel_fd_, request).ok() &&
                    (descriptor < 0 || SendDescriptor(channel_fd_, descriptor).ok());
  if (sent && !WaitForReply(deadline)) {
    Fail(WorkerFailureKind::kInfrastructure, fmt::format("the evaluation was cancelled while {}", activity));
    return std::nullopt;
  }
  auto reply = sent ? ReadMessage(channel_fd_, deadline)
                    : Result<Message>(MakeError(ErrorKind::kNotFound, "channel closed"));
  if (reply.ok()) {
    const std::string type = reply->type();
    const bool expected = type == expected_type || type == "error" || type == "load_error" ||
                          type == "cuda_error";
    if (expected && reply->header.value("nonce", uint64_t{0}) == nonce) {
      // The watch recorded every call the candidate made while serving this request before that
      // call returned (call_watch.h), so before this reply was written.
      if (const std::string tried = watch_ ? watch_->CandidateReason() : ""; !tried.empty()) {
        Fail(WorkerFailureKind::kForbiddenCall, fmt::format("{} (while {})", tried, activity));
        return std::nullopt;
      }
      return std::move(reply.value());
    }
    reply = MakeError(ErrorKind::kProtocol,
                      "reply '{}' does not answer the request (forged or out of order)", type);
  }
  switch (reply.error().kind) {
    case ErrorKind::kTimeout:
      Fail(WorkerFailureKind::kTimedOut,
           fmt::format("no answer within {:.1f} s while {}", timeout.count() / 1000.0, activity));
      break;
    case ErrorKind::kNotFound: {
      // The worker is gone: say how it ended.
      ::shutdown(channel_fd_, SHUT_RDWR);
      const ProcessExit exit = WaitForProcess(pid_, std::chrono::seconds(5));
      reaped_ = true;
      const bool crashed = exit.signal != 0;
      std::string how = exit.Describe();
      if (exit.signal == SIGXCPU) how += " (CPU time limit)";
      if (exit.signal == SIGXFSZ) how += " (output file size limit)";
      Fail(crashed ? WorkerFailureKind::kCrashed : WorkerFailureKind::kExited,
           fmt::format("the worker ended ({}) while {}", how, activity), exit.signal);
      break;
    }
    case ErrorKind::kProtocol:
      Fail(WorkerFailureKind::kProtocol,
           fmt::format("the worker sent a malformed message while {}: {}", activity,
                       reply.error().message));
      break;
    default:
      Fail(WorkerFailureKind::kInfrastructure,
           fmt::format("talking to the worker failed while {}: {}", activity,
                       reply.error().message));
  }
  return std::nullopt;
}

bool WorkerProcess::WaitForReply(std::chrono::steady_clock::time_point deadline) const {
  if (cancel_ == nullptr) return true;
  // Short slices, so that a cancel is seen within one of them.
  constexpr auto kSlice = std::chrono::milliseconds(50);
  while (!cancel_->load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;  // ReadMessage reports the timeout
    const auto slice = std::min<std::chrono::milliseconds>(
        kSlice, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1));
    pollfd poll_fd{channel_fd_, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(slice.count()));
    if (ready != 0) return true;  // data, a closed channel or an error: ReadMessage says which
  }
  return false;
}

bool WorkerProcess::Close(std::chrono::milliseconds timeout) {
  Message bye;
  bye.header = {{"type", "bye"}};
  if (!Request(bye, "goodbye", timeout, "closing the worker")) return false;
  const ProcessExit exit = WaitForProcess(pid_, timeout);
  reaped_ = true;
  // Anything still in the channel after the last reply was not asked for; the socket keeps
  // what a static destructor wrote on the way out, so look only once the worker is gone.
  pollfd poll_fd{channel_fd_, POLLIN, 0};
  char byte;
  if (::poll(&poll_fd, 1, 0) > 0 && ::recv(channel_fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
    Fail(WorkerFailureKind::kProtocol, "the worker sent data nobody asked for (a forged frame)");
    return false;
  }
  if (!exit.succeeded()) {
    Fail(exit.timed_out ? WorkerFailureKind::kTimedOut : WorkerFailureKind::kExited,
         fmt::format("the worker did not exit cleanly after its last request ({})", exit.Describe()));
    return false;
  }
  // Its static destructors ran after the last reply; a call they tried is recorded by now.
  if (const std::string tried = watch_ ? watch_->CandidateReason() : ""; !tried.empty()) {
    Fail(WorkerFailureKind::kForbiddenCall, tried + " (while the worker exited)");
    return false;
  }
  return true;
}

bool WorkerProcess::Waiting() const {
  if (failure_ || reaped_) return false;
  pollfd poll_fd{channel_fd_, POLLIN, 0};
  return ::poll(&poll_fd, 1, 0) == 0;
}

std::string WorkerProcess::OutputTail(size_t max_bytes) const {
  auto log = ReadFile(log_path_);
  return log.ok() ? Tail(*log, max_bytes) : std::string();
}

std::optional<uint64_t> WorkerProcess::CpuTicks() const { return ProcessCpuTicks(pid_); }

}  // namespace ksmith
