// The watch over forbidden calls: how a denied call is named, when it is the candidate's, and, in a
// forked child walled in with a report socket, that each call reaches the evaluator's thread
// before it returns, whoever made it and whatever signals were blocked.
#include "sandbox/call_watch.h"

#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sandbox/policy.h"

namespace ksmith {
namespace {

std::string Describe(int number, uint64_t first_argument = 0) {
  return DescribeCall(SCMP_ARCH_X86_64, number, first_argument);
}

TEST(DescribeCall, NamesWhatAProgramCallsRatherThanTheSystemCall) {
  EXPECT_EQ(Describe(SCMP_SYS(clone), SIGCHLD), "fork (clone)");
  EXPECT_EQ(Describe(SCMP_SYS(clone), CLONE_VM | CLONE_VFORK | SIGCHLD), "system/posix_spawn (clone with CLONE_VFORK)");
  EXPECT_EQ(Describe(SCMP_SYS(execve)), "execve");
  EXPECT_EQ(Describe(SCMP_SYS(kill)), "kill (a signal to another process)");
  EXPECT_EQ(Describe(SCMP_SYS(ptrace)), "ptrace");
}

TEST(CandidateCallsReason, TrustedCodesCallsAreNotTheCandidates) {
  EXPECT_EQ(CandidateCallsReason({}), "");
  EXPECT_EQ(CandidateCallsReason({{"fork (clone)", CodeWindow::kTrusted, false}}), "");
}

TEST(CandidateCallsReason, NamesEachCallOnceWithItsCount) {
  const std::string reason = CandidateCallsReason({{"fork (clone)", CodeWindow::kCandidate, true},
                                                   {"fork (clone)", CodeWindow::kTrusted, false},
                                                   {"execve", CodeWindow::kCandidate, true},
                                                   {"fork (clone)", CodeWindow::kCandidate, true}});
  EXPECT_EQ(reason, "the candidate tried fork (clone) (2 times) and execve, denied by the sandbox (an attempt fails "
                    "the candidate)");
}

TEST(CandidateCallsReason, SaysWhenNoCallOfTheCandidateWasRunning) {
  const std::string reason = CandidateCallsReason({{"ptrace", CodeWindow::kWorker, true}});
  EXPECT_NE(reason.find("ptrace"), std::string::npos) << reason;
  EXPECT_NE(reason.find("from a thread it left running"), std::string::npos) << reason;
}

int windowed_calls = 0;
CodeWindow seen_inside = CodeWindow::kWorker;
int CountCall(int value, const char*) {
  ++windowed_calls;
  seen_inside = CurrentCodeWindow();
  return value + 1;
}

TEST(InWindow, RunsTheFunctionInItsWindowThenTheWorkersAgain) {
  auto page = CreateCodeWindowPage();
  ASSERT_TRUE(page.ok()) << page.error().message;
  ::close(*page);  // the mapping stays
  using Function = int (*)(int, const char*);
  EXPECT_EQ(InWindow(CodeWindow::kCandidate, Function{nullptr}), nullptr);
  const Function wrapped = InWindow(CodeWindow::kCandidate, &CountCall);
  ASSERT_NE(wrapped, &CountCall);
  EXPECT_EQ(wrapped(41, "x"), 42);
  EXPECT_EQ(windowed_calls, 1);
  EXPECT_EQ(seen_inside, CodeWindow::kCandidate);
  EXPECT_EQ(CurrentCodeWindow(), CodeWindow::kWorker);
  // A second function of the same signature keeps its own window.
  const Function trusted = InWindow(CodeWindow::kTrusted, &CountCall);
  EXPECT_EQ(trusted(1, "y"), 2);
  EXPECT_EQ(seen_inside, CodeWindow::kTrusted);
  EXPECT_EQ(wrapped(1, "z"), 2);
  EXPECT_EQ(seen_inside, CodeWindow::kCandidate);
  {
    ScopedCodeWindow loading(CodeWindow::kTrusted);
    EXPECT_EQ(CurrentCodeWindow(), CodeWindow::kTrusted);
  }
  EXPECT_EQ(CurrentCodeWindow(), CodeWindow::kWorker);
}

// The child's errno for each call, as its exit code: bit i set when call i was not refused with
// EPERM (system() reports a spawn it could not make as status 127).
int TryForbiddenCallsInEveryWindow() {
  int wrong = 0;
  auto expect_eperm = [&](int bit, long result) {
    if (result != -1 || errno != EPERM) wrong |= 1 << bit;
  };
  SetCodeWindow(CodeWindow::kTrusted);
  expect_eperm(0, ::fork());  // the baseline's: quiet
  SetCodeWindow(CodeWindow::kCandidate);
  MarkCandidateLoaded();
  expect_eperm(1, ::fork());
  if (const int status = std::system("true"); !WIFEXITED(status) || WEXITSTATUS(status) != 127) wrong |= 1 << 2;
  expect_eperm(3, ::socket(AF_UNIX, SOCK_STREAM, 0));  // refused quietly, even for the candidate
  // Every signal blocked: a signal trap would now kill the process instead of reporting.
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);
  expect_eperm(4, ::syscall(SYS_vfork));
  SetCodeWindow(CodeWindow::kWorker);  // no call running: a thread the candidate left
  char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
  expect_eperm(5, ::execve("/bin/true", argv, nullptr));
  return wrong;
}

// Forks a child that walls itself in with a report socket to a new watch and returns `body()`'s
// value as its exit code (100: this kernel cannot hand a seccomp listener over); waits for it.
struct WatchedChild {
  std::unique_ptr<CallWatch> watch;
  int status = 0;
  bool no_listener() const { return WIFEXITED(status) && WEXITSTATUS(status) == 100; }
};

template <typename Body>
WatchedChild RunWatchedChild(Body body) {
  WatchedChild child;
  int report[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report) != 0) return child;
  child.watch = CallWatch::Start(report[0]);
  if (child.watch == nullptr) return child;
  const pid_t pid = ::fork();
  if (pid == 0) {
    SandboxPolicy policy;
    policy.report_fd = report[1];
    if (!ApplySandbox(policy).attempts_reported) ::_exit(100);
    ::_exit(body());
  }
  ::close(report[1]);
  if (::waitpid(pid, &child.status, 0) != pid) child.status = -1;
  return child;
}

TEST(CallWatch, EveryForbiddenCallReachesTheEvaluatorWithWhoseCodeMadeIt) {
  const WatchedChild child = RunWatchedChild(TryForbiddenCallsInEveryWindow);
  ASSERT_NE(child.watch, nullptr);
  ASSERT_TRUE(WIFEXITED(child.status)) << child.status;
  if (child.no_listener()) GTEST_SKIP() << "this kernel cannot hand a seccomp listener over (Linux < 5.7?)";
  EXPECT_EQ(WEXITSTATUS(child.status), 0) << "calls not refused with EPERM, as bits";
  const std::vector<DeniedCall> denied = child.watch->Denied();
  ASSERT_EQ(denied.size(), 5u);
  EXPECT_EQ(denied[0].call, "fork (clone)");
  EXPECT_EQ(denied[0].window, CodeWindow::kTrusted);
  EXPECT_FALSE(denied[0].candidate);
  EXPECT_EQ(denied[1].call, "fork (clone)");
  EXPECT_TRUE(denied[1].candidate);
  EXPECT_EQ(denied[2].call, "system/posix_spawn (clone with CLONE_VFORK)");
  EXPECT_TRUE(denied[2].candidate);
  EXPECT_EQ(denied[3].call, "vfork");
  EXPECT_TRUE(denied[3].candidate);
  EXPECT_EQ(denied[4].call, "execve");
  EXPECT_EQ(denied[4].window, CodeWindow::kWorker);
  EXPECT_TRUE(denied[4].candidate);
  const std::string reason = child.watch->CandidateReason();
  EXPECT_NE(reason.find("the candidate tried fork (clone), system/posix_spawn"), std::string::npos) << reason;
}

TEST(CallWatch, TrustedCodesManyCallsCannotCrowdOutTheCandidates) {
  const WatchedChild child = RunWatchedChild([] {
    SetCodeWindow(CodeWindow::kTrusted);
    for (int i = 0; i < 300; ++i) (void)::fork();
    SetCodeWindow(CodeWindow::kCandidate);
    (void)::syscall(SYS_vfork);
    return 0;
  });
  ASSERT_NE(child.watch, nullptr);
  if (child.no_listener()) GTEST_SKIP() << "no seccomp listener here";
  const std::string reason = child.watch->CandidateReason();
  EXPECT_NE(reason.find("the candidate tried vfork"), std::string::npos) << reason;
}

TEST(CallWatch, AWorkerThatNeverHandsTheListenerOverEndsTheWatchCleanly) {
  int report[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, report), 0);
  auto watch = CallWatch::Start(report[0]);
  ASSERT_NE(watch, nullptr);
  ::close(report[1]);
  EXPECT_TRUE(watch->Denied().empty());
  watch.reset();  // joins its thread: a hang here is the failure
}

}  // namespace
}  // namespace ksmith
