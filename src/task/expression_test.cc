// Integer expressions over dims: the cost models (flops, bytes, accumulation) of task files.
#include "task/expression.h"

#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

const DimValues kDims = {{"m", 4}, {"n", 5}, {"k", 6}, {"rows", 3}, {"cols", 10}, {"dim_2", 7}};

int64_t Eval(const std::string& text) {
  auto value = EvaluateExpression(text, kDims);
  EXPECT_TRUE(value.ok()) << text << ": " << value.error().message;
  return value.ok() ? *value : -999999;
}

std::string ErrorOf(const std::string& text) {
  auto value = EvaluateExpression(text, kDims);
  EXPECT_FALSE(value.ok()) << text << " evaluated to " << (value.ok() ? *value : 0);
  if (value.ok()) return {};
  EXPECT_EQ(value.error().kind, ErrorKind::kParse);
  return value.error().message;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

TEST(EvaluateExpression, ReadsLiteralsAndDims) {
  EXPECT_EQ(Eval("42"), 42);
  EXPECT_EQ(Eval("m"), 4);
  EXPECT_EQ(Eval("dim_2"), 7);
  EXPECT_EQ(Eval("0"), 0);
}

TEST(EvaluateExpression, MultipliesBeforeAdding) {
  EXPECT_EQ(Eval("1+2*3"), 7);
  EXPECT_EQ(Eval("2*3+1"), 7);
  EXPECT_EQ(Eval("2*m*n*k"), 240);
  EXPECT_EQ(Eval("8*rows*cols + 8*cols"), 320);
}

TEST(EvaluateExpression, HonoursParentheses) {
  EXPECT_EQ(Eval("(1+2)*3"), 9);
  EXPECT_EQ(Eval("4*(m*k + k*n + m*n)"), 4 * (24 + 30 + 20));
  EXPECT_EQ(Eval("((((k))))"), 6);
}

TEST(EvaluateExpression, SubtractionAndDivisionAssociateToTheLeft) {
  EXPECT_EQ(Eval("10-4-3"), 3);
  EXPECT_EQ(Eval("100/10/5"), 2);
  EXPECT_EQ(Eval("m-n+k"), 5);
}

// Rounding down keeps "(h - k) / s + 1" below 1 whenever a window does not fit: toward zero,
// (2 - 3) / 2 + 1 would be 1.
TEST(EvaluateExpression, DividesIntegersRoundingDown) {
  EXPECT_EQ(Eval("7/2"), 3);
  EXPECT_EQ(Eval("cols/3"), 3);
  EXPECT_EQ(Eval("-7/2"), -4);
  EXPECT_EQ(Eval("-8/2"), -4);
  EXPECT_EQ(Eval("7/(0-2)"), -4);
  EXPECT_EQ(Eval("(2 - 3) / 2 + 1"), 0);
}

TEST(EvaluateExpression, AcceptsUnaryMinus) {
  EXPECT_EQ(Eval("-3+5"), 2);
  EXPECT_EQ(Eval("2*-3"), -6);
  EXPECT_EQ(Eval("-(m+n)"), -9);
  EXPECT_EQ(Eval("--4"), 4);
}

TEST(EvaluateExpression, IgnoresWhitespace) {
  EXPECT_EQ(Eval("  2 *  m\t* ( n + 1 )  "), 48);
}

TEST(EvaluateExpression, HandlesLargeShapesWithoutOverflow) {
  const DimValues dims = {{"m", 100'000}, {"n", 100'000}, {"k", 4096}};
  auto value = EvaluateExpression("2*m*n*k", dims);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, int64_t{2} * 100'000 * 100'000 * 4096);
}

TEST(EvaluateExpression, UnknownDimErrorNamesTheDimAndItsColumn) {
  const std::string message = ErrorOf("2*m*q");
  EXPECT_TRUE(Contains(message, "unknown dim 'q'"));
  EXPECT_TRUE(Contains(message, "column 5"));
  EXPECT_TRUE(Contains(message, "\"2*m*q\""));
}

TEST(EvaluateExpression, UnknownDimAtTheStartIsColumnOne) {
  EXPECT_TRUE(Contains(ErrorOf("batch*m"), "column 1: unknown dim 'batch'"));
}

TEST(EvaluateExpression, DivisionByZeroIsAnError) {
  EXPECT_TRUE(Contains(ErrorOf("m/0"), "division by zero"));
  EXPECT_TRUE(Contains(ErrorOf("m/(n-n)"), "division by zero"));
}

TEST(EvaluateExpression, MissingClosingParenthesisIsAnError) {
  EXPECT_TRUE(Contains(ErrorOf("(m+n"), "missing ')'"));
}

TEST(EvaluateExpression, TrailingTokensAreAnError) {
  const std::string message = ErrorOf("2 3");
  EXPECT_TRUE(Contains(message, "unexpected '3'"));
  EXPECT_TRUE(Contains(message, "column 3"));
  EXPECT_TRUE(Contains(ErrorOf("m)"), "unexpected ')'"));
}

TEST(EvaluateExpression, UnknownCharacterIsAnError) {
  EXPECT_TRUE(Contains(ErrorOf("m $ n"), "unexpected '$'"));
  EXPECT_TRUE(Contains(ErrorOf("m^2"), "unexpected '^'"));
}

TEST(EvaluateExpression, EmptyOrTruncatedExpressionIsAnError) {
  EXPECT_TRUE(Contains(ErrorOf(""), "ends early"));
  EXPECT_TRUE(Contains(ErrorOf("m+"), "ends early"));
  EXPECT_TRUE(Contains(ErrorOf("   "), "ends early"));
}

TEST(EvaluateExpression, NamesAreCaseSensitive) {
  EXPECT_TRUE(Contains(ErrorOf("M*n"), "unknown dim 'M'"));
}

}  // namespace
}  // namespace ksmith
