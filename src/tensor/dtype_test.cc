// Element types: names, aliases, sizes, unit roundoff and the C type a kernel sees.
#include "tensor/dtype.h"

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

TEST(DTypeCType, NamesTheCTypeOfEachElement) {
  EXPECT_STREQ(DTypeCType(DType::kFloat32), "float");
  EXPECT_STREQ(DTypeCType(DType::kFloat16), "__half");
  EXPECT_STREQ(DTypeCType(DType::kBFloat16), "__nv_bfloat16");
  EXPECT_STREQ(DTypeCType(DType::kInt32), "int32_t");
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
