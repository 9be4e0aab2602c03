// Result<T>, Status and the error kinds: the value-or-error type every fallible call returns.
#include "core/result.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

Result<int> ParsePositive(int value) {
  if (value <= 0) return MakeError(ErrorKind::kInvalidArgument, "{} is not positive", value);
  return value;
}

Status CheckEven(int value) {
  if (value % 2 != 0) return MakeError(ErrorKind::kParse, "{} is odd", value);
  return {};
}

TEST(Result, HoldsAValueWhenConstructedFromOne) {
  Result<int> result = ParsePositive(7);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(static_cast<bool>(result));
  EXPECT_EQ(result.value(), 7);
  EXPECT_EQ(*result, 7);
}

TEST(Result, HoldsAnErrorWithKindAndFormattedMessage) {
  Result<int> result = ParsePositive(-3);
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(static_cast<bool>(result));
  EXPECT_EQ(result.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(result.error().message, "-3 is not positive");
}

TEST(Result, ArrowReachesMembersOfTheValue) {
  Result<std::string> result = std::string("kernel");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->size(), 6u);
  result->append("s");
  EXPECT_EQ(*result, "kernels");
}

TEST(Result, ValueCanBeMovedOutOfAnRvalue) {
  Result<std::unique_ptr<int>> result = std::make_unique<int>(42);
  ASSERT_TRUE(result.ok());
  std::unique_ptr<int> owned = std::move(result).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 42);
}

TEST(Result, ConstResultGivesConstAccess) {
  const Result<std::vector<int>> result = std::vector<int>{1, 2, 3};
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value().size(), 3u);
  EXPECT_EQ((*result)[2], 3);
  EXPECT_EQ(result->front(), 1);
}

TEST(Result, ErrorCanBePropagatedToAnotherResultType) {
  auto inner = ParsePositive(0);
  ASSERT_FALSE(inner.ok());
  Result<std::string> outer = inner.error();
  ASSERT_FALSE(outer.ok());
  EXPECT_EQ(outer.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(outer.error().message, "0 is not positive");
}

TEST(Result, ValueThatIsItselfAStringIsNotMistakenForAnError) {
  // A Result<std::string> built from a string must hold a value, not an error message.
  Result<std::string> result = std::string("not an error");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value(), "not an error");
}

TEST(Status, DefaultConstructedIsOk) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_TRUE(static_cast<bool>(status));
}

TEST(Status, FromAnErrorIsNotOkAndKeepsTheError) {
  Status status = CheckEven(3);
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(static_cast<bool>(status));
  EXPECT_EQ(status.error().kind, ErrorKind::kParse);
  EXPECT_EQ(status.error().message, "3 is odd");
  EXPECT_TRUE(CheckEven(4).ok());
}

TEST(MakeError, FormatsArgumentsWithFmtSyntax) {
  const Error error = MakeError(ErrorKind::kIo, "{}: {} bytes, {:.2f} s", "file.txt", 12, 1.5);
  EXPECT_EQ(error.kind, ErrorKind::kIo);
  EXPECT_EQ(error.message, "file.txt: 12 bytes, 1.50 s");
}

TEST(MakeError, DefaultErrorIsInternal) {
  const Error error;
  EXPECT_EQ(error.kind, ErrorKind::kInternal);
  EXPECT_TRUE(error.message.empty());
}

TEST(ErrorKindName, NamesEveryKindDistinctly) {
  const std::vector<std::pair<ErrorKind, std::string>> expected = {
      {ErrorKind::kInvalidArgument, "invalid_argument"}, {ErrorKind::kNotFound, "not_found"},
      {ErrorKind::kParse, "parse_error"},               {ErrorKind::kIo, "io_error"},
      {ErrorKind::kUnsupported, "unsupported"},         {ErrorKind::kTimeout, "timeout"},
      {ErrorKind::kProtocol, "protocol_error"},         {ErrorKind::kInternal, "internal_error"},
      {ErrorKind::kDamaged, "damaged"},
  };
  std::set<std::string> seen;
  for (const auto& [kind, name] : expected) {
    EXPECT_EQ(ErrorKindName(kind), name);
    seen.insert(ErrorKindName(kind));
  }
  EXPECT_EQ(seen.size(), expected.size());
}

TEST(ErrorKindName, OutOfRangeValueIsUnknown) {
  EXPECT_STREQ(ErrorKindName(static_cast<ErrorKind>(999)), "unknown");
}

}  // namespace
}  // namespace ksmith
