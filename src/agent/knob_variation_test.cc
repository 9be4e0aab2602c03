#include "agent/knob_variation.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

KnobSpace Space() {
  auto knobs = ParseTuneKnobs(
      "// @tune BLOCK: 64, 128, 256, 512\n#ifndef BLOCK\n#define BLOCK 128\n#endif\n"
      "// @tune UNROLL: 1, 2\n#ifndef UNROLL\n#define UNROLL 1\n#endif\n"
      "// @tune VEC: 1, 4\n#ifndef VEC\n#define VEC 4\n#endif\n");
  EXPECT_TRUE(knobs.ok()) << knobs.error().message;
  return KnobSpace(knobs.value());
}

size_t Differences(const KnobSetting& a, const KnobSetting& b) {
  size_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) count += a[i].second != b[i].second ? 1 : 0;
  return count;
}

TEST(KnobSpace, DefaultsAreTheSourcesOwnDefines) {
  EXPECT_EQ(FormatSetting(Space().Defaults()), "BLOCK=128 UNROLL=1 VEC=4");
}

TEST(KnobSpace, AMutationMovesExactlyOneKnobToAnotherListedValue) {
  const KnobSpace space = Space();
  std::mt19937_64 rng(7);
  const KnobSetting parent = space.Defaults();
  for (int i = 0; i < 200; ++i) {
    const KnobSetting child = space.Mutate(parent, rng);
    EXPECT_EQ(Differences(parent, child), 1u) << FormatSetting(child);
    EXPECT_TRUE(space.FromJson(KnobsToJson(child)).has_value());
  }
}

TEST(KnobSpace, ACrossTakesEveryValueFromOneParentOrTheOther) {
  const KnobSpace space = Space();
  std::mt19937_64 rng(3);
  const KnobSetting a = {{"BLOCK", "64"}, {"UNROLL", "1"}, {"VEC", "1"}};
  const KnobSetting b = {{"BLOCK", "512"}, {"UNROLL", "2"}, {"VEC", "4"}};
  bool mixed = false;
  for (int i = 0; i < 50; ++i) {
    const KnobSetting child = space.Cross(a, b, rng);
    for (size_t k = 0; k < child.size(); ++k) EXPECT_TRUE(child[k].second == a[k].second || child[k].second == b[k].second);
    mixed = mixed || (Differences(child, a) > 0 && Differences(child, b) > 0);
  }
  EXPECT_TRUE(mixed);
}

TEST(KnobSpace, UntriedNeverGivesATriedSettingAndFindsTheLastOne) {
  const KnobSpace space = Space();
  std::mt19937_64 rng(11);
  std::set<std::string> tried;
  const size_t total = CountSettings(space.knobs());  // 16
  for (size_t i = 0; i < total; ++i) {
    auto next = space.Untried(space.Defaults(), tried, rng);
    ASSERT_TRUE(next.has_value()) << "after " << i;
    EXPECT_TRUE(tried.insert(KnobsToJson(*next).dump()).second) << FormatSetting(*next);
  }
  EXPECT_FALSE(space.Untried(space.Defaults(), tried, rng).has_value());
}

TEST(KnobSpace, FromJsonRefusesAnotherKernelsKnobs) {
  const KnobSpace space = Space();
  EXPECT_FALSE(space.FromJson({{"BLOCK", "64"}, {"UNROLL", "1"}}).has_value());
  EXPECT_FALSE(space.FromJson({{"BLOCK", "96"}, {"UNROLL", "1"}, {"VEC", "1"}}).has_value());
  EXPECT_FALSE(space.FromJson(nlohmann::json::array()).has_value());
  EXPECT_TRUE(space.FromJson({{"BLOCK", "64"}, {"UNROLL", "1"}, {"VEC", "1"}}).has_value());
}

}  // namespace
}  // namespace ksmith
