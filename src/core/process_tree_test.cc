// The process tree of a child and the memory it holds together, and RunCommand's watch over it.
// Real processes only (/bin/sh, sleep, head, tail).
#include "core/process_tree.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/subprocess.h"

namespace ksmith {
namespace {

using std::chrono::milliseconds;

SpawnOptions Shell(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.environment = {"PATH=/usr/bin:/bin"};
  return options;
}

// `tail -n 1` keeps the last line whole, and /dev/zero has no newline: it holds all it reads, 200 MB,
// until its input ends `seconds` later (so that a check every 100 ms sees it, however fast the pipe).
std::string HoldsMemory(int seconds) {
  return "(head -c 200000000 /dev/zero; sleep " + std::to_string(seconds) + ") | tail -n 1 > /dev/null";
}

TEST(ProcessTree, ListsTheChildAndItsDescendants) {
  auto pid = SpawnProcess(Shell("sleep 5 & sleep 5 & wait"));
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  std::vector<pid_t> tree;
  for (int attempt = 0; attempt < 200 && tree.size() < 3; ++attempt) {
    std::this_thread::sleep_for(milliseconds(10));
    tree = ProcessTree(*pid);
  }
  ::kill(-*pid, SIGKILL);
  ::waitpid(*pid, nullptr, 0);
  ASSERT_EQ(tree.size(), 3u);  // the shell and its two sleeps
  EXPECT_EQ(tree.front(), *pid);
  EXPECT_TRUE(ProcessTree(*pid).empty());  // gone once reaped
}

TEST(ProcessTree, CountsTheAnonymousMemoryOfAGrandchild) {
  auto pid = SpawnProcess(Shell(HoldsMemory(5)));
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  uint64_t most = 0;
  for (int attempt = 0; attempt < 500 && most < (uint64_t{150} << 20); ++attempt) {
    std::this_thread::sleep_for(milliseconds(10));
    most = std::max(most, AnonymousResidentBytes(ProcessTree(*pid)));
  }
  ::kill(-*pid, SIGKILL);
  ::waitpid(*pid, nullptr, 0);
  EXPECT_GE(most, uint64_t{150} << 20);
}

TEST(RunCommand, KillsATreeThatHoldsMoreThanItsMemoryLimitTogether) {
  SpawnOptions options = Shell(HoldsMemory(5) + "; echo finished");
  options.limits.tree_memory_bytes = uint64_t{64} << 20;
  auto run = RunCommand(options, milliseconds(30000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run->tree_memory_exceeded);
  EXPECT_FALSE(run->succeeded());
  EXPECT_EQ(run->output.find("finished"), std::string::npos);
  EXPECT_GT(run->peak_tree_bytes, uint64_t{64} << 20);
  EXPECT_NE(run->Describe().find("together they held"), std::string::npos) << run->Describe();
}

TEST(RunCommand, LeavesATreeUnderItsMemoryLimitAlone) {
  SpawnOptions options = Shell(HoldsMemory(1) + "; echo finished");
  options.limits.tree_memory_bytes = uint64_t{1} << 30;
  auto run = RunCommand(options, milliseconds(30000));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_TRUE(run->succeeded()) << run->Describe();
  EXPECT_FALSE(run->tree_memory_exceeded);
  EXPECT_NE(run->output.find("finished"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
