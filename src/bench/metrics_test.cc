#include "bench/metrics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

double Binomial(int64_t n, int64_t k) {
  if (k < 0 || k > n) return 0;
  double result = 1;
  for (int64_t i = 1; i <= k; ++i) result = result * static_cast<double>(n - k + i) / static_cast<double>(i);
  return result;
}

TEST(PassAtK, MatchesTheClosedForm) {
  for (int64_t n = 1; n <= 12; ++n) {
    for (int64_t c = 0; c <= n; ++c) {
      for (int64_t k = 1; k <= n; ++k) {
        const double closed = 1.0 - Binomial(n - c, k) / Binomial(n, k);
        EXPECT_NEAR(PassAtK(n, c, k), closed, 1e-12) << n << " " << c << " " << k;
      }
    }
  }
}

TEST(PassAtK, HandComputedCases) {
  EXPECT_DOUBLE_EQ(PassAtK(10, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(PassAtK(10, 10, 1), 1.0);
  EXPECT_NEAR(PassAtK(10, 3, 1), 0.3, 1e-12);      // one draw: the share correct
  EXPECT_NEAR(PassAtK(4, 1, 2), 0.5, 1e-12);       // C(3,2)/C(4,2) = 3/6 fail
  EXPECT_DOUBLE_EQ(PassAtK(5, 3, 3), 1.0);         // only 2 can fail: any 3 hold a pass
  EXPECT_NEAR(PassAtK(200, 1, 100), 0.5, 1e-12);   // large n stays exact
}

TEST(ExpectedMaxAtK, EnumeratesLikeEverySubset) {
  // Values {0, 1, 2, 4}: the 6 pairs' maxima are 1, 2, 4, 2, 4, 4 (mean 17/6).
  EXPECT_NEAR(ExpectedMaxAtK({4, 0, 2, 1}, 2), 17.0 / 6.0, 1e-12);
  EXPECT_NEAR(ExpectedMaxAtK({4, 0, 2, 1}, 1), 7.0 / 4.0, 1e-12);  // the mean
  EXPECT_NEAR(ExpectedMaxAtK({4, 0, 2, 1}, 4), 4.0, 1e-12);        // the max
  // With correct = 1 and failing = 0 it is pass@k.
  EXPECT_NEAR(ExpectedMaxAtK({1, 0, 0, 1, 0}, 2), PassAtK(5, 2, 2), 1e-12);
}

SampleOutcome Correct(double speedup, double low, double roofline) {
  return {true, true, speedup, low, roofline, speedup + (speedup - low)};
}

TEST(TaskMetrics, RatesAndAtKFromSamples) {
  const TaskMetrics metrics = ComputeTaskMetrics({Correct(2.0, 1.8, 0.5), {true, false, 3.0, 2.9, 0.9},
                                                  {false, false, {}, {}, {}}, Correct(1.2, 1.1, 0.3)});
  EXPECT_EQ(metrics.samples, 4);
  EXPECT_DOUBLE_EQ(metrics.compile_rate, 0.75);
  EXPECT_DOUBLE_EQ(metrics.correct_rate, 0.5);
  ASSERT_EQ(metrics.pass_at_k.size(), 4u);
  EXPECT_NEAR(metrics.pass_at_k[0], 0.5, 1e-12);
  // The wrong sample's 3.0x counts 0: speedup@1 = (2 + 0 + 0 + 1.2) / 4.
  EXPECT_NEAR(metrics.speedup_at_k[0], 0.8, 1e-12);
  EXPECT_NEAR(metrics.speedup_at_k[3], 2.0, 1e-12);
  EXPECT_NEAR(metrics.efficiency_at_k[3], 0.5, 1e-12);
  EXPECT_EQ(metrics.best_speedup, 2.0);
  EXPECT_EQ(metrics.best_speedup_low, 1.8);
  EXPECT_NEAR(metrics.best_speedup_high.value_or(0), 2.2, 1e-12);
}

TEST(FastP, CountsOnlySpeedupsWhoseIntervalClearsP) {
  std::vector<TaskMetrics> tasks(4);
  tasks[0].correct_rate = 1;
  tasks[0].best_speedup = 1.5;
  tasks[0].best_speedup_low = 1.4;
  tasks[1].correct_rate = 1;
  tasks[1].best_speedup = 1.02;   // a tie: the interval contains 1
  tasks[1].best_speedup_low = 0.97;
  tasks[2].correct_rate = 1;
  tasks[2].best_speedup = 0.6;
  tasks[2].best_speedup_low = 0.55;
  tasks[3].correct_rate = 0;      // nothing correct
  EXPECT_DOUBLE_EQ(FastP(tasks, 0), 0.75);
  EXPECT_DOUBLE_EQ(FastP(tasks, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(FastP(tasks, 1), 0.25);
  EXPECT_DOUBLE_EQ(FastP(tasks, 1.5), 0.0);  // 1.4 does not clear 1.5
  EXPECT_DOUBLE_EQ(FastP({}, 1), 0.0);
}

TEST(GeomeanSpeedup, ValueAndABootstrapIntervalAroundIt) {
  std::vector<TaskMetrics> tasks(3);
  tasks[0].best_speedup = 2.0;
  tasks[1].best_speedup = 8.0;
  tasks[2].best_speedup = 0.5;
  const auto estimate = GeomeanSpeedup(tasks, 2000, 7);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_NEAR(estimate->value, 2.0, 1e-12);  // (2 * 8 * 0.5)^(1/3)
  EXPECT_EQ(estimate->tasks, 3);
  EXPECT_LE(estimate->low, estimate->value);
  EXPECT_GE(estimate->high, estimate->value);
  EXPECT_GE(estimate->low, 0.5);
  EXPECT_LE(estimate->high, 8.0);
  EXPECT_LT(estimate->low, estimate->high);
  EXPECT_FALSE(GeomeanSpeedup(std::vector<TaskMetrics>(2)).has_value());
}

TEST(GeomeanSpeedup, EachTasksOwnIntervalWidensTheSuitesEvenWithOneTask) {
  // relu alone: 1.01x [0.50, 1.36]. Resampling the tasks alone gave [1.01, 1.01].
  std::vector<TaskMetrics> one(1);
  one[0].best_speedup = 1.01;
  one[0].best_speedup_low = 0.50;
  one[0].best_speedup_high = 1.36;
  const auto alone = GeomeanSpeedup(one, 4000, 3);
  ASSERT_TRUE(alone.has_value());
  EXPECT_NEAR(alone->value, 1.01, 1e-12);
  EXPECT_NEAR(alone->low, 0.50, 0.05);   // one task: the suite's interval is that task's
  EXPECT_NEAR(alone->high, 1.36, 0.05);
  // With a tightly timed second task (vector_add 1.01x [1.00, 1.02]), still far from a point.
  std::vector<TaskMetrics> two = one;
  two.push_back(TaskMetrics{});
  two[1].best_speedup = 1.01;
  two[1].best_speedup_low = 1.00;
  two[1].best_speedup_high = 1.02;
  const auto both = GeomeanSpeedup(two, 4000, 3);
  ASSERT_TRUE(both.has_value());
  EXPECT_LT(both->low, 0.9);
  EXPECT_GT(both->high, 1.1);
  // Without intervals (a suite of untimed samples' medians only), the tasks' spread alone.
  std::vector<TaskMetrics> bare(2);
  bare[0].best_speedup = 1.01;
  bare[1].best_speedup = 1.01;
  const auto point = GeomeanSpeedup(bare, 4000, 3);
  ASSERT_TRUE(point.has_value());
  EXPECT_DOUBLE_EQ(point->low, point->high);
}

}  // namespace
}  // namespace ksmith
