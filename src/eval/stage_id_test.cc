#include "eval/stage_id.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

TEST(StageId, EveryStageHasItsOwnNameAndReadsBack) {
  std::set<std::string> names;
  for (int value = 0; value <= static_cast<int>(StageId::kProfile); ++value) {
    const auto stage = static_cast<StageId>(value);
    const std::string name(StageName(stage));
    EXPECT_NE(name, "unknown") << value;
    EXPECT_TRUE(names.insert(name).second) << name << " is named twice";
    EXPECT_EQ(StageFromName(name), stage) << name;
  }
}

TEST(StageId, NamesAreTheOnesStoredVerdictsHold) {
  // A verdict's JSON keeps these; changing one would orphan every stored verdict's stage.
  EXPECT_EQ(StageName(StageId::kCorrectness), "correctness");
  EXPECT_EQ(StageName(StageId::kPhysicalLimit), "physical_limit");
  EXPECT_EQ(StageName(StageId::kSecondTiming), "second_timing");
  EXPECT_FALSE(StageFromName("warmup").has_value());
}

}  // namespace
}  // namespace ksmith
