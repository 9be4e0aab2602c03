// Element types: names, aliases, sizes, unit roundoff and the C type a kernel sees.
#include "tensor/dtype.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                      DType::kInt32};

TEST(ParseDType, AcceptsShortNames) {
  EXPECT_EQ(ParseDType("fp32").value(), DType::kFloat32);
  EXPECT_EQ(ParseDType("fp16").value(), DType::kFloat16);
  EXPECT_EQ(ParseDType("bf16").value(), DType::kBFloat16);
  EXPECT_EQ(ParseDType("int32").value(), DType::kInt32);
}

TEST(ParseDType, AcceptsPyTorchStyleLongNames) {
  EXPECT_EQ(ParseDType("float32").value(), DType::kFloat32);
  EXPECT_EQ(ParseDType("float16").value(), DType::kFloat16);
  EXPECT_EQ(ParseDType("bfloat16").value(), DType::kBFloat16);
}

TEST(ParseDType, UnknownNameIsAParseErrorListingTheKnownOnes) {
  auto parsed = ParseDType("fp64");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().kind, ErrorKind::kParse);
  const std::string& message = parsed.error().message;
  EXPECT_NE(message.find("'fp64'"), std::string::npos) << message;
  for (const char* known : {"fp32", "fp16", "bf16", "int32"}) {
    EXPECT_NE(message.find(known), std::string::npos) << message;
  }
}

TEST(ParseDType, IsCaseSensitiveAndRejectsPadding) {
  EXPECT_FALSE(ParseDType("FP32").ok());
  EXPECT_FALSE(ParseDType(" fp32").ok());
  EXPECT_FALSE(ParseDType("").ok());
}

TEST(DTypeName, RoundTripsThroughParseDType) {
  for (DType dtype : kAllTypes) {
    auto parsed = ParseDType(DTypeName(dtype));
    ASSERT_TRUE(parsed.ok()) << DTypeName(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
}

TEST(DTypeName, UsesTheShortNames) {
  EXPECT_STREQ(DTypeName(DType::kFloat32), "fp32");
  EXPECT_STREQ(DTypeName(DType::kFloat16), "fp16");
  EXPECT_STREQ(DTypeName(DType::kBFloat16), "bf16");
  EXPECT_STREQ(DTypeName(DType::kInt32), "int32");
}

TEST(DTypeBytes, GivesTheStorageSize) {
  EXPECT_EQ(DTypeBytes(DType::kFloat32), sizeof(float));
  EXPECT_EQ(DTypeBytes(DType::kFloat16), 2u);
  EXPECT_EQ(DTypeBytes(DType::kBFloat16), 2u);
  EXPECT_EQ(DTypeBytes(DType::kInt32), 4u);
}

TEST(DTypeEpsilon, IsTheUnitRoundoff) {
  EXPECT_EQ(DTypeEpsilon(DType::kFloat32), 0x1p-24);
  // Unit roundoff is half the machine epsilon of the type.
  EXPECT_EQ(DTypeEpsilon(DType::kFloat32), std::numeric_limits<float>::epsilon() / 2);
  EXPECT_EQ(DTypeEpsilon(DType::kFloat16), 0x1p-11);
  EXPECT_EQ(DTypeEpsilon(DType::kBFloat16), 0x1p-8);
  EXPECT_EQ(DTypeEpsilon(DType::kInt32), 0.0);
}

TEST(DTypeEpsilon, OrdersTheFloatingTypesByPrecision) {
  EXPECT_LT(DTypeEpsilon(DType::kFloat32), DTypeEpsilon(DType::kFloat16));
  EXPECT_LT(DTypeEpsilon(DType::kFloat16), DTypeEpsilon(DType::kBFloat16));
}

TEST(DTypeCType, NamesTheCTypeOfEachElementOnEachBackend) {
  EXPECT_STREQ(DTypeCType(DType::kFloat32), "float");
  EXPECT_STREQ(DTypeCType(DType::kFloat16), "_Float16");
  EXPECT_STREQ(DTypeCType(DType::kBFloat16), "uint16_t");
  EXPECT_STREQ(DTypeCType(DType::kInt32), "int32_t");
  EXPECT_STREQ(DTypeCudaType(DType::kFloat16), "__half");
  EXPECT_STREQ(DTypeCudaType(DType::kBFloat16), "__nv_bfloat16");
  EXPECT_STREQ(DTypeCudaType(DType::kFloat32), "float");
}

// Values checked against CUDA's __float2half_rn / __float2bfloat16_rn by hand: exact values,
// ties to even, overflow, subnormals.
TEST(HalfConversions, RoundToNearestEven) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(1e6f), 0x7c00) << "overflow is infinity";
  EXPECT_EQ(FloatToHalfBits(1.0f + 0x1p-11f), 0x3c00) << "a tie goes to the even neighbour";
  EXPECT_EQ(FloatToHalfBits(1.0f + 3 * 0x1p-11f), 0x3c02) << "a tie goes to the even neighbour";
  EXPECT_EQ(FloatToHalfBits(0x1p-24f), 0x0001) << "the smallest subnormal";
  EXPECT_FLOAT_EQ(HalfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(FloatToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16Bits(std::bit_cast<float>(0x3f808000u)), 0x3f80) << "tie to even (down)";
  EXPECT_EQ(FloatToBf16Bits(std::bit_cast<float>(0x3f818000u)), 0x3f82) << "tie to even (up)";
  EXPECT_EQ(FloatToBf16Bits(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_EQ(FloatToBf16Bits(INFINITY), 0x7f80);
  EXPECT_TRUE(std::isnan(Bf16BitsToFloat(FloatToBf16Bits(NAN))));
  EXPECT_EQ(Bf16BitsToFloat(0xc040), -3.0f);
}

TEST(HalfConversions, EveryHalfValueRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float wide = HalfBitsToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(wide)) continue;
    ASSERT_EQ(FloatToHalfBits(wide), bits);
    ASSERT_EQ(FloatToBf16Bits(Bf16BitsToFloat(static_cast<uint16_t>(bits))), bits);
  }
}

TEST(DTypePoison, IsANaNInEveryFloatingType) {
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const uint32_t pattern = DTypePoisonPattern(dtype);
    std::vector<float> wide(2);
    LoadAsFloat(dtype, &pattern, 4 / DTypeBytes(dtype), wide.data());
    EXPECT_TRUE(std::isnan(wide[0])) << DTypeName(dtype);
  }
}

TEST(DTypeStorage, StoresLoadsAndTakesAbsoluteValues) {
  const std::vector<float> values = {1.5f, -2.25f, 0.0f, -0.0f, 1000.0f};
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    std::vector<unsigned char> bytes(values.size() * DTypeBytes(dtype));
    StoreAs(dtype, values.data(), values.size(), bytes.data());
    MakeAbsolute(dtype, bytes.data(), values.size());
    std::vector<float> back(values.size());
    LoadAsFloat(dtype, bytes.data(), values.size(), back.data());
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(back[i], std::fabs(values[i])) << DTypeName(dtype);
  }
  const std::vector<int32_t> indices = {0, 7, -3};
  std::vector<float> wide(3);
  LoadAsFloat(DType::kInt32, indices.data(), 3, wide.data());
  EXPECT_EQ(wide, (std::vector<float>{0.0f, 7.0f, -3.0f}));
  // An integer draw's floats stored as int32 inputs: exact up to 2^24.
  const std::vector<float> drawn = {0.0f, 4095.0f, -3.0f, 16777216.0f};
  std::vector<int32_t> stored(drawn.size());
  StoreAs(DType::kInt32, drawn.data(), drawn.size(), stored.data());
  EXPECT_EQ(stored, (std::vector<int32_t>{0, 4095, -3, 16777216}));
}

TEST(DType, EveryTypeHasANameASizeAndACType) {
  for (DType dtype : kAllTypes) {
    EXPECT_STRNE(DTypeName(dtype), "?");
    EXPECT_STRNE(DTypeCType(dtype), "?");
    EXPECT_GT(DTypeBytes(dtype), 0u) << DTypeName(dtype);
    EXPECT_GE(DTypeEpsilon(dtype), 0.0) << DTypeName(dtype);
  }
}

TEST(DTypeName, OutOfRangeValueIsAQuestionMark) {
  EXPECT_STREQ(DTypeName(static_cast<DType>(77)), "?");
  EXPECT_EQ(DTypeBytes(static_cast<DType>(77)), 0u);
}

}  // namespace
}  // namespace ksmith
