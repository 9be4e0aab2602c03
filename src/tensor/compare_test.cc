// Comparing kernel outputs with a double-precision reference: exact answers pass, honest fp32
// rounding passes, and zeros, constants, unwritten elements, NaNs and half precision fail.
#include "tensor/compare.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tensor/random.h"

namespace ksmith {
namespace {

constexpr double kFp32Epsilon = 0x1p-24;

std::vector<double> NormalReference(size_t count, uint64_t seed) {
  std::vector<float> values(count);
  FillRandom(values.data(), count, Distribution::kNormal, seed, 0);
  return std::vector<double>(values.begin(), values.end());
}

std::vector<float> ToFloat(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

Comparison Compare(const std::vector<float>& got, const std::vector<double>& ref,
                   double accumulation = 1.0) {
  return CompareWithReference(got.data(), ref.data(), ref.size(), Tolerance{}, kFp32Epsilon,
                              accumulation);
}

float Poison() { return std::bit_cast<float>(kPoisonBits); }

// Rounds to `bits` significant bits (11 for fp16, 24 for fp32), round to nearest.
double RoundToSignificantBits(double value, int bits) {
  if (value == 0 || !std::isfinite(value)) return value;
  int exponent = 0;
  const double mantissa = std::frexp(value, &exponent);
  return std::ldexp(std::nearbyint(std::ldexp(mantissa, bits)), exponent - bits);
}

TEST(CompareWithReference, ExactMatchPasses) {
  const auto ref = NormalReference(1000, 1);
  const Comparison result = Compare(ToFloat(ref), ref);
  EXPECT_TRUE(result.passed) << result.Describe();
  EXPECT_EQ(result.count, 1000u);
  EXPECT_EQ(result.norm_error, 0.0);
  EXPECT_EQ(result.over_bound, 0u);
  EXPECT_NE(result.Describe().find("matches"), std::string::npos) << result.Describe();
}

TEST(CompareWithReference, RejectsAllZeroOutput) {
  const auto ref = NormalReference(1000, 2);
  const Comparison result = Compare(std::vector<float>(1000, 0.0f), ref);
  EXPECT_FALSE(result.passed);
  EXPECT_NEAR(result.norm_error, 1.0, 1e-12);
  EXPECT_GT(result.over_bound, 900u);
}

TEST(CompareWithReference, RejectsConstantOutputEvenAtTheMean) {
  // Softmax-like reference: positive values summing to one.
  std::vector<double> ref(256);
  double sum = 0;
  for (size_t i = 0; i < ref.size(); ++i) sum += ref[i] = std::exp(std::sin(0.1 * i));
  for (double& value : ref) value /= sum;
  const Comparison result = Compare(std::vector<float>(ref.size(), 1.0f / ref.size()), ref);
  EXPECT_FALSE(result.passed) << result.Describe();
  EXPECT_GT(result.norm_error, result.norm_bound);
}

TEST(CompareWithReference, CountsPoisonBitsAsUnwritten) {
  const auto ref = NormalReference(100, 3);
  auto got = ToFloat(ref);
  got[10] = Poison();
  got[99] = Poison();
  const Comparison result = Compare(got, ref);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.unwritten, 2u);
  EXPECT_EQ(result.nonfinite, 0u);
  EXPECT_NE(result.Describe().find("2 of 100 output elements were never written"), std::string::npos)
      << result.Describe();
}

TEST(CompareWithReference, CountsPoisonAsUnwrittenEvenWhereTheReferenceIsNaN) {
  std::vector<double> ref = {1.0, std::numeric_limits<double>::quiet_NaN()};
  const Comparison result = Compare({1.0f, Poison()}, ref);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.unwritten, 1u);
}

TEST(CompareWithReference, RejectsNaNWhereTheReferenceIsFinite) {
  const auto ref = NormalReference(100, 4);
  auto got = ToFloat(ref);
  got[5] = std::numeric_limits<float>::quiet_NaN();
  const Comparison result = Compare(got, ref);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.nonfinite, 1u);
  EXPECT_EQ(result.unwritten, 0u);
  EXPECT_EQ(result.worst_index, 5u);
}

TEST(CompareWithReference, RejectsInfinityWhereTheReferenceIsFinite) {
  const auto ref = NormalReference(100, 5);
  auto got = ToFloat(ref);
  got[7] = std::numeric_limits<float>::infinity();
  const Comparison result = Compare(got, ref);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.nonfinite, 1u);
}

TEST(CompareWithReference, AcceptsMatchingNonFiniteReferenceValues) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> ref = {1.0, std::numeric_limits<double>::quiet_NaN(), inf, -inf, 2.0};
  const std::vector<float> got = {1.0f, std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), 2.0f};
  const Comparison result = Compare(got, ref);
  EXPECT_TRUE(result.passed) << result.Describe();
}

TEST(CompareWithReference, RejectsInfinityOfTheWrongSign) {
  const double inf = std::numeric_limits<double>::infinity();
  const Comparison result = Compare({1.0f, -std::numeric_limits<float>::infinity()}, {1.0, inf});
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.nonfinite, 1u);
}

TEST(CompareWithReference, AcceptsFp32RoundingOfTheExactResult) {
  // A reference that is not representable in fp32: every element carries rounding error.
  std::vector<double> ref(10'000);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::sin(1.0 + static_cast<double>(i)) * 3.0;
  const Comparison result = Compare(ToFloat(ref), ref);
  EXPECT_TRUE(result.passed) << result.Describe();
  EXPECT_GT(result.norm_error, 0.0);
}

// Dot products of length k: the reference in double, and two kernels' answers.
struct Accumulation {
  std::vector<double> ref;
  std::vector<float> fp32_sum;  // an honest fp32 kernel: sequential fp32 accumulation
  std::vector<float> fp16_out;  // the exact answer rounded to half precision
};

Accumulation LongDotProducts(size_t outputs, size_t k) {
  std::vector<float> a(outputs * k), b(k);
  FillRandom(a.data(), a.size(), Distribution::kNormal, 77, 0);
  FillRandom(b.data(), b.size(), Distribution::kNormal, 77, 1);
  Accumulation result;
  for (size_t row = 0; row < outputs; ++row) {
    double exact = 0;
    float sum = 0;
    for (size_t p = 0; p < k; ++p) {
      exact += static_cast<double>(a[row * k + p]) * b[p];
      sum += a[row * k + p] * b[p];
    }
    result.ref.push_back(exact);
    result.fp32_sum.push_back(sum);
    result.fp16_out.push_back(static_cast<float>(RoundToSignificantBits(exact, 11)));
  }
  return result;
}

TEST(CompareWithReference, AcceptsAnHonestFp32AccumulationOfALongDotProduct) {
  const auto data = LongDotProducts(512, 4096);
  const Comparison result = Compare(data.fp32_sum, data.ref, 4096);
  EXPECT_TRUE(result.passed) << result.Describe();
  EXPECT_GT(result.norm_error, 0.0);
}

TEST(CompareWithReference, RejectsAHalfPrecisionResultOfALongAccumulation) {
  const auto data = LongDotProducts(512, 4096);
  const Comparison result = Compare(data.fp16_out, data.ref, 4096);
  EXPECT_FALSE(result.passed) << result.Describe();
  EXPECT_GT(result.norm_error, result.norm_bound);
}

TEST(CompareWithReference, RejectsASingleWrongElementOfALargeOutputViaTheElementwiseBound) {
  const auto ref = NormalReference(1'000'000, 6);
  auto got = ToFloat(ref);
  // Pick an element of ordinary size; an error of 0.005 there is small next to ||ref|| = 1000
  // (norm-wise 5e-6, inside the norm bound) but far beyond the elementwise bound (~2e-4).
  size_t index = 0;
  while (std::fabs(ref[index]) < 0.5 || std::fabs(ref[index]) > 1.5) ++index;
  got[index] += 0.005f;
  const Comparison result = Compare(got, ref);
  EXPECT_FALSE(result.passed);
  EXPECT_EQ(result.over_bound, 1u);
  EXPECT_LE(result.norm_error, result.norm_bound);
  EXPECT_EQ(result.worst_index, index);
  EXPECT_NEAR(result.worst_abs_error, 0.005, 1e-6);
  EXPECT_NE(result.Describe().find("1 of 1000000 elements exceed the elementwise bound"),
            std::string::npos)
      << result.Describe();
}

TEST(CompareWithReference, BoundsGrowWithTheAccumulationLength) {
  // Given n = 10000: a random-walk term (sqrt n) and a drift term (n) for same-signed sums.
  const std::vector<double> ref = {1.0};
  const std::vector<float> got = {1.0f};
  const Comparison short_sum = Compare(got, ref, 1);
  const Comparison long_sum = Compare(got, ref, 10'000);
  // One element: the small-output allowance (the elementwise bound) is added too.
  EXPECT_NEAR(long_sum.norm_bound - Tolerance{}.norm - long_sum.elem_bound,
              kFp32Epsilon * (4 * 100 + 10'000 / 4.0), 1e-15);
  EXPECT_NEAR(long_sum.elem_bound - Tolerance{}.elem, kFp32Epsilon * (16 * 100 + 10'000), 1e-15);
  EXPECT_LT(short_sum.norm_bound, long_sum.norm_bound);
}

TEST(CompareWithReference, HalfPrecisionInputsFailAtModerateAccumulationLengths) {
  // fp16 rounding costs about 3e-4 relative; the bound at n = 2049 must stay well below it.
  const std::vector<float> got(10'000, 1.0f);
  const std::vector<double> ref(10'000, 1.0);
  const Comparison at_2049 = Compare(got, ref, 2049);
  EXPECT_LT(at_2049.norm_bound, 1e-4);
}

TEST(CompareWithReference, MagnitudeFloorAcceptsRoundingNoiseWhereTheAnswerUnderflows) {
  // Given gelu(-6000) = -0 in double and -5.9e-18 from an honest fp32 kernel, with inputs of
  // magnitude 6000: noise far below eps * 6000 passes, a real value does not.
  const std::vector<double> ref = {-0.0};
  const float noise[] = {-5.9e-18f};
  const float wrong[] = {-1.0f};
  const double floor = kFp32Epsilon * 6000.0;
  EXPECT_TRUE(CompareWithReference(noise, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1, floor).passed);
  EXPECT_FALSE(CompareWithReference(wrong, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1, floor).passed);
}

// GELU's erf form as an honest fp32 kernel writes it (and PyTorch's CPU kernel computes it).
float NaiveGelu(float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }
double ExactGelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

TEST(CompareWithReference, NoiseAcceptsTheCancellingGeluFarLeftOfZeroOnOneElement) {
  // Given one input at x = -4.4: 1 + erf(x / sqrt(2)) is 1e-5, so the fp32 formula is off by
  // about 2e-3 relative; alone in the output, that exceeds the relative bounds.
  const float x = -4.4f;
  const std::vector<double> ref = {ExactGelu(x)};
  const float honest[] = {NaiveGelu(x)};
  const float wrong[] = {static_cast<float>(ref[0] * 1.5)};
  const double floor = kFp32Epsilon * std::fabs(x);  // the inputs' RMS
  Tolerance with_noise;
  with_noise.noise = 4;
  EXPECT_FALSE(CompareWithReference(honest, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1, floor).passed);
  EXPECT_TRUE(CompareWithReference(honest, ref.data(), 1, with_noise, kFp32Epsilon, 1, floor).passed);
  EXPECT_FALSE(CompareWithReference(wrong, ref.data(), 1, with_noise, kFp32Epsilon, 1, floor).passed);
}

TEST(CompareWithReference, NoiseAcceptsExpMinusOneNearZeroOnOneElement) {
  // Given x = -0.00026, exp(x) - 1 in fp32 (PyTorch's ELU) is off by about eps: 2e-4 relative.
  const float x = -0.00026f;
  const std::vector<double> ref = {std::expm1(static_cast<double>(x))};
  const float honest[] = {std::exp(x) - 1.0f};
  const double floor = kFp32Epsilon * std::fabs(x);
  Tolerance with_noise;
  with_noise.noise = 4;
  EXPECT_FALSE(CompareWithReference(honest, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1, floor).passed);
  EXPECT_TRUE(CompareWithReference(honest, ref.data(), 1, with_noise, kFp32Epsilon, 1, floor).passed);
}

TEST(CompareWithReference, NoiseStillRejectsHalfPrecisionGelu) {
  // Given 4096 normal inputs, GELU rounded to fp16 (2.4e-4 relative) fails with the allowance
  // gelu declares, and the honest fp32 formula passes.
  std::vector<float> x(4096);
  FillRandom(x.data(), x.size(), Distribution::kNormal, 7, 0);
  std::vector<double> ref(x.size());
  std::vector<float> honest(x.size()), half(x.size());
  double square_sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    ref[i] = ExactGelu(x[i]);
    honest[i] = NaiveGelu(x[i]);
    half[i] = static_cast<float>(RoundToSignificantBits(ref[i], 11));
    square_sum += static_cast<double>(x[i]) * x[i];
  }
  const double floor = kFp32Epsilon * std::sqrt(square_sum / static_cast<double>(x.size()));
  Tolerance with_noise;
  with_noise.noise = 4;
  EXPECT_TRUE(CompareWithReference(honest.data(), ref.data(), ref.size(), with_noise, kFp32Epsilon, 1, floor).passed);
  EXPECT_FALSE(CompareWithReference(half.data(), ref.data(), ref.size(), with_noise, kFp32Epsilon, 1, floor).passed);
}

TEST(CompareWithReference, MagnitudeAllowsTheRoundingOfASumThatCancels) {
  // Given one row summing 1000 terms of size ~1000 to about 47 (the terms' absolute sum is 8e5):
  // a plain fp32 sum can be off by 0.05, which is 1e-3 relative to 47.
  const std::vector<double> ref = {47.0};
  const std::vector<double> magnitude = {8.0e5};
  const float honest[] = {47.05f};
  const float wrong[] = {48.0f};
  EXPECT_FALSE(CompareWithReference(honest, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1000).passed);
  EXPECT_TRUE(CompareWithReference(honest, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1000, 0,
                                   magnitude.data()).passed);
  EXPECT_FALSE(CompareWithReference(wrong, ref.data(), 1, Tolerance{}, kFp32Epsilon, 1000, 0,
                                    magnitude.data()).passed);
}

TEST(CompareWithReference, MagnitudeDoesNotLetHalfPrecisionThroughOnOrdinarySums) {
  // Given 256 row sums of 1000 N(0,1) terms, whose magnitudes are about 25 times their values,
  // an error of 2.4e-4 relative (fp16 inputs) still fails.
  std::vector<double> ref(256), magnitude(256);
  std::vector<float> got(256);
  for (size_t i = 0; i < ref.size(); ++i) {
    ref[i] = (i % 2 ? 1.0 : -1.0) * (20.0 + static_cast<double>(i % 17));
    magnitude[i] = 800.0;
    got[i] = static_cast<float>(ref[i] * (1 + 2.4e-4));
  }
  EXPECT_FALSE(CompareWithReference(got.data(), ref.data(), got.size(), Tolerance{}, kFp32Epsilon,
                                    1000, 0, magnitude.data()).passed);
}

TEST(CompareWithReference, ZeroReferenceAcceptsOnlyZeros) {
  const std::vector<double> ref(64, 0.0);
  std::vector<float> got(64, 0.0f);
  got[3] = -0.0f;
  EXPECT_TRUE(Compare(got, ref).passed);
  got[4] = 1e-30f;
  EXPECT_FALSE(Compare(got, ref).passed);
}

TEST(CompareWithReference, DescribesTheWorstElement) {
  const std::vector<double> ref = {1.0, 2.0, 3.0, 4.0};
  const Comparison result = Compare({1.0f, 2.0f, 30.0f, 4.0f}, ref);
  ASSERT_FALSE(result.passed);
  EXPECT_EQ(result.worst_index, 2u);
  EXPECT_EQ(result.worst_got, 30.0);
  EXPECT_EQ(result.worst_ref, 3.0);
  EXPECT_NE(result.Describe().find("worst element [2]: got 30, expected 3"), std::string::npos)
      << result.Describe();
}

TEST(CompareWithReferenceOnCores, AgreesWithOneThreadOnEveryCountAndFindsTheSameWorstElement) {
  // 3.5 blocks of 4 Mi elements: the sums are taken per block, so the norm may differ in its last
  // bits; every count and the worst element are the same.
  const size_t count = (size_t{1} << 22) * 7 / 2;
  const auto ref = NormalReference(count, 17);
  auto got = ToFloat(ref);
  got[(size_t{1} << 22) * 3 + 5] += 0.5f;  // in the last block
  got[(size_t{1} << 22) + 9] += 0.75f;     // the worst, in the second block
  for (const bool with_poison : {false, true}) {
    // An unwritten element in the first block is worse than any finite error.
    got[100] = with_poison ? Poison() : static_cast<float>(ref[100]);
    const Comparison one = CompareWithReference(got.data(), ref.data(), count, Tolerance{}, kFp32Epsilon, 1.0);
    const Comparison spread = CompareWithReferenceOnCores(got.data(), ref.data(), count, Tolerance{}, kFp32Epsilon, 1.0);
    EXPECT_FALSE(spread.passed);
    EXPECT_EQ(spread.over_bound, one.over_bound);
    EXPECT_EQ(spread.unwritten, one.unwritten);
    EXPECT_EQ(spread.nonfinite, one.nonfinite);
    EXPECT_EQ(spread.worst_index, one.worst_index) << with_poison;
    EXPECT_EQ(spread.worst_index, with_poison ? 100u : (size_t{1} << 22) + 9);
    EXPECT_NEAR(spread.norm_error, one.norm_error, 1e-12 * one.norm_error);
    EXPECT_NEAR(spread.ref_rms, one.ref_rms, 1e-12 * one.ref_rms);
  }
  // An honest answer passes both ways, and below one block the two are the same bits.
  const auto honest = ToFloat(ref);
  EXPECT_TRUE(CompareWithReferenceOnCores(honest.data(), ref.data(), count, Tolerance{}, kFp32Epsilon, 1.0).passed);
  const Comparison small_one = CompareWithReference(got.data(), ref.data(), 1000, Tolerance{}, kFp32Epsilon, 1.0);
  const Comparison small_spread = CompareWithReferenceOnCores(got.data(), ref.data(), 1000, Tolerance{}, kFp32Epsilon, 1.0);
  EXPECT_EQ(small_spread.norm_error, small_one.norm_error);
  EXPECT_EQ(small_spread.worst_index, small_one.worst_index);
}

}  // namespace
}  // namespace ksmith
