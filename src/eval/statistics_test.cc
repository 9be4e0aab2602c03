// Timing statistics: medians, their distribution-free confidence intervals, paired speedups.
#include "eval/statistics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "tensor/random.h"

namespace ksmith {
namespace {

std::vector<double> OneTo(int n) {
  std::vector<double> values;
  for (int i = 1; i <= n; ++i) values.push_back(i);
  return values;
}

// Log-normal timing-like samples around 100 us.
std::vector<double> TimingSamples(size_t n, uint64_t seed) {
  std::vector<float> noise(n);
  FillRandom(noise.data(), n, Distribution::kNormal, seed, 0);
  std::vector<double> samples;
  for (float z : noise) samples.push_back(100.0 * std::exp(0.1 * z));
  return samples;
}

TEST(MedianWithInterval, MedianOfAnOddCountIsTheMiddleValue) {
  const Estimate estimate = MedianWithInterval({5, 1, 3});
  EXPECT_EQ(estimate.median, 3.0);
  EXPECT_EQ(estimate.samples, 3u);
}

TEST(MedianWithInterval, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(MedianWithInterval({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(MedianWithInterval({10, 20}).median, 15.0);
}

TEST(MedianWithInterval, SingleSampleIsItsOwnInterval) {
  const Estimate estimate = MedianWithInterval({7});
  EXPECT_EQ(estimate.median, 7.0);
  EXPECT_EQ(estimate.low, 7.0);
  EXPECT_EQ(estimate.high, 7.0);
}

TEST(MedianWithInterval, NoSamplesGiveAnEmptyEstimate) {
  const Estimate estimate = MedianWithInterval({});
  EXPECT_EQ(estimate.samples, 0u);
  EXPECT_EQ(estimate.median, 0.0);
}

TEST(MedianWithInterval, FewerThanSixSamplesUseTheRange) {
  const Estimate estimate = MedianWithInterval({3, 9, 1, 4, 6});
  EXPECT_EQ(estimate.low, 1.0);
  EXPECT_EQ(estimate.high, 9.0);
  EXPECT_EQ(estimate.median, 4.0);
}

TEST(MedianWithInterval, IntervalComesFromOrderStatistics) {
  // n = 100: ranks 50 -+ 1.96 * sqrt(100) / 2, i.e. the 40th and 60th values.
  const Estimate estimate = MedianWithInterval(OneTo(100));
  EXPECT_EQ(estimate.median, 50.5);
  EXPECT_EQ(estimate.low, 40.0);
  EXPECT_EQ(estimate.high, 60.0);
}

TEST(MedianWithInterval, IntervalContainsTheMedianForEverySampleCount) {
  for (size_t n = 1; n <= 60; ++n) {
    const Estimate estimate = MedianWithInterval(TimingSamples(n, n));
    EXPECT_LE(estimate.low, estimate.median) << n;
    EXPECT_GE(estimate.high, estimate.median) << n;
  }
}

TEST(MedianWithInterval, IntervalNarrowsAsSamplesAccumulate) {
  const Estimate few = MedianWithInterval(TimingSamples(20, 1));
  const Estimate many = MedianWithInterval(TimingSamples(2000, 1));
  EXPECT_LT(many.high - many.low, few.high - few.low);
  EXPECT_LT(many.high - many.low, 2.0);  // about 100 * 0.1 * 2.5 / sqrt(2000) * 2
  EXPECT_NEAR(many.median, 100.0, 1.0);
}

TEST(MedianWithInterval, DoesNotDependOnTheOrderOfSamples) {
  std::vector<double> samples = TimingSamples(101, 5);
  const Estimate forward = MedianWithInterval(samples);
  std::reverse(samples.begin(), samples.end());
  const Estimate backward = MedianWithInterval(samples);
  EXPECT_EQ(forward.median, backward.median);
  EXPECT_EQ(forward.low, backward.low);
  EXPECT_EQ(forward.high, backward.high);
}

TEST(PairedSpeedup, ConstantRatioOfTwoIsExactlyTwo) {
  const std::vector<double> candidate = TimingSamples(50, 3);
  std::vector<double> baseline;
  for (double time : candidate) baseline.push_back(2 * time);
  const Estimate speedup = PairedSpeedup(baseline, candidate);
  EXPECT_DOUBLE_EQ(speedup.median, 2.0);
  EXPECT_DOUBLE_EQ(speedup.low, 2.0);
  EXPECT_DOUBLE_EQ(speedup.high, 2.0);
  EXPECT_EQ(speedup.samples, 50u);
}

TEST(PairedSpeedup, PairsCancelDriftThatAffectsBothSides) {
  // The machine slows down tenfold half-way; every round the candidate is still 1.5x faster.
  std::vector<double> baseline, candidate;
  for (int i = 0; i < 40; ++i) {
    const double drift = i < 20 ? 1.0 : 10.0;
    candidate.push_back(10.0 * drift);
    baseline.push_back(15.0 * drift);
  }
  const Estimate speedup = PairedSpeedup(baseline, candidate);
  EXPECT_DOUBLE_EQ(speedup.median, 1.5);
  EXPECT_DOUBLE_EQ(speedup.high - speedup.low, 0.0);
}

TEST(PairedSpeedup, UsesOnlyCompletePairsAndSkipsZeroTimes) {
  const Estimate speedup = PairedSpeedup({4, 6, 8, 100}, {2, 0, 4});
  EXPECT_EQ(speedup.samples, 2u);
  EXPECT_DOUBLE_EQ(speedup.median, 2.0);
}

TEST(PairedSpeedup, SlowerCandidateHasASpeedupBelowOne) {
  const Estimate speedup = PairedSpeedup({10, 10, 10, 10, 10, 10, 10}, {20, 21, 19, 20, 22, 18, 20});
  EXPECT_LT(speedup.high, 1.0);
  EXPECT_NEAR(speedup.median, 0.5, 0.01);
}

TEST(Estimate, ToJsonHasMedianIntervalAndCount) {
  const nlohmann::json json = MedianWithInterval(OneTo(100)).ToJson();
  EXPECT_EQ(json.at("median"), 50.5);
  ASSERT_EQ(json.at("ci95").size(), 2u);
  EXPECT_EQ(json.at("ci95")[0], 40.0);
  EXPECT_EQ(json.at("ci95")[1], 60.0);
  EXPECT_EQ(json.at("samples"), 100);
}

TEST(Estimate, AlsoHasTheMeanStdAndRangeKernelBenchReports) {
  // numpy's mean, std (population, ddof=0), min and max of {2, 4, 4, 4, 5, 5, 7, 9}: 5, 2, 2, 9.
  const Estimate estimate = MedianWithInterval({9, 4, 2, 4, 5, 7, 4, 5});
  EXPECT_DOUBLE_EQ(estimate.mean, 5.0);
  EXPECT_DOUBLE_EQ(estimate.stddev, 2.0);
  EXPECT_DOUBLE_EQ(estimate.min, 2.0);
  EXPECT_DOUBLE_EQ(estimate.max, 9.0);
  const Estimate read = Estimate::FromJson(estimate.ToJson());
  EXPECT_DOUBLE_EQ(read.mean, 5.0);
  EXPECT_DOUBLE_EQ(read.stddev, 2.0);
  EXPECT_DOUBLE_EQ(read.min, 2.0);
  EXPECT_DOUBLE_EQ(read.max, 9.0);
  // A verdict written before they were recorded reads them as 0, and an empty estimate writes none.
  EXPECT_DOUBLE_EQ(Estimate::FromJson({{"median", 3.0}, {"ci95", {2.0, 4.0}}, {"samples", 5}}).mean, 0.0);
  EXPECT_FALSE(Estimate{}.ToJson().contains("mean"));
}

TEST(ComparisonDecided, AnIntervalClearOfOneOrInsideTheTieBandAnswersTheQuestion) {
  auto speedup = [](double low, double median, double high) {
    Estimate estimate;
    estimate.low = low;
    estimate.median = median;
    estimate.high = high;
    return estimate;
  };
  EXPECT_TRUE(ComparisonDecided(speedup(1.10, 1.20, 1.30), 0.02));    // faster
  EXPECT_TRUE(ComparisonDecided(speedup(0.25, 0.26, 0.27), 0.02));    // slower
  EXPECT_TRUE(ComparisonDecided(speedup(0.985, 1.0, 1.015), 0.02));   // a tie
  EXPECT_FALSE(ComparisonDecided(speedup(0.97, 1.01, 1.05), 0.02));   // straddles 1, wider than the band
  EXPECT_FALSE(ComparisonDecided(speedup(0.99, 1.02, 1.025), 0.02));  // straddles 1 and leaves the band
  EXPECT_FALSE(ComparisonDecided(speedup(1.10, 1.20, 1.30), 0.0));    // no band: only the budget or noise stop
  EXPECT_FALSE(ComparisonDecided(Estimate{}, 0.02));                  // no samples yet
}

}  // namespace
}  // namespace ksmith
