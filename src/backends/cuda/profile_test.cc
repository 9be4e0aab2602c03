// ncu support without ncu: the raw CSV as ncu 2025.3 prints it, the facts drawn from it, and a
// fake ncu (a shell script) for the ways a real one fails.
#include "backends/cuda/profile.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// `ncu --clock-control none --print-units base --csv --page raw --metrics ... ./replay`: program
// and ==PROF== lines first, then the header (launch columns, then metrics in ncu's alphabetical
// order), the units row, and one row per launch. Values group thousands with commas.
constexpr const char* kNcuCsv = R"CSV(==PROF== Connected to process 41255 (/work/build/ksmith-cuda-worker)
replay: 3 launches
==PROF== Profiling "vector_add_kernel" - 0: 0%....50%....100% - 9 passes
==PROF== Profiling "vector_add_kernel" - 1: 0%....50%....100% - 9 passes
==PROF== Profiling "matmul_tiled" - 2: 0%....50%....100% - 9 passes
==PROF== Disconnected from process 41255
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","lts__t_sector_hit_rate.pct","sm__maximum_warps_per_active_cycle_pct","sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"
"","","","","","","","","","","","%","%","nsecond","register/thread","%","%","%","%","%","","","","",""
"0","41255","ksmith-cuda-worker","127.0.0.1","vector_add_kernel(const float *, const float *, float *, long)","1","13","(256, 1, 1)","(65536, 1, 1)","0","9.0","87.12","88.40","12,160","16","33.21","100","0","21.30","82.10","0","24.10","0.02","1","0.45"
"1","41255","ksmith-cuda-worker","127.0.0.1","vector_add_kernel(const float *, const float *, float *, long)","1","13","(256, 1, 1)","(65536, 1, 1)","0","9.0","86.90","88.10","12,224","16","33.40","100","0","21.10","81.90","0","24.30","0.02","1","0.44"
"2","41255","ksmith-cuda-worker","127.0.0.1","void ksmith::(anonymous namespace)::matmul_tiled<64, 64>(const float *, const float *, float *, long, long, long)","1","13","(256, 1, 1)","(64, 64, 1)","0","9.0","12.01","45.30","1,412,352","128","91.20","25","n/a","92.40","15.20","3.10","0.80","6.20","1","1.10"
)CSV";

KernelProfile Launch(const std::string& name, std::map<std::string, double> metrics) {
  KernelProfile launch;
  launch.kernel = name;
  launch.metrics = std::move(metrics);
  return launch;
}

bool HasFact(const std::vector<std::string>& facts, const std::string& text) {
  for (const auto& fact : facts) {
    if (fact.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& facts) {
  std::string text;
  for (const auto& fact : facts) text += fact + "\n";
  return text;
}

std::string Stall(const std::string& reason) {
  return std::string(ncu_metric::kStallPrefix) + reason + std::string(ncu_metric::kStallSuffix);
}

fs::path WriteScript(const fs::path& path, const std::string& body) {
  EXPECT_TRUE(WriteFileAtomic(path, "#!/bin/sh\n" + body).ok());
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

TEST(ParseNcuCsv, ReadsEveryLaunchAndSkipsTheRest) {
  auto kernels = ParseNcuCsv(kNcuCsv);
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  ASSERT_EQ(kernels->size(), 3u);
  const KernelProfile& first = (*kernels)[0];
  EXPECT_EQ(first.kernel, "vector_add_kernel(const float *, const float *, float *, long)");
  EXPECT_EQ(first.id, 0);
  EXPECT_EQ(first.block_size, "(256, 1, 1)");
  EXPECT_EQ(first.grid_size, "(65536, 1, 1)");
  EXPECT_DOUBLE_EQ(first.metrics.at("dram__throughput.avg.pct_of_peak_sustained_elapsed"), 87.12);
  EXPECT_DOUBLE_EQ(first.metrics.at("gpu__time_duration.sum"), 12160);  // "12,160"
  EXPECT_EQ(first.metrics.count("Block Size"), 0u);  // launch columns are not metrics
  const KernelProfile& matmul = (*kernels)[2];
  EXPECT_EQ(matmul.id, 2);
  EXPECT_DOUBLE_EQ(matmul.metrics.at("gpu__time_duration.sum"), 1412352);
  EXPECT_EQ(matmul.metrics.count(std::string(ncu_metric::kTensorPipe)), 0u);  // "n/a"
  EXPECT_DOUBLE_EQ(matmul.metrics.at(std::string(ncu_metric::kRegistersPerThread)), 128);
}

TEST(ParseNcuCsv, ScalesUnitsToNanosecondsAndBytes) {
  const char* csv =
      "\"ID\",\"Kernel Name\",\"dram__bytes.sum\",\"gpu__time_duration.sum\"\n"
      "\"\",\"\",\"Mbyte\",\"usecond\"\n"
      "\"0\",\"k()\",\"1,073.74\",\"351.23\"\n";
  auto kernels = ParseNcuCsv(csv);
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  EXPECT_DOUBLE_EQ((*kernels)[0].metrics.at("gpu__time_duration.sum"), 351230);
  EXPECT_DOUBLE_EQ((*kernels)[0].metrics.at("dram__bytes.sum"), 1073.74e6);
}

TEST(ParseNcuCsv, QuotedCommasAndQuotesStayInsideTheirField) {
  const char* csv =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n"
      "\"0\",\"void k<\"\"a,b\"\">(int, int)\",\"1,000\"\n";
  auto kernels = ParseNcuCsv(csv);
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  EXPECT_EQ((*kernels)[0].kernel, "void k<\"a,b\">(int, int)");
  EXPECT_DOUBLE_EQ((*kernels)[0].metrics.at("gpu__time_duration.sum"), 1000);
}

TEST(ParseNcuCsv, OutputWithoutResultsIsAnErrorThatQuotesNcu) {
  auto missing = ParseNcuCsv(
      "==PROF== Connected to process 7\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0.\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kParse);
  EXPECT_NE(missing.error().message.find("ERR_NVGPUCTRPERM"), std::string::npos);

  auto empty = ParseNcuCsv("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::kParse);
}

TEST(BottleneckFacts, MemoryBoundKernel) {
  auto kernels = ParseNcuCsv(kNcuCsv);
  ASSERT_TRUE(kernels.ok());
  const std::vector<KernelProfile> vector_add(kernels->begin(), kernels->begin() + 2);
  const auto facts = BottleneckFacts(vector_add);
  ASSERT_FALSE(facts.empty());
  // One kernel: only the first fact, the kind of limit, names it; its two launches are merged.
  EXPECT_EQ(facts[0], "vector_add_kernel: memory-bound: DRAM at 87% of peak, SM at 21%");
  EXPECT_EQ(facts[1], "12.2 us per launch (2 launches)");
  EXPECT_TRUE(HasFact(facts, "L2 hit rate 33%")) << Joined(facts);
  EXPECT_TRUE(HasFact(facts, "top stall: long_scoreboard (waiting on global or local memory)"))
      << Joined(facts);
  EXPECT_FALSE(HasFact(facts, "tensor")) << Joined(facts);  // irrelevant to a streaming kernel
  EXPECT_FALSE(HasFact(facts, "occupancy")) << Joined(facts);
}

TEST(BottleneckFacts, ComputeBoundKernelAtLowOccupancyIsNotToldToRaiseIt) {
  auto kernels = ParseNcuCsv(kNcuCsv);
  ASSERT_TRUE(kernels.ok());
  KernelProfile matmul = (*kernels)[2];
  matmul.metrics[std::string(ncu_metric::kTensorPipe)] = 0;
  const auto facts = BottleneckFacts({matmul});
  EXPECT_EQ(facts[0], "ksmith::matmul_tiled<64, 64>: compute-bound: SM at 92% of peak, DRAM at 12%");
  EXPECT_EQ(facts[1], "1.41 ms per launch");
  EXPECT_TRUE(HasFact(facts, "tensor pipes idle")) << Joined(facts);
  // 15% occupancy, but the SM is at its peak: more warps would not help.
  EXPECT_FALSE(HasFact(facts, "occupancy")) << Joined(facts);
  EXPECT_FALSE(HasFact(facts, "L2 hit rate")) << Joined(facts);
  // Stall shares leave out "selected" (issuing): math_pipe_throttle is 6.2 of 11.2 cycles.
  EXPECT_TRUE(HasFact(facts, "top stall: math_pipe_throttle (math pipe busy), 55% of stall cycles"))
      << Joined(facts);
  EXPECT_TRUE(HasFact(facts, "then barrier")) << Joined(facts);
}

TEST(BottleneckFacts, LatencyBoundKernelWithLowOccupancy) {
  const auto facts = BottleneckFacts({Launch(
      "void reduce_rows(const float *, float *, long)",
      {{"gpu__time_duration.sum", 52000},
       {std::string(ncu_metric::kSmThroughput), 19.6},
       {std::string(ncu_metric::kDramThroughput), 14.8},
       {std::string(ncu_metric::kMemoryThroughput), 22.1},
       {std::string(ncu_metric::kAchievedOccupancy), 18.2},
       {std::string(ncu_metric::kTheoreticalOccupancy), 25},
       {std::string(ncu_metric::kRegistersPerThread), 128},
       {Stall("barrier"), 9.5},
       {Stall("long_scoreboard"), 2.0}})});
  EXPECT_TRUE(HasFact(facts, "latency-bound: neither compute (SM 20%) nor memory (DRAM 15%)"))
      << Joined(facts);
  EXPECT_TRUE(HasFact(facts, "low occupancy: 18% achieved (theoretical 25%, limited by registers "
                             "or shared memory per block; 128 registers per thread)"))
      << Joined(facts);
  EXPECT_TRUE(HasFact(facts, "top stall: barrier (waiting at __syncthreads), 83% of stall cycles"))
      << Joined(facts);
}

TEST(BottleneckFacts, TooFewBlocksIsToldApartFromResourceLimits) {
  const auto facts = BottleneckFacts({Launch("tiny_grid()", {{std::string(ncu_metric::kSmThroughput), 3},
                                                             {std::string(ncu_metric::kAchievedOccupancy), 6},
                                                             {std::string(ncu_metric::kTheoreticalOccupancy), 100}})});
  EXPECT_TRUE(HasFact(facts, "low occupancy: 6% achieved of 100% theoretical: too few blocks"))
      << Joined(facts);
}

TEST(BottleneckFacts, HeaviestKernelFirstEachFactNamed) {
  auto kernels = ParseNcuCsv(kNcuCsv);
  ASSERT_TRUE(kernels.ok());
  const auto facts = BottleneckFacts(*kernels);
  ASSERT_GE(facts.size(), 2u);
  EXPECT_EQ(facts[0], "ksmith::matmul_tiled<64, 64>: compute-bound: SM at 92% of peak, DRAM at 12%");
  EXPECT_EQ(facts[1], "ksmith::matmul_tiled<64, 64>: 1.41 ms per launch, 98% of GPU time");
  size_t first_vector_add = facts.size();
  for (size_t i = 0; i < facts.size(); ++i) {
    if (facts[i].starts_with("vector_add_kernel: ") && first_vector_add == facts.size()) first_vector_add = i;
    EXPECT_TRUE(facts[i].starts_with("ksmith::matmul_tiled<64, 64>: ") ||
                facts[i].starts_with("vector_add_kernel: "))
        << facts[i];
  }
  ASSERT_LT(first_vector_add, facts.size());
  EXPECT_EQ(facts[first_vector_add], "vector_add_kernel: memory-bound: DRAM at 87% of peak, SM at 21%");
  EXPECT_EQ(facts[first_vector_add + 1], "vector_add_kernel: 12.2 us per launch (2 launches), 2% of GPU time");
}

TEST(BottleneckFacts, NoKernelsNoFacts) { EXPECT_TRUE(BottleneckFacts({}).empty()); }

TEST(ProfileMetrics, NamesTheFixedSetOnce) {
  const auto metrics = ProfileMetrics();
  const std::set<std::string> unique(metrics.begin(), metrics.end());
  EXPECT_EQ(unique.size(), metrics.size());
  for (const std::string_view required :
       {ncu_metric::kDuration, ncu_metric::kDramThroughput, ncu_metric::kSmThroughput,
        ncu_metric::kAchievedOccupancy, ncu_metric::kL2HitRate, ncu_metric::kTensorPipe}) {
    EXPECT_TRUE(unique.count(std::string(required))) << required;
  }
  EXPECT_TRUE(unique.count(Stall("long_scoreboard")));
}

TEST(NcuCommand, FixedFlagsThenTheReplayCommand) {
  const auto argv = NcuCommand("/usr/local/cuda/bin/ncu", {"./replay", "--case", "3"});
  ASSERT_GE(argv.size(), 15u);
  EXPECT_EQ(argv[0], "/usr/local/cuda/bin/ncu");
  const std::vector<std::string> flags(argv.begin() + 1, argv.end() - 3);
  const std::vector<std::string> expected_head = {"--clock-control", "none", "--print-units", "base",
                                                  "--csv", "--page", "raw", "--metrics"};
  EXPECT_EQ(std::vector<std::string>(flags.begin(), flags.begin() + 8), expected_head);
  EXPECT_NE(flags[8].find("gpu__time_duration.sum,"), std::string::npos);
  EXPECT_EQ(flags[8].find(' '), std::string::npos);
  EXPECT_EQ(std::vector<std::string>(flags.begin() + 9, flags.end()),
            (std::vector<std::string>{"--target-processes", "all"}));
  EXPECT_EQ(std::vector<std::string>(argv.end() - 3, argv.end()),
            (std::vector<std::string>{"./replay", "--case", "3"}));
}

TEST(FindNcu, ConfiguredPathThenSearchPathThenFallback) {
  ScopedTempDir dir("ksmith-profile-test");
  const fs::path bin = dir.path() / "bin";
  fs::create_directories(bin);
  const fs::path ncu = WriteScript(bin / "ncu", "exit 0\n");
  const fs::path other = WriteScript(dir.path() / "my-ncu", "exit 0\n");
  const std::string search_path = "/nonexistent:" + bin.string();
  EXPECT_EQ(FindNcu(other.c_str(), search_path.c_str(), ""), other);
  EXPECT_EQ(FindNcu(nullptr, search_path.c_str(), ""), ncu);
  EXPECT_EQ(FindNcu("", "/nonexistent", other), other);
  EXPECT_EQ(FindNcu(nullptr, "/nonexistent", "/nonexistent/ncu"), std::nullopt);
  // An explicit choice that does not exist is not silently replaced.
  EXPECT_EQ(FindNcu("/nonexistent/ncu", search_path.c_str(), other), std::nullopt);
}

TEST(RunProfile, MissingNcuIsAClearError) {
  testing::ScopedEnv env("KSMITH_NCU", "/nonexistent/ncu");
  auto profile = RunProfile({"/bin/true"}, std::chrono::seconds(10));
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(profile.error().message.find("ncu not found: KSMITH_NCU=/nonexistent/ncu"),
            std::string::npos)
      << profile.error().message;
}

TEST(RunProfile, PermissionRefusalIsAClearError) {
  ScopedTempDir dir("ksmith-profile-test");
  const fs::path ncu = WriteScript(
      dir.path() / "ncu",
      "echo '==PROF== Connected to process 7'\n"
      "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0.'\n"
      "exit 1\n");
  testing::ScopedEnv env("KSMITH_NCU", ncu.string());
  auto profile = RunProfile({"/bin/true"}, std::chrono::seconds(10));
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(profile.error().message.find("ERR_NVGPUCTRPERM"), std::string::npos);
}

TEST(RunProfile, RetriesWithoutMetricsThisGpuLacks) {
  // Given an ncu that rejects the Hopper-only gmma stall metric (as on an older GPU), the profile
  // is taken again without it.
  ScopedTempDir dir("ksmith-profile-test");
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "result.csv", kNcuCsv).ok());
  const fs::path ncu = WriteScript(
      dir.path() / "ncu",
      "echo \"$*\" >> \"$(dirname \"$0\")/calls.log\"\n"
      "case \"$*\" in *stalled_gmma_*) echo '==ERROR== Failed to find metric "
      "smsp__average_warps_issue_stalled_gmma_per_issue_active.ratio'; exit 1 ;; esac\n"
      "cat \"$(dirname \"$0\")/result.csv\"\n");
  testing::ScopedEnv env("KSMITH_NCU", ncu.string());
  auto profile = RunProfile({"./replay", "--case", "0"}, std::chrono::seconds(10));
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->size(), 3u);
  auto calls = ReadFile(dir.path() / "calls.log");
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(std::count(calls->begin(), calls->end(), '\n'), 2);
  EXPECT_NE(calls->find("--target-processes all ./replay --case 0"), std::string::npos) << *calls;
}

TEST(RunProfile, NoKernelsIsAnError) {
  ScopedTempDir dir("ksmith-profile-test");
  const fs::path ncu = WriteScript(dir.path() / "ncu", "echo '==WARNING== No kernels were profiled.'\n");
  testing::ScopedEnv env("KSMITH_NCU", ncu.string());
  auto profile = RunProfile({"/bin/true"}, std::chrono::seconds(10));
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace ksmith
