// SHA-256 of whole strings and of length-prefixed parts (the compile cache's keys).
#include "core/hash.h"

#include <cctype>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

bool IsLowercaseHex(const std::string& text) {
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

TEST(Sha256Hex, MatchesTheKnownDigestOfAbc) {
  // FIPS 180-2, appendix B.1.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Hex, MatchesTheKnownDigestOfTheEmptyString) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Hex, MatchesTheKnownDigestOfTheTwoBlockMessage) {
  // FIPS 180-2, appendix B.2: 448 bits, so the padding spills into a second block.
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Hex, HashesEmbeddedNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("a"));
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("ab"));
}

TEST(Sha256Hex, IsSixtyFourLowercaseHexCharacters) {
  const std::string digest = Sha256Hex("kernel source");
  EXPECT_EQ(digest.size(), 64u);
  EXPECT_TRUE(IsLowercaseHex(digest)) << digest;
}

TEST(Sha256Builder, LengthPrefixingSeparatesAbCFromABc) {
  Sha256Builder first;
  first.Add("ab").Add("c");
  Sha256Builder second;
  second.Add("a").Add("bc");
  const std::string first_digest = first.HexDigest();
  const std::string second_digest = second.HexDigest();
  EXPECT_NE(first_digest, second_digest);
  EXPECT_EQ(first_digest.size(), 64u);
  EXPECT_TRUE(IsLowercaseHex(first_digest));
}

TEST(Sha256Builder, SamePartsGiveTheSameDigest) {
  Sha256Builder first;
  first.Add("g++ 12").Add("-O3").Add("source");
  Sha256Builder second;
  second.Add("g++ 12").Add("-O3").Add("source");
  EXPECT_EQ(first.HexDigest(), second.HexDigest());
}

TEST(Sha256Builder, EmptyPartsStillCount) {
  Sha256Builder one;
  one.Add("x");
  Sha256Builder two;
  two.Add("x").Add("");
  Sha256Builder three;
  three.Add("").Add("x");
  std::set<std::string> digests = {one.HexDigest(), two.HexDigest(), three.HexDigest()};
  EXPECT_EQ(digests.size(), 3u);
}

TEST(Sha256Builder, OrderOfPartsMatters) {
  Sha256Builder forward;
  forward.Add("flags").Add("source");
  Sha256Builder backward;
  backward.Add("source").Add("flags");
  EXPECT_NE(forward.HexDigest(), backward.HexDigest());
}

TEST(Sha256Builder, DiffersFromThePlainHashOfTheSameBytes) {
  // The length prefix is part of what is hashed.
  Sha256Builder builder;
  builder.Add("abc");
  EXPECT_NE(builder.HexDigest(), Sha256Hex("abc"));
}

TEST(Sha256Builder, ManyBuildersDoNotInterfere) {
  std::set<std::string> digests;
  for (int i = 0; i < 50; ++i) {
    Sha256Builder builder;
    builder.Add(std::to_string(i));
    digests.insert(builder.HexDigest());
  }
  EXPECT_EQ(digests.size(), 50u);
}

}  // namespace
}  // namespace ksmith
