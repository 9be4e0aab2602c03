// The build's limits: which one a failed build hit, as the kernel accounted its processes, and how
// many builds the machine's memory holds at once.
#include "compile/build.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint64_t kGiB = uint64_t{1} << 30;

ProcessExit Failed(double cpu_s, uint64_t peak_rss_bytes, std::string output, int signal = 0) {
  ProcessExit exit;
  exit.exit_code = signal == 0 ? 1 : -1;
  exit.signal = signal;
  exit.cpu_s = cpu_s;
  exit.peak_rss_bytes = peak_rss_bytes;
  exit.output = std::move(output);
  return exit;
}

TEST(BuildLimitHit, AProcessNearTheMemoryLimitNamesItWithItsValue) {
  const BuildLimits limits{.memory_bytes = 4 * kGiB, .cpu_s = 120};
  const auto hit = FindBuildLimitHit(Failed(20, 3900ull << 20, "g++: fatal error: Killed signal terminated program"),
                                     limits, milliseconds(180'000), "the compiler");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->limit, "memory");
  EXPECT_EQ(hit->value, 4.0 * kGiB);
  EXPECT_EQ(hit->reason, "the compiler exceeded the build's memory limit of 4 GiB");
}

TEST(BuildLimitHit, ATreeKilledForItsMemoryTogetherNamesTheMemoryLimit) {
  const BuildLimits limits{.memory_bytes = 8 * kGiB, .cpu_s = 120};
  ProcessExit exit = Failed(30, 3 * kGiB, "", SIGKILL);  // no one process near the limit
  exit.tree_memory_exceeded = true;
  exit.peak_tree_bytes = 9 * kGiB;
  const auto hit = FindBuildLimitHit(exit, limits, milliseconds(180'000), "the build sandbox");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->limit, "memory");
  EXPECT_EQ(hit->reason,
            "the build sandbox and the processes it started together exceeded the build's memory limit of 8 GiB");
}

TEST(BuildLimitHit, AnAllocationThatFailedFurtherFromTheLimitCountsWhenTheCompilerSaysSo) {
  // Given one large request that failed at 1.5 of 4 GiB: only the compiler's words tell.
  const BuildLimits limits{.memory_bytes = 4 * kGiB, .cpu_s = 120};
  const auto said = FindBuildLimitHit(Failed(8, 1536ull << 20, "virtual memory exhausted: Cannot allocate memory\n"),
                                      limits, milliseconds(180'000), "the compiler");
  ASSERT_TRUE(said.has_value());
  EXPECT_EQ(said->limit, "memory");
  const auto silent = FindBuildLimitHit(Failed(8, 1536ull << 20, "error: expected ';'\n"), limits, milliseconds(180'000),
                                        "the compiler");
  EXPECT_FALSE(silent.has_value());
}

TEST(BuildLimitHit, ASmallBuildThatSaysOutOfMemoryIsTheCompilersOwnFailure) {
  // A candidate can make the compiler print anything (#error out of memory): words alone decide nothing.
  const BuildLimits limits;
  EXPECT_FALSE(FindBuildLimitHit(Failed(0.2, 60ull << 20, "candidate.cpp:3:2: error: #error out of memory"), limits,
                                 milliseconds(180'000), "the compiler"));
}

TEST(BuildLimitHit, SigxcpuAfterTheCpuLimitNamesTheCpuLimit) {
  const BuildLimits limits{.memory_bytes = 8 * kGiB, .cpu_s = 3};
  const auto reported = FindBuildLimitHit(
      Failed(2.98, 200ull << 20, "g++: fatal error: CPU time limit exceeded signal terminated program cc1plus"), limits,
      milliseconds(120'000), "the compiler");
  ASSERT_TRUE(reported.has_value());
  EXPECT_EQ(reported->limit, "cpu_time");
  EXPECT_EQ(reported->value, 3.0);
  EXPECT_EQ(reported->reason, "the compiler exceeded the build's CPU time limit of 3 s");
  const auto signalled = FindBuildLimitHit(Failed(3.1, 10ull << 20, "", SIGXCPU), limits, milliseconds(120'000), "nvcc");
  ASSERT_TRUE(signalled.has_value());
  EXPECT_EQ(signalled->reason, "nvcc exceeded the build's CPU time limit of 3 s");
}

TEST(BuildLimitHit, TheCpuLimitNeedsTheCpuTimeNotOnlyTheWords) {
  const BuildLimits limits{.memory_bytes = 8 * kGiB, .cpu_s = 120};
  EXPECT_FALSE(FindBuildLimitHit(Failed(0.3, 60ull << 20, "error: #error CPU time limit exceeded"), limits,
                                 milliseconds(180'000), "the compiler"));
}

TEST(BuildLimitHit, AWallTimeoutIsTheWallClockLimitAndASuccessIsNone) {
  const BuildLimits limits;
  ProcessExit timed_out = Failed(50, 100ull << 20, "");
  timed_out.timed_out = true;
  const auto hit = FindBuildLimitHit(timed_out, limits, milliseconds(180'000), "the compiler");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->limit, "wall_time");
  EXPECT_EQ(hit->reason, "the compiler ran past the build's wall-clock limit of 180 s");
  ProcessExit succeeded;
  succeeded.exit_code = 0;
  succeeded.peak_rss_bytes = 7 * kGiB;
  EXPECT_FALSE(FindBuildLimitHit(succeeded, limits, milliseconds(180'000), "the compiler"));
}

TEST(BuildLimits, TheWallClockLimitLeavesTheCpuLimitRoomToActFirst) {
  EXPECT_EQ(BuildLimits{}.WallTimeout(seconds(120)), milliseconds(180'000));  // 1.5 x 120 s
  EXPECT_EQ(BuildLimits{}.WallTimeout(seconds(300)), milliseconds(300'000));  // nvcc's own is longer
  EXPECT_EQ((BuildLimits{.memory_bytes = kGiB, .cpu_s = 3}).WallTimeout(seconds(120)), milliseconds(120'000));
}

TEST(BuildLimits, EachProcessGetsTheMemoryAsDataAndAQuarterAsStack) {
  const BuildLimits limits{.memory_bytes = 8 * kGiB, .cpu_s = 120.5};
  const ChildLimits compiler = limits.ForChild(true);
  EXPECT_EQ(compiler.data_bytes, 8 * kGiB);
  EXPECT_EQ(compiler.address_space_bytes, 8 * kGiB);
  EXPECT_EQ(compiler.stack_bytes, 2 * kGiB);
  EXPECT_EQ(compiler.cpu_seconds, 121u);
  EXPECT_EQ(limits.ForChild(false).address_space_bytes, 0u);  // the CUDA runtime reserves more
}

TEST(BuildLimits, AsManyBuildsAtOnceAsThreeQuartersOfTheMemoryHolds) {
  // Half limits: a build of one process takes kMemorySlotsPerBuild of them.
  EXPECT_EQ(BuildMemorySlots(BuildLimits{}, 24 * kGiB), 4u);     // 18 GiB / 4 GiB
  EXPECT_EQ(BuildMemorySlots(BuildLimits{}, 125 * kGiB), 23u);   // the H200 host: 7 GPU build sandboxes of 3
  EXPECT_EQ(BuildMemorySlots(BuildLimits{}, 512 * kGiB), 96u);
  EXPECT_EQ(BuildMemorySlots(BuildLimits{}, 8 * kGiB), 2u);      // never less than one build
  EXPECT_EQ(BuildMemorySlots({.memory_bytes = kGiB / 2, .cpu_s = 120}, 24 * kGiB), 72u);
  EXPECT_GT(PhysicalMemoryBytes(), 0u);
}

TEST(BuildLimits, MemoryReadsInGibOrMib) {
  EXPECT_EQ(FormatMemory(8 * kGiB), "8 GiB");
  EXPECT_EQ(FormatMemory(kGiB / 2), "512 MiB");
  EXPECT_EQ(FormatMemory(kGiB + kGiB / 2), "1.5 GiB");
}

}  // namespace
}  // namespace ksmith
