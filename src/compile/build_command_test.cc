// A build's command as every backend runs it: the work folder out of its output, and the limit
// that stopped it named at the end. Real processes (/bin/sh, head, tail).
#include "compile/build_command.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

SpawnOptions Shell(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.environment = {"PATH=/usr/bin:/bin"};
  return options;
}

TEST(RunBuildCommand, TakesTheWorkFolderOutOfWhatTheCompilerSaid) {
  const auto run = RunBuildCommand(Shell("echo /tmp/ksmith-work-1/kernel.cc:3: error: nope; exit 1"), BuildLimits{},
                                   std::chrono::seconds(30), "/tmp/ksmith-work-1", "the compiler");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->exit.output, "kernel.cc:3: error: nope\n");
  EXPECT_FALSE(run->exit.succeeded());
  EXPECT_FALSE(run->limit_hit.has_value()) << "the compiler's own failure";
}

TEST(RunBuildCommand, NamesTheLimitThatStoppedItAtTheEndOfItsOutput) {
  SpawnOptions options = Shell("echo compiling; (head -c 200000000 /dev/zero; sleep 5) | tail -n 1 > /dev/null");
  const BuildLimits limits{.memory_bytes = uint64_t{64} << 20, .cpu_s = 60};
  options.limits.tree_memory_bytes = limits.memory_bytes;
  const auto run = RunBuildCommand(options, limits, std::chrono::seconds(30), "/tmp/unused", "the build sandbox");
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE(run->limit_hit.has_value()) << run->exit.Describe();
  EXPECT_EQ(run->limit_hit->limit, "memory");
  EXPECT_EQ(run->exit.output,
            "compiling\n\n[the build sandbox and the processes it started together exceeded the build's memory limit "
            "of 64 MiB]\n");
}

}  // namespace
}  // namespace ksmith
