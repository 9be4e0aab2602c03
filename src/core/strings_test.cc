// String helpers: trimming, line splitting, edit distance, suggestions, log trimming.
#include "core/strings.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

::testing::AssertionResult Contains(std::string_view text, std::string_view part) {
  if (text.find(part) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

std::string NumberedLines(int count, int error_at = -1) {
  std::string log;
  for (int i = 0; i < count; ++i) {
    log += i == error_at ? "file.cc:" + std::to_string(i) + ": error: broken\n"
                         : "line " + std::to_string(i) + "\n";
  }
  return log;
}

TEST(Trim, RemovesSpacesTabsAndNewlinesAtBothEnds) {
  EXPECT_EQ(Trim("  \t hello world \r\n"), "hello world");
  EXPECT_EQ(Trim("x"), "x");
  EXPECT_EQ(Trim("inner  spaces stay"), "inner  spaces stay");
}

TEST(Trim, AllWhitespaceOrEmptyBecomesEmpty) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\r\n "), "");
}

TEST(SplitLines, SplitsOnNewlinesWithoutATrailingEmptyLine) {
  EXPECT_EQ(SplitLines("a\nb\nc"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitLines("a\nb\n"), (std::vector<std::string>{"a", "b"}));
}

TEST(SplitLines, KeepsEmptyLinesInTheMiddle) {
  EXPECT_EQ(SplitLines("a\n\nb"), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(SplitLines("\n\n"), (std::vector<std::string>{"", ""}));
}

TEST(SplitLines, EmptyTextHasNoLines) { EXPECT_TRUE(SplitLines("").empty()); }

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("softmx", "softmax"), 1u);
  EXPECT_EQ(EditDistance("relu", "gelu"), 1u);
  EXPECT_EQ(EditDistance("abc", "abc"), 0u);
}

TEST(EditDistance, AgainstEmptyIsTheLength) {
  EXPECT_EQ(EditDistance("", "matmul"), 6u);
  EXPECT_EQ(EditDistance("matmul", ""), 6u);
  EXPECT_EQ(EditDistance("", ""), 0u);
}

TEST(EditDistance, IsSymmetric) {
  EXPECT_EQ(EditDistance("layernorm", "rmsnorm"), EditDistance("rmsnorm", "layernorm"));
  EXPECT_EQ(EditDistance("transpose", "row_sum"), EditDistance("row_sum", "transpose"));
}

const std::vector<std::string> kTaskNames = {"gelu",    "layernorm", "matmul",    "relu",
                                             "rmsnorm", "row_sum",   "softmax",   "transpose",
                                             "vector_add"};

TEST(NearestNames, SuggestsSoftmaxForSoftmx) {
  const auto nearest = NearestNames("softmx", kTaskNames);
  ASSERT_FALSE(nearest.empty());
  EXPECT_EQ(nearest.front(), "softmax");
}

TEST(NearestNames, SuggestsNamesThatContainThePrefixTyped) {
  const auto nearest = NearestNames("vector", kTaskNames);
  ASSERT_FALSE(nearest.empty());
  EXPECT_EQ(nearest.front(), "vector_add");
}

TEST(NearestNames, SuggestsNothingForAnUnrelatedName) {
  EXPECT_TRUE(NearestNames("quaternion_fft", kTaskNames).empty());
}

TEST(NearestNames, ReturnsAtMostThreeNearestFirst) {
  const std::vector<std::string> candidates = {"abcd", "abce", "abcf", "abcg", "abzz", "abcde"};
  const auto nearest = NearestNames("abcd", candidates);
  ASSERT_LE(nearest.size(), 3u);
  ASSERT_FALSE(nearest.empty());
  EXPECT_EQ(nearest.front(), "abcd");
}

TEST(TrimLog, StartsAtTheFirstErrorIncludingTheInFunctionLineBeforeIt) {
  const std::string log =
      "make: entering directory\n"
      "note: something harmless\n"
      "kernel.cc: In function 'void f()':\n"
      "kernel.cc:3:5: error: 'y' was not declared in this scope\n"
      "    3 |   y = 1;\n";
  const std::string trimmed = TrimLog(log, 40, 4000);
  EXPECT_EQ(trimmed.rfind("kernel.cc: In function", 0), 0u) << trimmed;
  EXPECT_TRUE(Contains(trimmed, "error: 'y' was not declared"));
  EXPECT_FALSE(Contains(trimmed, "make: entering"));
  EXPECT_TRUE(Contains(trimmed, "2 more lines of the log omitted"));
}

TEST(TrimLog, NotesHowManyLinesWereCutByTheLineLimit) {
  const std::string trimmed = TrimLog(NumberedLines(100, 0), 10, 1 << 20);
  EXPECT_EQ(SplitLines(trimmed).size(), 11u) << trimmed;  // 10 kept + the note
  EXPECT_TRUE(Contains(trimmed, "[... 90 more lines of the log omitted]"));
}

TEST(TrimLog, RespectsTheByteLimit) {
  const std::string trimmed = TrimLog(NumberedLines(1000), 1000, 200);
  const std::string note_start = "[...";
  const size_t note = trimmed.find(note_start);
  ASSERT_NE(note, std::string::npos) << trimmed;
  EXPECT_LE(note, 200u);
  EXPECT_TRUE(Contains(trimmed, "more lines of the log omitted"));
}

TEST(TrimLog, WithoutAnErrorStartsAtTheTop) {
  const std::string trimmed = TrimLog(NumberedLines(5), 40, 4000);
  EXPECT_EQ(trimmed, NumberedLines(5));
}

TEST(TrimLog, ShortLogIsKeptWholeWithoutANote) {
  const std::string log = NumberedLines(3, 0);
  EXPECT_EQ(TrimLog(log, 40, 4000), log);
}

TEST(Tail, ShortTextIsReturnedUnchanged) {
  EXPECT_EQ(Tail("hello\nworld\n", 100), "hello\nworld\n");
  EXPECT_EQ(Tail("", 10), "");
}

TEST(Tail, LongTextKeepsTheEndFromALineBoundary) {
  const std::string text = "first line\nsecond line\nthird line\n";
  const std::string tail = Tail(text, 15);
  EXPECT_EQ(tail, "[...]\nthird line\n");
}

TEST(Tail, WithoutANewlineKeepsTheLastBytes) {
  const std::string text(100, 'x');
  const std::string tail = Tail(text + "END", 10);
  EXPECT_EQ(tail.rfind("[...]\n", 0), 0u);
  EXPECT_TRUE(tail.ends_with("END"));
  EXPECT_EQ(tail.size(), std::string("[...]\n").size() + 10);
}

TEST(FirstLine, KeepsOneLineAndMarksWhatItCut) {
  EXPECT_EQ(FirstLine("  short  ", 20), "short");
  EXPECT_EQ(FirstLine("first\nsecond", 20), "first...");
  EXPECT_EQ(FirstLine("abcdefghij", 4), "abcd...");
  EXPECT_EQ(FirstLine("", 4), "");
}

}  // namespace
}  // namespace ksmith
