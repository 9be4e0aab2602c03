#include "agent/source_identity.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

TEST(NormalizedSource, CommentsAndSpacingDoNotMakeANewKernel) {
  const std::string a = "// v1\nextern \"C\" void f(float* x) {\n  x[0] = 1;  /* set */\n}\n";
  const std::string b = "extern \"C\"   void f(float* x) { x[0] = 1; }  // the same, reformatted";
  EXPECT_EQ(NormalizedSource(a), NormalizedSource(b));
  EXPECT_EQ(NormalizedSource(a), "extern \"C\" void f(float* x) { x[0] = 1; }");
}

TEST(NormalizedSource, CodeThatDiffersStaysApart) {
  EXPECT_NE(NormalizedSource("x[0] = 1;"), NormalizedSource("x[0] = 2;"));
  // A token split by a comment is two tokens: not the same as one.
  EXPECT_NE(NormalizedSource("int a/**/b;"), NormalizedSource("int ab;"));
}

TEST(NormalizedSource, LiteralsAreKeptExactly) {
  EXPECT_NE(NormalizedSource("puts(\"a  b\");"), NormalizedSource("puts(\"a b\");"));
  EXPECT_EQ(NormalizedSource("s = \"// not a comment\";"), "s = \"// not a comment\";");
  EXPECT_EQ(NormalizedSource("c = '\\'';  // quote"), "c = '\\'';");
  EXPECT_EQ(NormalizedSource("s = \"a\\\"b // c\"; d"), "s = \"a\\\"b // c\"; d");
}

}  // namespace
}  // namespace ksmith
