#include "sandbox/call_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "sandbox/shared_memory.h"

namespace ksmith {
namespace {

constexpr size_t kPageBytes = 4096;
constexpr size_t kMaxRecorded = 256;  // a loop of calls is named by its first ones

// The page's words: whose code runs, and whether the candidate was loaded.
enum PageWord { kWindowWord = 0, kCandidateLoadedWord = 1 };

// Read afresh at every use: a kernel may have rewritten the registers that would hold it.
std::atomic<std::atomic<uint32_t>*> page{nullptr};

}  // namespace

namespace call_watch_detail {

void NoSlotLeft() {
  std::fputs("ksmith: internal error: more functions wrapped in a code window than slots\n", stderr);
  std::abort();
}

}  // namespace call_watch_detail

Result<int> CreateCodeWindowPage() {
  const int fd = ::memfd_create("ksmith-code-window", MFD_CLOEXEC);
  if (fd < 0) return MakeError(ErrorKind::kIo, "memfd_create failed: {}", std::strerror(errno));
  if (::ftruncate(fd, kPageBytes) != 0) {
    const int saved = errno;
    ::close(fd);
    return MakeError(ErrorKind::kIo, "cannot size the code window page: {}", std::strerror(saved));
  }
  void* data = ::mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int saved = errno;
    ::close(fd);
    return MakeError(ErrorKind::kIo, "cannot map the code window page: {}", std::strerror(saved));
  }
  page.store(static_cast<std::atomic<uint32_t>*>(data));
  return fd;
}

void SetCodeWindow(CodeWindow window) {
  if (auto* words = page.load(std::memory_order_relaxed)) {
    words[kWindowWord].store(static_cast<uint32_t>(window), std::memory_order_release);
  }
}

CodeWindow CurrentCodeWindow() {
  auto* words = page.load(std::memory_order_relaxed);
  return words != nullptr ? static_cast<CodeWindow>(words[kWindowWord].load()) : CodeWindow::kWorker;
}

void MarkCandidateLoaded() {
  if (auto* words = page.load(std::memory_order_relaxed)) words[kCandidateLoadedWord].store(1);
}

Status HandOverCallWatch(int report_fd, int listener_fd, int page_fd) {
  Status status = SendDescriptor(report_fd, listener_fd);
  if (status.ok()) status = SendDescriptor(report_fd, page_fd);
  for (int fd : {listener_fd, page_fd, report_fd}) ::close(fd);
  return status;
}

std::string DescribeCall(uint32_t arch, int number, uint64_t first_argument) {
  char* resolved = ::seccomp_syscall_resolve_num_arch(arch, number);
  const std::string name = resolved != nullptr ? resolved : fmt::format("system call {}", number);
  std::free(resolved);
  // fork() and posix_spawn() (under system() and popen()) both reach the kernel as clone.
  if (name == "clone") {
    return (first_argument & CLONE_VFORK) != 0 ? "system/posix_spawn (clone with CLONE_VFORK)" : "fork (clone)";
  }
  if (name == "kill" || name == "tgkill" || name == "rt_sigqueueinfo" || name == "rt_tgsigqueueinfo") {
    return name + " (a signal to another process)";
  }
  return name;
}

std::string CandidateCallsReason(const std::vector<DeniedCall>& calls) {
  std::vector<std::string> order;
  std::map<std::string, size_t> counts;
  bool outside_calls = false;
  for (const auto& call : calls) {
    if (!call.candidate) continue;
    if (counts[call.call]++ == 0) order.push_back(call.call);
    outside_calls = outside_calls || call.window == CodeWindow::kWorker;
  }
  if (order.empty()) return "";
  std::string tried;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) tried += i + 1 == order.size() ? " and " : ", ";
    tried += order[i];
    if (const size_t count = counts[order[i]]; count > 1) tried += fmt::format(" ({} times)", count);
  }
  return fmt::format("the candidate tried {}{}, denied by the sandbox (an attempt fails the candidate)", tried,
                     outside_calls ? " from a thread it left running" : "");
}

std::unique_ptr<CallWatch> CallWatch::Start(int socket_fd) {
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) {
    ::close(socket_fd);
    return nullptr;
  }
  std::unique_ptr<CallWatch> watch(new CallWatch(socket_fd, stop[0], stop[1]));
  watch->thread_ = std::thread([raw = watch.get()] { raw->Serve(); });
  return watch;
}

CallWatch::CallWatch(int socket_fd, int stop_read, int stop_write)
    : socket_fd_(socket_fd), stop_read_(stop_read), stop_write_(stop_write) {}

CallWatch::~CallWatch() {
  const char byte = 's';
  (void)!::write(stop_write_, &byte, 1);
  if (thread_.joinable()) thread_.join();
  for (int fd : {socket_fd_, stop_read_, stop_write_}) ::close(fd);
}

std::vector<DeniedCall> CallWatch::Denied() const {
  std::lock_guard lock(mutex_);
  return denied_;
}

std::string CallWatch::CandidateReason() const {
  return candidate_tried_.load() ? CandidateCallsReason(Denied()) : std::string();
}

bool CallWatch::WaitReadable(int fd) const {
  pollfd fds[2] = {{fd, POLLIN, 0}, {stop_read_, POLLIN, 0}};
  while (::poll(fds, 2, -1) < 0) {
    if (errno != EINTR) return false;
  }
  return fds[1].revents == 0 && fds[0].revents != 0;
}

void CallWatch::Serve() {
  // The worker hands both over once its walls are up; a worker that never does (no sandbox, the
  // doctor's probe) closes its end or is stopped with it.
  if (!WaitReadable(socket_fd_)) return;
  auto listener = ReceiveDescriptor(socket_fd_, std::nullopt);
  if (!listener.ok()) return;
  auto page_fd = ReceiveDescriptor(socket_fd_, std::nullopt);
  if (!page_fd.ok()) {
    ::close(*listener);
    return;
  }
  void* mapped = ::mmap(nullptr, kPageBytes, PROT_READ, MAP_SHARED, *page_fd, 0);
  ::close(*page_fd);
  // Without the page every call counts as the candidate's: the worker's walls went up without
  // saying whose code runs.
  const auto* words = mapped != MAP_FAILED ? static_cast<const std::atomic<uint32_t>*>(mapped) : nullptr;
  Answer(*listener, words);
  ::close(*listener);
  if (words != nullptr) ::munmap(mapped, kPageBytes);
}

void CallWatch::Answer(int listener, const std::atomic<uint32_t>* words) {
  seccomp_notif* request = nullptr;
  seccomp_notif_resp* response = nullptr;
  if (::seccomp_notify_alloc(&request, &response) != 0) return;
  while (WaitReadable(listener)) {
    // The kernel refuses a request that is not zeroed.
    std::memset(request, 0, sizeof(*request));
    if (::seccomp_notify_receive(listener, request) != 0) {
      // The calling thread died in between (ENOENT), or every process under the filter is gone.
      pollfd hung{listener, POLLIN, 0};
      if (::poll(&hung, 1, 0) > 0 && (hung.revents & (POLLHUP | POLLERR)) != 0) break;
      continue;
    }
    DeniedCall call;
    call.call = DescribeCall(request->data.arch, request->data.nr, request->data.args[0]);
    call.window = words != nullptr ? static_cast<CodeWindow>(words[kWindowWord].load()) : CodeWindow::kCandidate;
    // Outside any window, once the candidate is loaded, only a thread it left can be calling; a
    // value that names no window was written by no worker.
    const bool loaded = words == nullptr || words[kCandidateLoadedWord].load() != 0;
    call.candidate = call.window != CodeWindow::kTrusted && (call.window != CodeWindow::kWorker || loaded);
    {
      // Recorded before the answer: the call returns only after, so any reply it precedes finds it.
      // Past the cap, the candidate's first call is still kept: trusted code's cannot crowd it out.
      std::lock_guard lock(mutex_);
      const bool first_of_candidate = call.candidate && !candidate_tried_.exchange(true);
      if (denied_.size() < kMaxRecorded || first_of_candidate) denied_.push_back(std::move(call));
    }
    std::memset(response, 0, sizeof(*response));
    response->id = request->id;
    response->error = -EPERM;
    ::seccomp_notify_respond(listener, response);  // ENOENT: the thread is gone already
  }
  ::seccomp_notify_free(request, response);
}

}  // namespace ksmith
