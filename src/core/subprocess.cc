#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/landlock.h"
#include "core/process_tree.h"

extern char** environ;

namespace ksmith {
namespace {

using Clock = SteadyClock;
constexpr size_t kMaxPassedDescriptors = 8;
// How often a child's tree is measured against ChildLimits::tree_memory_bytes: a compiler grows by
// well under a GiB in this time.
constexpr std::chrono::milliseconds kTreeCheckInterval{100};

// Measures `root`'s tree against `limit` at most every kTreeCheckInterval; past it, kills every
// process of the tree and the child's process group, and says so.
class TreeMemoryWatch {
 public:
  TreeMemoryWatch(pid_t root, uint64_t limit) : root_(root), limit_(limit) {}
  bool watching() const { return limit_ > 0; }
  // True once the tree was over the limit (and has been killed).
  bool Exceeded(ProcessExit& exit) {
    if (!watching() || Clock::now() < next_check_) return false;
    next_check_ = Clock::now() + kTreeCheckInterval;
    const std::vector<pid_t> tree = ProcessTree(root_);
    const uint64_t bytes = AnonymousResidentBytes(tree);
    exit.peak_tree_bytes = std::max(exit.peak_tree_bytes, bytes);
    if (bytes <= limit_) return false;
    for (const pid_t pid : tree) ::kill(pid, SIGKILL);
    ::kill(-root_, SIGKILL);
    exit.tree_memory_exceeded = true;
    return true;
  }

 private:
  pid_t root_;
  uint64_t limit_;
  Clock::time_point next_check_ = Clock::now();
};
// Between RLIMIT_CPU's SIGXCPU and its SIGKILL, for a process that ignores the first.
constexpr rlim_t kCpuKillGrace = 5;  // [s]


// The pids of this process's children, from /proc (no allocation: `pids` holds at most `capacity`).
size_t ReadChildren(pid_t* pids, size_t capacity) {
  char path[64] = "/proc/self/task/";
  size_t at = 16;
  char digits[16];
  size_t count = 0;
  for (long value = ::syscall(SYS_gettid); value > 0; value /= 10) digits[count++] = char('0' + value % 10);
  while (count > 0) path[at++] = digits[--count];
  const char* tail = "/children";
  for (size_t i = 0; tail[i] != 0; ++i) path[at++] = tail[i];
  path[at] = 0;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[4096];
  const ssize_t length = ::read(fd, text, sizeof(text));
  ::close(fd);
  size_t found = 0;
  long value = -1;
  for (ssize_t i = 0; i < length && found < capacity; ++i) {
    if (text[i] >= '0' && text[i] <= '9') {
      value = (value < 0 ? 0 : value * 10) + (text[i] - '0');
    } else if (value >= 0) {
      pids[found++] = pid_t(value);
      value = -1;
    }
  }
  if (value >= 0 && found < capacity) pids[found++] = pid_t(value);
  return found;
}

// In the forked child: a new network namespace (no network), and this process becomes the
// command's parent and its descendants' reaper (PR_SET_CHILD_SUBREAPER): when the command ends,
// whatever it left running (a daemon that left its session and process group) is re-parented
// here and killed, before this process passes the command's exit status on. No PID namespace:
// the GPU driver refuses to start in one whose /proc is the host's. Async-signal-safe calls only.
void EnterIsolation() {
  if (::unshare(CLONE_NEWNET) != 0) ::unshare(CLONE_NEWUSER | CLONE_NEWNET);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return;
  const pid_t command = ::fork();
  if (command < 0) ::_exit(124);
  if (command == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    return;
  }
  int status = 0;
  while (::waitpid(command, &status, 0) < 0 && errno == EINTR) {
  }
  // Whatever is left: kill what is listed, reap, until no child remains (a process can only be
  // re-parented here while one of its ancestors is still a child of this one).
  while (true) {
    pid_t children[256];
    const size_t count = ReadChildren(children, 256);
    for (size_t i = 0; i < count; ++i) ::kill(children[i], SIGKILL);
    if (::waitpid(-1, nullptr, 0) < 0 && errno == ECHILD) break;
  }
  if (WIFSIGNALED(status)) {  // end the same way, so that the caller reads the same signal
    ::signal(WTERMSIG(status), SIG_DFL);
    ::raise(WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void ExecChild(const SpawnOptions& options, char* const* argv, char* const* envp,
                            int output_fd, int capture_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Its own process group, so that a timeout ends its children too (g++ runs cc1plus).
  ::setpgid(0, 0);
  // Before isolation, so that the command and everything it starts inherit them.
  const ChildLimits& limits = options.limits;
  if (limits.data_bytes > 0 || limits.address_space_bytes > 0 || limits.stack_bytes > 0 || limits.cpu_seconds > 0) {
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
  }
  for (const auto& [resource, bytes] : {std::pair{RLIMIT_DATA, limits.data_bytes}, {RLIMIT_AS, limits.address_space_bytes}}) {
    const rlimit limit{bytes, bytes};
    if (bytes > 0) ::setrlimit(resource, &limit);
  }
  if (limits.stack_bytes > 0) {
    rlimit stack{};
    ::getrlimit(RLIMIT_STACK, &stack);
    stack.rlim_max = limits.stack_bytes;
    stack.rlim_cur = std::min(stack.rlim_cur, stack.rlim_max);
    ::setrlimit(RLIMIT_STACK, &stack);
  }
  if (limits.cpu_seconds > 0) {
    const rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + kCpuKillGrace};
    ::setrlimit(RLIMIT_CPU, &cpu);
  }
  if (options.isolate) EnterIsolation();
  if (options.landlock_ruleset_fd >= 0) {
    for (const auto& path : options.landlock_writable_in_child) {
      LandlockRuleset::AllowWritingInChild(options.landlock_ruleset_fd, path.c_str());
    }
    if (!LandlockRuleset::RestrictSelf(options.landlock_ruleset_fd)) ::_exit(125);
  }
  const int null_fd = ::open("/dev/null", O_RDWR);
  ::dup2(null_fd, STDIN_FILENO);
  const int out_fd = capture_fd >= 0 ? capture_fd : (output_fd >= 0 ? output_fd : null_fd);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  // Move passed descriptors above any target slot first, then into 3, 4, ...
  // No allocation here: another parent thread may have held the malloc lock at fork time.
  int moved[kMaxPassedDescriptors];
  const size_t passed = options.passed_descriptors.size();
  for (size_t i = 0; i < passed; ++i) moved[i] = ::fcntl(options.passed_descriptors[i], F_DUPFD, 100);
  for (size_t i = 0; i < passed; ++i) ::dup2(moved[i], 3 + static_cast<int>(i));
  ::syscall(SYS_close_range, 3 + options.passed_descriptors.size(), ~0U, 0);
  if (!options.working_directory.empty() && ::chdir(options.working_directory.c_str()) != 0) {
    ::_exit(126);
  }
  if (options.argv[0].find('/') == std::string::npos) {
    ::execvpe(argv[0], argv, envp);
  } else {
    ::execve(argv[0], argv, envp);
  }
  ::_exit(127);
}

Result<pid_t> Spawn(const SpawnOptions& options, int capture_fd) {
  if (options.argv.empty()) return MakeError(ErrorKind::kInvalidArgument, "empty command line");
  if (options.passed_descriptors.size() > kMaxPassedDescriptors) {
    return MakeError(ErrorKind::kInvalidArgument, "too many descriptors to pass");
  }
  std::vector<char*> argv;
  for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.inherit_environment) {
    for (char** entry = environ; *entry; ++entry) envp.push_back(*entry);
  }
  for (const auto& entry : options.environment) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  int output_fd = -1;
  if (!options.output_path.empty()) {
    output_fd = ::open(options.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (output_fd < 0) {
      return MakeError(ErrorKind::kIo, "{}: cannot create: {}", options.output_path.string(),
                       std::strerror(errno));
    }
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (output_fd >= 0) ::close(output_fd);
    return MakeError(ErrorKind::kIo, "fork failed: {}", std::strerror(errno));
  }
  if (pid == 0) ExecChild(options, argv.data(), envp.data(), output_fd, capture_fd);
  if (output_fd >= 0) ::close(output_fd);
  return pid;
}

}  // namespace

std::string ProcessExit::Describe() const {
  if (timed_out) return fmt::format("timed out after {:.1f} s", elapsed_s);
  if (tree_memory_exceeded) {
    return fmt::format("killed with every process it started: together they held {:.2f} GiB",
                       static_cast<double>(peak_tree_bytes) / static_cast<double>(uint64_t{1} << 30));
  }
  if (signal != 0) {
    const char* name = ::sigabbrev_np(signal);
    return fmt::format("killed by SIG{} (signal {})", name ? name : "?", signal);
  }
  return fmt::format("exit code {}", exit_code);
}

Result<pid_t> SpawnProcess(const SpawnOptions& options) { return Spawn(options, -1); }

ProcessExit WaitForProcess(pid_t pid, std::optional<std::chrono::milliseconds> timeout, uint64_t tree_memory_bytes) {
  ProcessExit result;
  TreeMemoryWatch watch(pid, tree_memory_bytes);
  const auto start = Clock::now();
  int status = 0;
  rusage usage{};
  const bool poll_exit = timeout.has_value() || watch.watching();
  while (true) {
    const pid_t done = ::wait4(pid, &status, poll_exit ? WNOHANG : 0, &usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (watch.Exceeded(result)) {
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    if (timeout && Clock::now() - start > *timeout) {
      ::kill(-pid, SIGKILL);  // the child leads its own process group
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      result.timed_out = true;
      break;
    }
    if (poll_exit) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  result.elapsed_s = SecondsSince(start);
  auto seconds = [](const timeval& time) { return static_cast<double>(time.tv_sec) + 1e-6 * static_cast<double>(time.tv_usec); };
  result.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  result.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

Result<ProcessExit> RunCommand(const SpawnOptions& options, std::chrono::milliseconds timeout,
                               size_t max_output_bytes) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return MakeError(ErrorKind::kIo, "pipe failed: {}", std::strerror(errno));
  }
  const auto start = Clock::now();
  auto pid = Spawn(options, pipe_fds[1]);
  ::close(pipe_fds[1]);
  if (!pid.ok()) {
    ::close(pipe_fds[0]);
    return pid.error();
  }
  std::string output;
  bool timed_out = false;
  ProcessExit watched;
  TreeMemoryWatch watch(*pid, options.limits.tree_memory_bytes);
  while (true) {
    const auto remaining = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                         Clock::now() - start);
    if (remaining.count() <= 0) {
      timed_out = true;
      break;
    }
    if (watch.Exceeded(watched)) break;
    const auto wait = watch.watching() ? std::min(remaining, kTreeCheckInterval) : remaining;
    pollfd poll_fd{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, static_cast<int>(wait.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0 && wait < remaining) continue;  // only time to measure the tree again
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    char buffer[1 << 14];
    const ssize_t count = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) break;
    if (output.size() < max_output_bytes) output.append(buffer, static_cast<size_t>(count));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(-*pid, SIGKILL);
  // The output may end before the process does: the deadline still holds.
  const auto left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  ProcessExit exit = WaitForProcess(*pid, std::max(left, std::chrono::milliseconds(0)),
                                    watched.tree_memory_exceeded ? 0 : options.limits.tree_memory_bytes);
  if (exit.timed_out) ::kill(-*pid, SIGKILL);
  exit.timed_out = timed_out || exit.timed_out;
  exit.tree_memory_exceeded = exit.tree_memory_exceeded || watched.tree_memory_exceeded;
  exit.peak_tree_bytes = std::max(exit.peak_tree_bytes, watched.peak_tree_bytes);
  exit.elapsed_s = SecondsSince(start);
  exit.output = std::move(output);
  return exit;
}

}  // namespace ksmith
