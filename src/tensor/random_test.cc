// Counter-based random inputs: reproducible per (seed, stream, index), with the documented
// distributions.
#include "tensor/random.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "tensor/normal_sample.h"

namespace ksmith {
namespace {

constexpr size_t kSamples = 100'000;

const std::vector<Distribution> kAllDistributions = {Distribution::kNormal, Distribution::kUniform,
                                                     Distribution::kLarge, Distribution::kPositive,
                                                     Distribution::kTies};

std::vector<float> Fill(size_t count, Distribution distribution, uint64_t seed, uint64_t stream) {
  std::vector<float> data(count);
  FillRandom(data.data(), count, distribution, seed, stream);
  return data;
}

struct Moments {
  double mean = 0;
  double stddev = 0;
};

Moments MomentsOf(const std::vector<float>& data) {
  double sum = 0;
  for (float value : data) sum += value;
  const double mean = sum / static_cast<double>(data.size());
  double squares = 0;
  for (float value : data) squares += (value - mean) * (value - mean);
  return {mean, std::sqrt(squares / static_cast<double>(data.size() - 1))};
}

bool BitwiseEqual(const float* a, const float* b, size_t count) {
  return std::memcmp(a, b, count * sizeof(float)) == 0;
}

TEST(MixCounter, IsAFunctionOfItsThreeCounters) {
  EXPECT_EQ(MixCounter(1, 2, 3), MixCounter(1, 2, 3));
  EXPECT_NE(MixCounter(1, 2, 3), MixCounter(2, 2, 3));
  EXPECT_NE(MixCounter(1, 2, 3), MixCounter(1, 3, 3));
  EXPECT_NE(MixCounter(1, 2, 3), MixCounter(1, 2, 4));
}

TEST(MixCounter, GivesDistinctValuesForConsecutiveIndices) {
  std::set<uint64_t> values;
  for (uint64_t i = 0; i < 10'000; ++i) values.insert(MixCounter(42, 0, i));
  EXPECT_EQ(values.size(), 10'000u);
}

TEST(UniformOpen01, StaysStrictlyInsideZeroAndOne) {
  double sum = 0;
  for (uint64_t i = 0; i < kSamples; ++i) {
    const double u = UniformOpen01(7, 1, i);
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / kSamples, 0.5, 0.01);
}

TEST(DeriveSeed, IsDeterministicAndDiffersPerSalt) {
  EXPECT_EQ(DeriveSeed(123, 4), DeriveSeed(123, 4));
  std::set<uint64_t> seeds;
  for (uint64_t salt = 0; salt < 100; ++salt) seeds.insert(DeriveSeed(123, salt));
  EXPECT_EQ(seeds.size(), 100u);
  EXPECT_NE(DeriveSeed(123, 0), DeriveSeed(124, 0));
}

TEST(FillRandom, SameSeedAndStreamGiveTheSameValues) {
  for (Distribution distribution : kAllDistributions) {
    const auto first = Fill(1000, distribution, 99, 5);
    const auto second = Fill(1000, distribution, 99, 5);
    EXPECT_TRUE(BitwiseEqual(first.data(), second.data(), first.size())) << DistributionName(distribution);
  }
}

TEST(FillRandom, DifferentSeedsOrStreamsGiveDifferentValues) {
  const auto base = Fill(1000, Distribution::kNormal, 1, 0);
  const auto other_seed = Fill(1000, Distribution::kNormal, 2, 0);
  const auto other_stream = Fill(1000, Distribution::kNormal, 1, 1);
  size_t same_seed_collisions = 0;
  size_t same_stream_collisions = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    same_seed_collisions += base[i] == other_seed[i];
    same_stream_collisions += base[i] == other_stream[i];
  }
  EXPECT_LT(same_seed_collisions, 5u);
  EXPECT_LT(same_stream_collisions, 5u);
}

TEST(FillRandom, ValueAtAnIndexDoesNotDependOnTheLengthFilled) {
  // Value i depends only on (seed, stream, i): a short fill is a prefix of a long one, for
  // odd lengths and for lengths large enough to be filled in parallel.
  const size_t long_count = (size_t{1} << 18) + 1001;
  for (Distribution distribution : kAllDistributions) {
    const auto full = Fill(long_count, distribution, 2024, 3);
    for (size_t count : {size_t{1}, size_t{2}, size_t{7}, size_t{1000}, size_t{1} << 18,
                         (size_t{1} << 18) + 3}) {
      const auto prefix = Fill(count, distribution, 2024, 3);
      EXPECT_TRUE(BitwiseEqual(prefix.data(), full.data(), count))
          << DistributionName(distribution) << ", length " << count;
    }
  }
}

TEST(FillRandom, NormalHasMeanZeroAndStandardDeviationOne) {
  const auto data = Fill(kSamples, Distribution::kNormal, 11, 0);
  const Moments moments = MomentsOf(data);
  EXPECT_NEAR(moments.mean, 0.0, 0.02);
  EXPECT_NEAR(moments.stddev, 1.0, 0.02);
  // About 0.27% of a normal sample lies beyond 3 sigma.
  const auto beyond = std::count_if(data.begin(), data.end(), [](float v) { return std::fabs(v) > 3; });
  EXPECT_GT(beyond, 100);
  EXPECT_LT(beyond, 500);
}

TEST(FillRandom, NormalValuesAreFiniteAndNeighboursUncorrelated) {
  const auto data = Fill(kSamples, Distribution::kNormal, 12, 0);
  double product_sum = 0;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    ASSERT_TRUE(std::isfinite(data[i]));
    product_sum += static_cast<double>(data[i]) * data[i + 1];
  }
  EXPECT_NEAR(product_sum / static_cast<double>(data.size() - 1), 0.0, 0.02);
}

TEST(NormalSample, LogIsWithinAFewUnitsOfTheMathLibrary) {
  for (uint32_t k : {1u, 2u, 3u, 1000u, 11585u, 11586u, 65535u, 1u << 20, (1u << 24) - 1, 1u << 24}) {
    const double exact = std::log(static_cast<double>(k) * 0x1p-24);
    EXPECT_NEAR(normal_sample::LogOfScaledInteger(k), exact, 3e-7 * std::max(1.0, std::fabs(exact))) << k;
  }
  for (uint64_t i = 0; i < 100'000; ++i) {
    const uint32_t k = static_cast<uint32_t>(MixCounter(5, 5, i) >> 40) + 1;
    const double exact = std::log(static_cast<double>(k) * 0x1p-24);
    ASSERT_NEAR(normal_sample::LogOfScaledInteger(k), exact, 3e-7 * std::max(1.0, std::fabs(exact))) << k;
  }
}

TEST(NormalSample, IsTheBoxMullerTransformOfItsBits) {
  // The same transform in double with the math library: radius from the high 24 bits, the angle
  // (a quadrant and an offset in (-pi/4, pi/4)) from the next 24.
  for (uint64_t i = 0; i < 100'000; ++i) {
    const uint64_t bits = MixCounter(9, 1, i);
    const double u1 = static_cast<double>((bits >> 40) + 1) * 0x1p-24;
    const uint64_t angle_bits = (bits >> 16) & 0xffffff;
    const double phi = (static_cast<double>(angle_bits & 0x3fffff) + 0.5) * 0x1p-22 - 0.5;
    const double angle = (static_cast<double>(angle_bits >> 22) + phi) * std::acos(0.0);
    const double expected = std::sqrt(-2 * std::log(u1)) * std::cos(angle);
    ASSERT_NEAR(normal_sample::StandardNormalFromBits(bits), expected, 2e-6) << i;
  }
}

TEST(FillRandom, NormalIsTheSharedSampleOfEachIndexHashBitForBit) {
  // FillRandom's loop is built for AVX2 and FMA where the CPU has them; this test's call is not.
  // The GPU computes the same function (tensor/normal_sample.h).
  const auto data = Fill(10'007, Distribution::kNormal, 77, 3);
  for (size_t i = 0; i < data.size(); ++i) {
    const float expected = normal_sample::StandardNormalFromBits(MixCounter(77, 3, i));
    ASSERT_EQ(std::bit_cast<uint32_t>(data[i]), std::bit_cast<uint32_t>(expected)) << i;
  }
}

TEST(FillRandom, NormalFollowsTheNormalDistributionFunction) {
  auto data = Fill(kSamples, Distribution::kNormal, 21, 4);
  std::sort(data.begin(), data.end());
  double largest_gap = 0;  // the Kolmogorov-Smirnov statistic
  for (size_t i = 0; i < data.size(); ++i) {
    const double cdf = 0.5 * std::erfc(-data[i] / std::sqrt(2.0));
    const double below = static_cast<double>(i) / kSamples;
    const double above = static_cast<double>(i + 1) / kSamples;
    largest_gap = std::max({largest_gap, std::fabs(cdf - below), std::fabs(cdf - above)});
  }
  // At 1e5 samples, 0.0052 is the 1% critical value.
  EXPECT_LT(largest_gap, 0.0052);
  EXPECT_LE(std::max(-data.front(), data.back()), 5.78f);  // the 24-bit radius's reach
}

TEST(FillRandom, LargeHasStandardDeviationAboutOneThousand) {
  const Moments moments = MomentsOf(Fill(kSamples, Distribution::kLarge, 13, 0));
  EXPECT_NEAR(moments.mean, 0.0, 20.0);
  EXPECT_NEAR(moments.stddev, 1000.0, 20.0);
}

TEST(FillRandom, TiesAreIntegersFromMinusFourToFourAndAllAppear) {
  const auto data = Fill(kSamples, Distribution::kTies, 14, 0);
  std::map<int, size_t> counts;
  for (float value : data) {
    ASSERT_EQ(value, std::round(value));
    ASSERT_GE(value, -4.0f);
    ASSERT_LE(value, 4.0f);
    ++counts[static_cast<int>(value)];
  }
  ASSERT_EQ(counts.size(), 9u);
  for (const auto& [value, count] : counts) {
    EXPECT_NEAR(static_cast<double>(count) / kSamples, 1.0 / 9.0, 0.01) << "value " << value;
  }
}

TEST(FillRandom, UniformStaysInsideMinusOneAndOne) {
  const auto data = Fill(kSamples, Distribution::kUniform, 15, 0);
  const auto [low, high] = std::minmax_element(data.begin(), data.end());
  EXPECT_GT(*low, -1.0f);
  EXPECT_LT(*high, 1.0f);
  EXPECT_LT(*low, -0.99f);
  EXPECT_GT(*high, 0.99f);
  const Moments moments = MomentsOf(data);
  EXPECT_NEAR(moments.mean, 0.0, 0.01);
  EXPECT_NEAR(moments.stddev, 1.0 / std::sqrt(3.0), 0.01);
}

TEST(FillRandom, PositiveStaysInsideZeroAndOne) {
  const auto data = Fill(kSamples, Distribution::kPositive, 16, 0);
  for (float value : data) {
    ASSERT_GE(value, 0.0f);
    ASSERT_LE(value, 1.0f);
  }
  EXPECT_NEAR(MomentsOf(data).mean, 0.5, 0.01);
}

TEST(ParseDistribution, RoundTripsEveryDistributionName) {
  for (Distribution distribution : kAllDistributions) {
    auto parsed = ParseDistribution(DistributionName(distribution));
    ASSERT_TRUE(parsed.ok()) << DistributionName(distribution);
    EXPECT_EQ(*parsed, distribution);
  }
}

TEST(ParseDistribution, UnknownNameIsAParseErrorListingTheKnownOnes) {
  auto parsed = ParseDistribution("gaussian");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().kind, ErrorKind::kParse);
  EXPECT_NE(parsed.error().message.find("'gaussian'"), std::string::npos);
  EXPECT_NE(parsed.error().message.find("normal"), std::string::npos);
}

TEST(FillInput, TheDefaultDrawIsTheCasesDistribution) {
  std::vector<float> drawn(500);
  FillInput(drawn.data(), drawn.size(), InputDraw{}, Distribution::kLarge, 7, 3);
  const auto expected = Fill(500, Distribution::kLarge, 7, 3);
  EXPECT_TRUE(BitwiseEqual(drawn.data(), expected.data(), drawn.size()));
}

TEST(FillInput, AnInputsOwnDistributionScaleOffsetAndDomainApply) {
  InputDraw draw;
  draw.own = Distribution::kUniform;
  draw.scale = 0.5;
  draw.offset = 2.0;
  std::vector<float> drawn(2000);
  // The case asks for "large"; the input keeps its own uniform draw, moved to [1.5, 2.5].
  FillInput(drawn.data(), drawn.size(), draw, Distribution::kLarge, 11, 4);
  const auto uniform = Fill(2000, Distribution::kUniform, 11, 4);
  for (size_t i = 0; i < drawn.size(); ++i) {
    ASSERT_FLOAT_EQ(drawn[i], 2.0f + 0.5f * uniform[i]) << i;
    ASSERT_GE(drawn[i], 1.5f);
    ASSERT_LE(drawn[i], 2.5f);
  }
  InputDraw nonnegative;
  nonnegative.nonnegative = true;
  FillInput(drawn.data(), drawn.size(), nonnegative, Distribution::kNormal, 11, 4);
  const auto normal = Fill(2000, Distribution::kNormal, 11, 4);
  for (size_t i = 0; i < drawn.size(); ++i) ASSERT_EQ(drawn[i], std::fabs(normal[i])) << i;
}

TEST(FillInput, AnIntegerDrawGivesEveryValueOfItsRangeAndNoOther) {
  InputDraw draw;
  draw.integers = IntegerRange{-2, 5};
  draw.own = Distribution::kLarge;  // ignored: integers come from their range
  std::vector<float> drawn(7000);
  FillInput(drawn.data(), drawn.size(), draw, Distribution::kNormal, 13, 2);
  std::vector<int> counts(7, 0);
  for (float value : drawn) {
    ASSERT_EQ(value, std::round(value));
    ASSERT_GE(value, -2.0f);
    ASSERT_LT(value, 5.0f);
    ++counts[static_cast<size_t>(value + 2)];
  }
  for (int count : counts) EXPECT_GT(count, 800) << "a value of the range is (nearly) never drawn";
  // Value i depends only on (seed, stream, i), as for every draw: a slice agrees with the whole.
  std::vector<float> again(7000);
  FillInput(again.data(), again.size(), draw, Distribution::kUniform, 13, 2);
  EXPECT_EQ(drawn, again);
}

}  // namespace
}  // namespace ksmith
