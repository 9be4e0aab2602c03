#include "agent/elite_archive.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

// A passing, timed attempt whose CPU build used vectors of `bits` (fp64 when asked).
Attempt Cpu(int64_t number, double speedup, int bits, bool fp64 = false, double roofline = 0.4) {
  Attempt attempt;
  attempt.candidate_id = 100 + number;
  attempt.number = number;
  attempt.status = "passed";
  attempt.speedup = speedup;
  Verdict& verdict = attempt.verdict.emplace();
  verdict.status = VerdictStatus::kPassed;
  Timing& timing = verdict.timing.emplace();
  timing.speedup.median = speedup;
  timing.candidate_us.median = 1000 / speedup;
  timing.bound_by = "memory";
  timing.roofline_fraction = roofline;
  StageRecord build{"build", "ok", 0, {}, 0};
  VectorCode& code = build.details.build.emplace().vector_code.emplace();
  code.instructions = 100;
  code.openmp_parallel = 1;
  code.packed_single = 10;
  code.packed_double = fp64 ? 4 : 0;
  (bits == 512 ? code.arithmetic_512_bit : bits == 256 ? code.arithmetic_256_bit : code.arithmetic_128_bit) = 10;
  verdict.stages.push_back(std::move(build));
  return attempt;
}

TEST(KernelFeatures, ComeFromTheMachineCodeAndTheTiming) {
  const KernelFeatures features = FeaturesOf(*Cpu(1, 1.5, 256, true, 0.55).verdict);
  EXPECT_EQ(features.Cell(), "memory/v256/omp/fp64");
  EXPECT_EQ(features.Describe(),
            "memory-bound at 50-75% of the limit, 256-bit vector arithmetic, an OpenMP parallel region, fp64 vector arithmetic");
}

TEST(KernelFeatures, CudaKernelsAreKeyedOnLoadsSharedMemoryTensorCoresAndRegisters) {
  Verdict verdict;
  verdict.timing.emplace().bound_by = "compute";
  verdict.timing->roofline_fraction = 0.8;
  StageRecord build{"build", "ok", 0, {}, 0};
  BuildFacts& facts = build.details.build.emplace();
  KernelResources kernel;
  kernel.registers = 90;
  kernel.shared_memory_bytes = 16384;
  facts.resources = std::vector<KernelResources>{kernel};
  SassSummary& sass = facts.sass.emplace();
  sass.total.instructions = 500;
  sass.total.tensor_core = 8;
  sass.total.loads = 20;
  sass.total.wide_loads = 10;
  sass.total.loads_128_bit = 10;
  verdict.stages.push_back(std::move(build));
  EXPECT_EQ(FeaturesOf(verdict).Cell(), "compute/ld128/smem/tc/r128");
}

TEST(KernelFeatures, AnUntimedVerdictHasUnknownPosition) {
  Verdict verdict;
  EXPECT_EQ(FeaturesOf(verdict).Cell(), "untimed");
}

TEST(EliteArchive, KeepsTheFastestKernelOfEachKind) {
  EliteArchive archive;
  EXPECT_TRUE(archive.Offer(Cpu(1, 1.2, 256), 0));
  EXPECT_TRUE(archive.Offer(Cpu(2, 0.9, 512), 1));   // slower, but a new kind: kept
  EXPECT_FALSE(archive.Offer(Cpu(3, 1.1, 256), 2));  // slower than its cell's elite
  EXPECT_FALSE(archive.Offer(Cpu(4, 1.2, 256), 3));  // a tie keeps the earlier
  EXPECT_TRUE(archive.Offer(Cpu(5, 1.4, 256), 4));
  Attempt failed = Cpu(6, 3.0, 128);
  failed.status = "wrong_output";
  EXPECT_FALSE(archive.Offer(failed, 5));
  Attempt repeat = Cpu(7, 3.0, 128);
  repeat.repeat_of = 5;
  EXPECT_FALSE(archive.Offer(repeat, 6));
  ASSERT_EQ(archive.size(), 2u);
  EXPECT_EQ(archive.Best()->number, 5);
  EXPECT_EQ(archive.Ranked().back()->number, 2);
  EXPECT_EQ(archive.ToJson()[0]["cell"], "memory/v256/omp/fp32");
}

TEST(DescribePlacement, NamesGenerationIslandOperatorAndParents) {
  EXPECT_EQ(DescribePlacement({{"island", 1}, {"generation", 2}, {"operator", "crossover"}, {"parents", {3, 6}}}),
            "generation 2, island 1, crossover of 3 and 6");
  EXPECT_EQ(DescribePlacement({{"operator", "contrastive"}, {"parents", {4, 2, 9}}}), "contrastive over 4, 2 and 9");
  EXPECT_EQ(DescribePlacement(nlohmann::json::object()), "");
}

TEST(WhyFaster, SaysWhichKnobsAndFeaturesChanged) {
  Attempt first = Cpu(1, 1.2, 256);
  first.knobs = {{"SIMDLEN", "8"}, {"CHUNK", "16"}};
  Attempt best = Cpu(7, 1.8, 512, false, 0.6);
  best.knobs = {{"SIMDLEN", "16"}, {"CHUNK", "16"}};
  const auto reasons = WhyFaster(first, best);
  ASSERT_EQ(reasons.size(), 3u);
  EXPECT_EQ(reasons[0], "knob SIMDLEN: 8 -> 16");
  EXPECT_EQ(reasons[1], "vector arithmetic: 256-bit -> 512-bit");
  EXPECT_EQ(reasons[2], "time: 833.3 us -> 555.6 us; memory-bound limit reached: 40% -> 60%");
  EXPECT_TRUE(WhyFaster(best, best).empty());
}

}  // namespace
}  // namespace ksmith
