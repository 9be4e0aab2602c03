// Forbidden calls that reach the evaluator: trying one is a violation even when the sandbox refuses
// it. A candidate that calls fork() or system() through a pointer computed from another libc
// symbol (no name in its source or imports) got a quiet EPERM, computed anyway and passed.
//
// The worker's seccomp filter answers these calls (policy.cc's kAttemptedCalls) with a notification
// (SECCOMP_RET_USER_NOTIF) instead of an error. The listener goes to the evaluator, whose thread
// (CallWatch) records each call and then answers EPERM: the kernel holds the calling thread until
// then, so the record exists, outside the process the candidate runs in, before its call returns.
// Nothing in the worker can undo it, and closing descriptors there cannot stop it. A signal trap
// (SECCOMP_RET_TRAP with a SIGSYS handler) was tried first and rejected: glibc's posix_spawn
// (system, popen) blocks every signal around its clone, as CPython's subprocess does around vfork,
// and the kernel then kills the process with SIGSYS instead of calling any handler.
//
// Trusted code runs in the same worker after the walls are up (the baseline, an imported task's
// torch, the reference) and may try such a call and handle the refusal. The worker says whose code
// runs in a page it shares with the evaluator (CodeWindow): what trusted code tried is recorded and
// stays quiet. That page is the one part a candidate could forge (it is mapped in its process; it
// would have to find it and know what to write); its attempt itself it cannot hide.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/result.h"

namespace ksmith {

/// Whose code the worker is running.
enum class CodeWindow : uint32_t {
  kWorker = 0,     // the worker's own, between calls: nothing of the candidate's should run
  kTrusted = 1,    // a baseline's or the reference's load or call
  kCandidate = 2,  // the candidate's load or call (its shim's, for a KernelBench candidate)
};

// --- The worker's side -------------------------------------------------------------------------

/// Creates the page shared with the evaluator and makes it this process's; returns its descriptor
/// (the caller hands it over). Before the walls: memfd_create is refused after.
Result<int> CreateCodeWindowPage();
/// Whose code runs from now on; nothing without a page.
void SetCodeWindow(CodeWindow window);
CodeWindow CurrentCodeWindow();
/// From now on a call tried outside any window is the candidate's (a thread it left running).
void MarkCandidateLoaded();

/// Sends the listener and the page to the evaluator's CallWatch over `report_fd`, then closes all
/// three here: no descriptor of the watch stays in the worker.
Status HandOverCallWatch(int report_fd, int listener_fd, int page_fd);

/// Runs the code of its scope (a library's load) in `window`, then the worker's again.
class ScopedCodeWindow {
 public:
  explicit ScopedCodeWindow(CodeWindow window) { SetCodeWindow(window); }
  ~ScopedCodeWindow() { SetCodeWindow(CodeWindow::kWorker); }
  ScopedCodeWindow(const ScopedCodeWindow&) = delete;
  ScopedCodeWindow& operator=(const ScopedCodeWindow&) = delete;
};

namespace call_watch_detail {

inline constexpr size_t kSlots = 8;  // functions wrapped per signature: a worker wraps each role once
[[noreturn]] void NoSlotLeft();

template <class Function>
struct Thunks;

template <class R, class... Args>
struct Thunks<R (*)(Args...)> {
  using Function = R (*)(Args...);
  static inline Function targets[kSlots] = {};
  static inline CodeWindow windows[kSlots] = {};
  static inline size_t used = 0;

  // A kernel may rewrite the registers its caller keeps (the timer-tamper red team does): the
  // clobbers make this frame save and restore them, and read what it needs after the call afresh.
  template <size_t kSlot>
  static R Call(Args... args) {
    SetCodeWindow(windows[kSlot]);
    if constexpr (std::is_void_v<R>) {
      targets[kSlot](args...);
      __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15", "memory");
      SetCodeWindow(CodeWindow::kWorker);
    } else {
      R result = targets[kSlot](args...);
      __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15", "memory");
      SetCodeWindow(CodeWindow::kWorker);
      return result;
    }
  }

  template <size_t... kSlot>
  static constexpr std::array<Function, kSlots> Table(std::index_sequence<kSlot...>) {
    return {&Call<kSlot>...};
  }
};

}  // namespace call_watch_detail

/// `function`, run in `window` at every call through the pointer returned (null stays null): the
/// entries and finishes the worker loads, so that every caller (a timing loop calling both sides
/// in turn) marks them without knowing.
template <class Function>
Function InWindow(CodeWindow window, Function function) {
  using Thunks = call_watch_detail::Thunks<Function>;
  if (function == nullptr) return nullptr;
  if (Thunks::used == call_watch_detail::kSlots) call_watch_detail::NoSlotLeft();
  static constexpr auto kTable = Thunks::Table(std::make_index_sequence<call_watch_detail::kSlots>());
  const size_t slot = Thunks::used++;
  Thunks::targets[slot] = function;
  Thunks::windows[slot] = window;
  return kTable[slot];
}

// --- The evaluator's side ----------------------------------------------------------------------

/// One call the sandbox denied, as the evaluator's thread saw it.
struct DeniedCall {
  std::string call;  // DescribeCall's words
  CodeWindow window = CodeWindow::kWorker;
  bool candidate = false;  // the candidate's: in its window, or outside any once it was loaded
};

/// A denied call in words: the system call's name, or what a program calls to make it ("fork
/// (clone)", "system/posix_spawn (clone with CLONE_VFORK)", told apart by clone's flags, its first
/// argument).
std::string DescribeCall(uint32_t arch, int number, uint64_t first_argument);

/// "the candidate tried fork (clone), denied by the sandbox"; empty when none is the candidate's.
std::string CandidateCallsReason(const std::vector<DeniedCall>& calls);

class CallWatch {
 public:
  /// Serves, on a thread of its own, the worker whose end of a socket pair is the peer of
  /// `socket_fd` (owned): it waits for the listener and the page, then answers every call.
  static std::unique_ptr<CallWatch> Start(int socket_fd);
  ~CallWatch();
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;

  /// Every call denied so far, in order.
  std::vector<DeniedCall> Denied() const;
  /// CandidateCallsReason of Denied().
  std::string CandidateReason() const;

 private:
  CallWatch(int socket_fd, int stop_read, int stop_write);
  void Serve();
  bool WaitReadable(int fd) const;  // false when stopped
  void Answer(int listener, const std::atomic<uint32_t>* page);

  int socket_fd_;
  int stop_read_;
  int stop_write_;
  mutable std::mutex mutex_;
  std::vector<DeniedCall> denied_;
  std::atomic<bool> candidate_tried_{false};  // asked after every reply: the usual answer is no
  std::thread thread_;
};

}  // namespace ksmith
