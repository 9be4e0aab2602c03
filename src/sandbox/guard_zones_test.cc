// Guard zone contents: they differ per buffer, per side and per position, depend on the key, and
// a zone reads back with what changed and where.
#include "sandbox/guard_zones.h"

#include <cstring>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

constexpr uint64_t kKey = 0x1234'5678'9abc'def0ull;
constexpr size_t kZone = 256;

std::string Zone(const GuardPattern& pattern, size_t slot, GuardSide side, size_t size = kZone) {
  std::string zone(size, '\0');
  pattern.Fill(reinterpret_cast<unsigned char*>(zone.data()), zone.size(), slot, side);
  return zone;
}

TEST(GuardPattern, AZoneAsFilledReadsBackUndamagedAtAnySize) {
  const GuardPattern pattern(kKey);
  for (size_t size : {0, 1, 6, 13, 64, 256, 1000}) {
    for (GuardSide side : {GuardSide::kBefore, GuardSide::kAfter}) {
      EXPECT_FALSE(pattern.Inspect(Zone(pattern, 3, side, size), 3, side).any()) << size;
    }
  }
  // A shorter zone is the start of a longer one: the bytes depend on the offset alone.
  EXPECT_EQ(Zone(pattern, 1, GuardSide::kAfter, 13), Zone(pattern, 1, GuardSide::kAfter).substr(0, 13));
}

TEST(GuardPattern, DiffersPerBufferAndSideInEveryWord) {
  // Given an off-by-one ReLU that copies x's zone into y's, or a kernel that copies the zone
  // before a tensor into the zone after it, no 4-byte word of the copy may match.
  const GuardPattern pattern(kKey);
  const std::string zones[] = {Zone(pattern, 0, GuardSide::kBefore), Zone(pattern, 0, GuardSide::kAfter),
                               Zone(pattern, 1, GuardSide::kBefore), Zone(pattern, 1, GuardSide::kAfter)};
  for (size_t a = 0; a < std::size(zones); ++a) {
    for (size_t b = a + 1; b < std::size(zones); ++b) {
      for (size_t offset = 0; offset < kZone; offset += 4) {
        EXPECT_NE(zones[a].substr(offset, 4), zones[b].substr(offset, 4)) << a << " " << b << " at " << offset;
      }
    }
  }
}

TEST(GuardPattern, DiffersPerPositionWithinAZone) {
  // A copy from further along the same zone (the old pattern repeated every 4 bytes) changes it.
  const GuardPattern pattern(kKey);
  const std::string zone = Zone(pattern, 2, GuardSide::kAfter);
  std::set<std::string> words;
  for (size_t offset = 0; offset < kZone; offset += 4) words.insert(zone.substr(offset, 4));
  EXPECT_EQ(words.size(), kZone / 4) << "a 4-byte word repeats within one zone";
  std::string shifted = zone;
  std::memcpy(shifted.data(), zone.data() + 32, 32);
  const GuardDamage damage = pattern.Inspect(shifted, 2, GuardSide::kAfter);
  EXPECT_TRUE(damage.any());
  EXPECT_LT(damage.last, 32u);
}

TEST(GuardPattern, DependsOnTheKeyAndOnlyOnIt) {
  EXPECT_EQ(Zone(GuardPattern(kKey), 0, GuardSide::kAfter), Zone(GuardPattern(kKey), 0, GuardSide::kAfter));
  EXPECT_NE(Zone(GuardPattern(kKey), 0, GuardSide::kAfter), Zone(GuardPattern(kKey + 1), 0, GuardSide::kAfter));
  EXPECT_NE(GuardKey(1), GuardKey(2));
  EXPECT_EQ(GuardKey(7), GuardKey(7));
  // Over many evaluations, y[n] = x[n] (the first word after x copied after y) never matches.
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const GuardPattern pattern(GuardKey(seed));
    ASSERT_NE(Zone(pattern, 0, GuardSide::kAfter, 4), Zone(pattern, 1, GuardSide::kAfter, 4)) << seed;
  }
}

TEST(GuardPattern, NoZeroWriteMatches) {
  const GuardPattern pattern(kKey);
  const std::string zone = Zone(pattern, 0, GuardSide::kAfter);
  for (char byte : zone) EXPECT_EQ(static_cast<unsigned char>(byte) & 1u, 1u);
}

TEST(GuardPattern, InspectSaysWhatChangedAndWhereNearestTheTensor) {
  const GuardPattern pattern(kKey);
  std::string after = Zone(pattern, 4, GuardSide::kAfter, 64);
  after[5] ^= 0x40;
  after[9] ^= 0x02;
  after[40] ^= 0x80;
  GuardDamage damage = pattern.Inspect(after, 4, GuardSide::kAfter);
  EXPECT_EQ(damage.changed, 3u);
  EXPECT_EQ(damage.first, 5u);
  EXPECT_EQ(damage.last, 40u);
  EXPECT_EQ(damage.Nearest(GuardSide::kAfter), 5u);

  std::string before = Zone(pattern, 4, GuardSide::kBefore, 64);
  std::memset(before.data() + 56, 0, 8);  // t[-2] and t[-1] of a float tensor
  damage = pattern.Inspect(before, 4, GuardSide::kBefore);
  EXPECT_EQ(damage.changed, 8u);
  EXPECT_EQ(damage.Nearest(GuardSide::kBefore), 63u);
  EXPECT_STREQ(GuardSideName(GuardSide::kBefore), "before");
  EXPECT_STREQ(GuardSideName(GuardSide::kAfter), "after");
}

}  // namespace
}  // namespace ksmith
