// Spawning and running processes: output capture, exit codes, signals, timeouts, environment,
// descriptor passing. Real processes only (/bin/sh, /bin/echo, /bin/sleep).
#include "core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/landlock.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

SpawnOptions Shell(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

// True when a process whose command line is exactly `argv` (NUL-separated) is alive.
bool ProcessWithCommandLineExists(const std::string& cmdline) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (text == cmdline) return true;
  }
  return false;
}

TEST(RunCommand, CapturesStdoutAndExitCode) {
  SpawnOptions options;
  options.argv = {"/bin/echo", "hello", "world"};
  auto run = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->output, "hello world\n");
  EXPECT_EQ(run->exit_code, 0);
  EXPECT_EQ(run->signal, 0);
  EXPECT_FALSE(run->timed_out);
  EXPECT_TRUE(run->succeeded());
  EXPECT_EQ(run->Describe(), "exit code 0");
}

TEST(RunCommand, CapturesStderrTogetherWithStdoutAndANonZeroExit) {
  auto run = RunCommand(Shell("echo out; echo err >&2; exit 3"), milliseconds(5000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(Contains(run->output, "out\n"));
  EXPECT_TRUE(Contains(run->output, "err\n"));
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_FALSE(run->succeeded());
  EXPECT_EQ(run->Describe(), "exit code 3");
}

TEST(RunCommand, ReportsTheSignalThatEndedTheProcess) {
  auto run = RunCommand(Shell("kill -SEGV $$"), milliseconds(5000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->signal, SIGSEGV);
  EXPECT_FALSE(run->succeeded());
  EXPECT_EQ(run->Describe(), "killed by SIGSEGV (signal 11)");
}

TEST(RunCommand, TimesOutASleepWithinHalfASecond) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "10"};
  const auto start = std::chrono::steady_clock::now();
  auto run = RunCommand(options, milliseconds(200));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run->timed_out);
  EXPECT_FALSE(run->succeeded());
  EXPECT_LT(elapsed, 1.0);  // killed right after the timeout, not after the 10 s sleep
  EXPECT_GE(run->elapsed_s, 0.19);
  EXPECT_TRUE(Contains(run->Describe(), "timed out after"));
}

TEST(RunCommand, TimeoutStillAppliesAfterTheChildClosesItsOutput) {
  // Given a child that closes stdout/stderr and keeps running, the timeout still ends it.
  const auto start = std::chrono::steady_clock::now();
  auto run = RunCommand(Shell("exec >/dev/null 2>&1; sleep 3"), milliseconds(200));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  EXPECT_LT(elapsed, 1.0);
}

TEST(RunCommand, TimeoutAlsoEndsTheChildsOwnChildren) {
  // Given a shell that runs a command (as g++ runs cc1plus), a timeout ends both.
  // A marker argument that no other process on the machine has.
  const std::string seconds = "7." + std::to_string(::getpid() % 1000);
  auto run = RunCommand(Shell("/bin/sleep " + seconds + "; :"), milliseconds(300));
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->timed_out);
  std::this_thread::sleep_for(milliseconds(100));
  const bool orphan = ProcessWithCommandLineExists("/bin/sleep" + std::string(1, '\0') + seconds +
                                                   std::string(1, '\0'));
  EXPECT_FALSE(orphan) << "the shell's sleep survived the timeout";
}

TEST(RunCommand, IsolatedChildHasNoNetworkAndTakesItsDaemonsWithIt) {
  // Given a command that leaves a daemon behind (its own session, so no process group holds it)
  // and lists its network interfaces, when it runs isolated, then the daemon ends with it and it
  // sees only the loopback device.
  const std::string seconds = "9." + std::to_string(::getpid() % 1000);
  SpawnOptions options = Shell("setsid /bin/sleep " + seconds + " & cat /proc/net/dev");
  options.isolate = true;
  auto run = RunCommand(options, milliseconds(10'000));
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->succeeded()) << run->Describe() << run->output;
  EXPECT_TRUE(Contains(run->output, "lo:"));
  if (Contains(run->output, "eth")) GTEST_SKIP() << "this kernel gives no new network namespace: " << run->output;
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(ProcessWithCommandLineExists("/bin/sleep" + std::string(1, '\0') + seconds + std::string(1, '\0')))
      << "the daemon outlived the isolated command";
}

TEST(RunCommand, IsolatedChildsExitCodeIsPassedOn) {
  SpawnOptions options = Shell("exit 7");
  options.isolate = true;
  auto run = RunCommand(options, milliseconds(10'000));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 7) << run->Describe();
  EXPECT_EQ(run->signal, 0);
}

TEST(RunCommand, TheChildAndWhatItStartsRunUnderItsLimits) {
  SpawnOptions options = Shell("ulimit -d; ulimit -t; ulimit -c; /bin/sh -c 'ulimit -d; ulimit -t'");
  options.limits = {.data_bytes = uint64_t{256} << 20, .cpu_seconds = 7};
  options.isolate = true;  // the limits hold past the isolating fork too
  auto run = RunCommand(options, milliseconds(10'000));
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->succeeded()) << run->Describe() << run->output;
  EXPECT_EQ(run->output, "262144\n7\n0\n262144\n7\n");  // ulimit -d counts KiB
}

TEST(RunCommand, AChildOverItsDataLimitCannotAllocate) {
  SpawnOptions options = Shell("/bin/dd if=/dev/zero of=/dev/null bs=64M count=1");
  options.limits.data_bytes = uint64_t{32} << 20;
  auto run = RunCommand(options, milliseconds(10'000));
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->succeeded());
  EXPECT_TRUE(Contains(run->output, "memory exhausted"));
}

TEST(RunCommand, AChildOverItsCpuLimitEndsBySigxcpuAfterThatMuchCpuTime) {
  SpawnOptions options = Shell("while :; do :; done");
  options.limits.cpu_seconds = 1;
  auto run = RunCommand(options, milliseconds(30'000));
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->signal, SIGXCPU) << run->Describe();
  EXPECT_GE(run->cpu_s, 0.9);
  EXPECT_LT(run->cpu_s, 3.0);
}

TEST(RunCommand, ReportsTheCpuTimeAndPeakMemoryOfTheChildAndWhatItWaitedFor) {
  // Given a shell that runs a program touching a 64 MiB buffer, then the largest resident set
  // reported is that program's, and the CPU time includes what it spent.
  auto run = RunCommand(Shell("/bin/dd if=/dev/zero of=/dev/null bs=64M count=4 2>/dev/null"), milliseconds(10'000));
  ASSERT_TRUE(run.ok());
  ASSERT_TRUE(run->succeeded()) << run->Describe() << run->output;
  EXPECT_GE(run->peak_rss_bytes, uint64_t{60} << 20);
  EXPECT_LT(run->peak_rss_bytes, uint64_t{1} << 30);
  EXPECT_GT(run->cpu_s, 0.0);
}

TEST(RunCommand, LandlockedChildWritesItsOwnProcFilesOnlyWhenAllowedInTheChild) {
  // Given a ruleset that lets the child write nothing, when the isolated child renames itself
  // through /proc/self/task (what the CUDA driver does to its threads), then it may only where
  // the path was allowed in the child, which resolves /proc/self to its own, final pid.
  if (LandlockAbi() < 1) GTEST_SKIP() << "no Landlock in this kernel";
  auto rename_itself = [](bool allowed) {
    auto ruleset = LandlockRuleset::Create({"/proc"}, {"/bin", "/usr", "/lib", "/lib64"}, {"/dev/null"});
    EXPECT_TRUE(ruleset.ok());
    SpawnOptions options = Shell("printf renamed > /proc/$$/task/$$/comm && cat /proc/$$/comm");
    options.isolate = true;
    options.landlock_ruleset_fd = ruleset->fd();
    if (allowed) options.landlock_writable_in_child = {"/proc/self/task"};
    return RunCommand(options, milliseconds(10'000));
  };
  auto allowed = rename_itself(true);
  ASSERT_TRUE(allowed.ok());
  EXPECT_TRUE(allowed->succeeded()) << allowed->Describe() << allowed->output;
  EXPECT_TRUE(Contains(allowed->output, "renamed"));
  auto denied = rename_itself(false);
  ASSERT_TRUE(denied.ok());
  EXPECT_FALSE(denied->succeeded()) << denied->output;
  EXPECT_TRUE(Contains(denied->output, "Permission denied"));
}

TEST(RunCommand, DoesNotInheritTheEnvironmentUnlessAsked) {
  ::setenv("KSMITH_SUBPROCESS_TEST_SECRET", "leaked", 1);
  SpawnOptions options;
  options.argv = {"/usr/bin/env"};
  options.environment = {"ONLY_THIS=1"};
  auto isolated = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(isolated.ok());
  EXPECT_EQ(isolated->output, "ONLY_THIS=1\n");

  options.inherit_environment = true;
  auto inherited = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(inherited.ok());
  EXPECT_TRUE(Contains(inherited->output, "KSMITH_SUBPROCESS_TEST_SECRET=leaked"));
  EXPECT_TRUE(Contains(inherited->output, "ONLY_THIS=1"));
  ::unsetenv("KSMITH_SUBPROCESS_TEST_SECRET");
}

TEST(RunCommand, PassedDescriptorArrivesAsFdThree) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  SpawnOptions options = Shell("echo through-fd-3 >&3");
  options.passed_descriptors = {pipe_fds[1]};
  auto run = RunCommand(options, milliseconds(5000));
  ::close(pipe_fds[1]);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->succeeded()) << run->output;
  char buffer[64] = {};
  const ssize_t count = ::read(pipe_fds[0], buffer, sizeof(buffer) - 1);
  ::close(pipe_fds[0]);
  EXPECT_EQ(std::string(buffer, count > 0 ? static_cast<size_t>(count) : 0), "through-fd-3\n");
  EXPECT_EQ(run->output, "");
}

TEST(RunCommand, ClosesEveryDescriptorThatWasNotPassed) {
  // Opened without O_CLOEXEC, so only the explicit close in the child keeps it out.
  const int stray = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(stray, 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  // `ls` lists the shell's descriptors while the shell waits for it.
  SpawnOptions options = Shell("ls /proc/$$/fd");
  options.passed_descriptors = {pipe_fds[1]};
  auto run = RunCommand(options, milliseconds(5000));
  ::close(stray);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_TRUE(run.ok());
  // 0, 1, 2 and the passed 3; nothing else of the parent.
  EXPECT_EQ(run->output, "0\n1\n2\n3\n");
}

TEST(RunCommand, RunsInTheRequestedWorkingDirectory) {
  ScopedTempDir temp("ksmith-subprocess");
  ASSERT_TRUE(temp.ok());
  SpawnOptions options;
  options.argv = {"/bin/pwd"};
  options.working_directory = temp.path();
  auto run = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->output, temp.path().string() + "\n");
}

TEST(RunCommand, MissingWorkingDirectoryExitsWith126) {
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.working_directory = "/nonexistent/ksmith/folder";
  auto run = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 126);
}

TEST(RunCommand, LooksUpANameWithoutSlashOnPath) {
  SpawnOptions options;
  options.argv = {"echo", "found"};
  auto run = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->output, "found\n");
}

TEST(RunCommand, MissingProgramExitsWith127) {
  SpawnOptions options;
  options.argv = {"/nonexistent/ksmith-no-such-program"};
  auto run = RunCommand(options, milliseconds(5000));
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 127);
}

TEST(RunCommand, KeepsAtMostAboutTheOutputLimit) {
  auto run = RunCommand(Shell("i=0; while [ $i -lt 2000 ]; do echo 0123456789012345678901234567890123456789; i=$((i+1)); done"),
                        milliseconds(10000), 1000);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->succeeded());
  EXPECT_GE(run->output.size(), 1000u);
  EXPECT_LT(run->output.size(), 2000u * 41);
}

TEST(RunCommand, RejectsAnEmptyCommandLine) {
  auto run = RunCommand(SpawnOptions{}, milliseconds(1000));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kInvalidArgument);
}

TEST(RunCommand, RejectsMoreThanEightPassedDescriptors) {
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.passed_descriptors = {0, 1, 2, 0, 1, 2, 0, 1, 2};
  auto run = RunCommand(options, milliseconds(1000));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kInvalidArgument);
}

TEST(SpawnProcess, WritesOutputToTheRequestedFile) {
  ScopedTempDir temp("ksmith-subprocess");
  ASSERT_TRUE(temp.ok());
  SpawnOptions options = Shell("echo to-file; echo err-to-file >&2");
  options.output_path = temp.path() / "log.txt";
  auto pid = SpawnProcess(options);
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  const ProcessExit exit = WaitForProcess(*pid, milliseconds(5000));
  EXPECT_TRUE(exit.succeeded()) << exit.Describe();
  auto log = ReadFile(temp.path() / "log.txt");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, "to-file\nerr-to-file\n");
}

TEST(WaitForProcess, KillsAProcessThatOutlivesItsTimeout) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "10"};
  auto pid = SpawnProcess(options);
  ASSERT_TRUE(pid.ok());
  const ProcessExit exit = WaitForProcess(*pid, milliseconds(150));
  EXPECT_TRUE(exit.timed_out);
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_LT(exit.elapsed_s, 1.0);
  // Reaped: the pid is no longer a child of ours.
  EXPECT_EQ(::waitpid(*pid, nullptr, WNOHANG), -1);
}

TEST(WaitForProcess, WithoutTimeoutWaitsForTheExitCode) {
  auto pid = SpawnProcess(Shell("exit 7"));
  ASSERT_TRUE(pid.ok());
  const ProcessExit exit = WaitForProcess(*pid, std::nullopt);
  EXPECT_FALSE(exit.timed_out);
  EXPECT_EQ(exit.exit_code, 7);
}

TEST(ProcessExit, DescribesATimeoutWithItsDuration) {
  ProcessExit exit;
  exit.timed_out = true;
  exit.elapsed_s = 3.04;
  EXPECT_EQ(exit.Describe(), "timed out after 3.0 s");
  EXPECT_FALSE(exit.succeeded());
}

}  // namespace
}  // namespace ksmith
