#include "agent/tune_knobs.h"

#include <limits>
#include <set>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

constexpr const char* kKernel = R"(#include <cstdint>
// @tune BLOCK: 64, 128, 256
#ifndef BLOCK
#define BLOCK 128
#endif
  //@tune UNROLL:1,2,4,8
#ifndef UNROLL
#define UNROLL 4  // four loads in flight
#endif
// @tune FAST_PATH: true, false
#if !defined(FAST_PATH)
#define FAST_PATH false
#endif
extern "C" void relu(const float* x, float* y, int64_t n) {}
)";

std::vector<TuneKnob> Parse(std::string_view source) {
  auto knobs = ParseTuneKnobs(source);
  EXPECT_TRUE(knobs.ok()) << knobs.error().message;
  return knobs.ok() ? knobs.value() : std::vector<TuneKnob>{};
}

// The error message of a source that must be refused.
std::string ParseError(std::string_view source) {
  auto knobs = ParseTuneKnobs(source);
  EXPECT_FALSE(knobs.ok()) << "parsed: " << source;
  if (knobs.ok()) return {};
  EXPECT_EQ(knobs.error().kind, ErrorKind::kParse);
  return knobs.error().message;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

std::vector<TuneKnob> Knobs(const std::vector<size_t>& sizes) {
  std::vector<TuneKnob> knobs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    TuneKnob knob{"K" + std::to_string(i), {}, i + 1};
    for (size_t v = 0; v < sizes[i]; ++v) knob.values.push_back(std::to_string(v));
    knobs.push_back(knob);
  }
  return knobs;
}

TEST(TuneKnobs, ParsesEveryDeclarationWithItsLineAndDefault) {
  const auto knobs = Parse(kKernel);
  ASSERT_EQ(knobs.size(), 3u);
  EXPECT_EQ(knobs[0].name, "BLOCK");
  EXPECT_EQ(knobs[0].values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(knobs[0].line, 2u);
  EXPECT_EQ(knobs[0].default_index, 1u);
  EXPECT_EQ(knobs[1].name, "UNROLL");
  EXPECT_EQ(knobs[1].values, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(knobs[1].line, 6u);
  EXPECT_EQ(knobs[1].default_index, 2u) << "the comment after the #define is not part of the value";
  EXPECT_EQ(knobs[2].values, (std::vector<std::string>{"true", "false"}));
  EXPECT_EQ(knobs[2].default_index, 1u) << "#if !defined(NAME) is a guard too";
}

TEST(TuneKnobs, SourceWithoutKnobsGivesAnEmptyList) {
  EXPECT_TRUE(Parse("extern \"C\" void f() {}\n").empty());
  EXPECT_TRUE(Parse("").empty());
  // Words that merely start like the marker, and the marker in the middle of a comment.
  EXPECT_TRUE(Parse("// @tuner BLOCK: 1, 2\n// see @tune BLOCK: 1\nint x; // @tune X: 1\n").empty());
}

TEST(TuneKnobs, AcceptsNumbersBooleansAndIdentifiersAsValues) {
  const auto knobs = Parse("// @tune ALPHA: 0.5f, 1e-3, -1, +2, kWide, 0x10\n");
  ASSERT_EQ(knobs.size(), 1u);
  EXPECT_EQ(knobs[0].values, (std::vector<std::string>{"0.5f", "1e-3", "-1", "+2", "kWide", "0x10"}));
}

TEST(TuneKnobs, DefaultIsTheFirstValueWhenTheDefineIsMissingOrUnlisted) {
  EXPECT_EQ(Parse("// @tune A: 1, 2\n")[0].default_index, 0u);
  EXPECT_EQ(Parse("// @tune A: 1, 2\n#ifndef A\n#define A 3\n#endif\n")[0].default_index, 0u);
  // A function-like macro of the same name is not the knob's definition.
  EXPECT_EQ(Parse("// @tune A: 1, 2\n#define A(x) x\n")[0].default_index, 0u);
}

TEST(TuneKnobs, DeclarationWithoutColonIsRefusedOnItsLine) {
  const std::string message = ParseError("int x;\n// @tune BLOCK 64, 128\n");
  EXPECT_TRUE(Contains(message, "line 2"));
  EXPECT_TRUE(Contains(message, "no ':'"));
}

TEST(TuneKnobs, DeclarationWithoutValuesIsRefused) {
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK:\n"), "BLOCK lists no values"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK:   \n"), "BLOCK lists no values"));
  EXPECT_TRUE(Contains(ParseError("// @tune\n"), "no ':'"));
}

TEST(TuneKnobs, EmptyValuesAreRefused) {
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64,, 128\n"), "BLOCK has an empty value"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64, 128,\n"), "BLOCK has an empty value"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: , 64\n"), "BLOCK has an empty value"));
}

TEST(TuneKnobs, NamesMustBeCIdentifiers) {
  EXPECT_TRUE(Contains(ParseError("// @tune : 1, 2\n"), "no knob name"));
  EXPECT_TRUE(Contains(ParseError("// @tune 2BLOCK: 1, 2\n"), "'2BLOCK' is not a C identifier"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK SIZE: 1, 2\n"), "'BLOCK SIZE' is not a C identifier"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK-SIZE: 1, 2\n"), "not a C identifier"));
}

TEST(TuneKnobs, ValuesMustBeSingleTokens) {
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64, 128 256\n"), "value '128 256' is not a single token"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: (64), 128\n"), "'(64)'"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64, 128  // threads\n"), "not a single token"));
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64*2, 128\n"), "'64*2'"));
}

TEST(TuneKnobs, RepeatedValueIsRefused) {
  EXPECT_TRUE(Contains(ParseError("// @tune BLOCK: 64, 128, 64\n"), "BLOCK lists 64 twice"));
}

TEST(TuneKnobs, KnobDeclaredTwiceNamesBothLines) {
  const std::string message = ParseError("// @tune BLOCK: 64\nint x;\n// @tune BLOCK: 128, 256\n");
  EXPECT_TRUE(Contains(message, "line 3"));
  EXPECT_TRUE(Contains(message, "already declared on line 1"));
}

TEST(TuneKnobs, UnguardedDefineIsRefusedBecauseNoSettingCouldOverrideIt) {
  const std::string message = ParseError("// @tune BLOCK: 64, 128\n#define BLOCK 128\n");
  EXPECT_TRUE(Contains(message, "line 2"));
  EXPECT_TRUE(Contains(message, "without an `#ifndef BLOCK` guard"));
  // A guard for another macro does not count.
  EXPECT_FALSE(ParseTuneKnobs("// @tune BLOCK: 64\n#ifndef OTHER\n#define BLOCK 64\n#endif\n").ok());
}

TEST(TuneKnobs, ApplyPrependsTheSettingUnderAComment) {
  const std::string applied = ApplyKnobs(kKernel, {{"BLOCK", "256"}, {"UNROLL", "8"}, {"FAST_PATH", "true"}});
  EXPECT_EQ(applied, std::string("// ksmith tune: BLOCK=256 UNROLL=8 FAST_PATH=true\n"
                                 "#define BLOCK 256\n#define UNROLL 8\n#define FAST_PATH true\n") +
                         kKernel);
}

TEST(TuneKnobs, ApplyingNothingLeavesTheSourceAlone) {
  EXPECT_EQ(ApplyKnobs(kKernel, {}), kKernel);
}

TEST(TuneKnobs, AppliedSourceParsesWithTheAppliedValuesAsDefaults) {
  const std::string applied = ApplyKnobs(kKernel, {{"BLOCK", "64"}, {"UNROLL", "1"}, {"FAST_PATH", "true"}});
  const auto knobs = Parse(applied);
  ASSERT_EQ(knobs.size(), 3u);
  EXPECT_EQ(knobs[0].default_index, 0u);
  EXPECT_EQ(knobs[0].line, 6u) << "lines count in the applied source";
  EXPECT_EQ(knobs[1].default_index, 0u);
  EXPECT_EQ(knobs[2].default_index, 0u);
}

TEST(TuneKnobs, ReapplyingReplacesTheEarlierSetting) {
  const std::string once = ApplyKnobs(kKernel, {{"BLOCK", "64"}, {"UNROLL", "1"}});
  const std::string twice = ApplyKnobs(once, {{"BLOCK", "256"}, {"UNROLL", "2"}});
  EXPECT_EQ(twice, ApplyKnobs(kKernel, {{"BLOCK", "256"}, {"UNROLL", "2"}}));
}

TEST(TuneKnobs, CountIsTheProductAndSaturates) {
  EXPECT_EQ(CountSettings({}), 1u);
  EXPECT_EQ(CountSettings(Parse(kKernel)), 24u);
  EXPECT_EQ(CountSettings(Knobs({3, 0, 2})), 0u);
  EXPECT_EQ(CountSettings(Knobs(std::vector<size_t>(80, 2))), std::numeric_limits<size_t>::max());
}

TEST(TuneKnobs, EnumeratesTheWholeProductInDeclarationOrderWhenItFits) {
  const auto knobs = Parse("// @tune A: 1, 2\n// @tune B: x, y, z\n");
  const auto settings = EnumerateSettings(knobs, 6, 7);
  ASSERT_EQ(settings.size(), 6u);
  const std::vector<std::string> expected = {"A=1 B=x", "A=1 B=y", "A=1 B=z",
                                             "A=2 B=x", "A=2 B=y", "A=2 B=z"};
  for (size_t i = 0; i < settings.size(); ++i) EXPECT_EQ(FormatSetting(settings[i]), expected[i]);
  EXPECT_EQ(EnumerateSettings(knobs, 100, 7), settings) << "the seed plays no part when all fit";
}

TEST(TuneKnobs, NoKnobsGiveOneEmptySettingAndALimitOfZeroNone) {
  const auto settings = EnumerateSettings({}, 5, 1);
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_TRUE(settings[0].empty());
  EXPECT_TRUE(EnumerateSettings(Parse(kKernel), 0, 1).empty());
}

TEST(TuneKnobs, OverTheLimitStartsWithTheDefaultsThenSamplesDistinctSettings) {
  const auto knobs = Parse(kKernel);
  const auto settings = EnumerateSettings(knobs, 10, 42);
  ASSERT_EQ(settings.size(), 10u);
  EXPECT_EQ(FormatSetting(settings[0]), "BLOCK=128 UNROLL=4 FAST_PATH=false");
  std::set<KnobSetting> distinct(settings.begin(), settings.end());
  EXPECT_EQ(distinct.size(), settings.size());
  for (const auto& setting : settings) {
    ASSERT_EQ(setting.size(), 3u);
    for (size_t i = 0; i < setting.size(); ++i) {
      EXPECT_EQ(setting[i].first, knobs[i].name);
      EXPECT_NE(std::find(knobs[i].values.begin(), knobs[i].values.end(), setting[i].second),
                knobs[i].values.end());
    }
  }
}

TEST(TuneKnobs, SampleIsDeterministicForASeed) {
  const auto knobs = Parse(kKernel);
  EXPECT_EQ(EnumerateSettings(knobs, 5, 42), EnumerateSettings(knobs, 5, 42));
  // Of 23 non-default settings, two samples of 11 drawn with different seeds are almost surely not equal.
  EXPECT_NE(EnumerateSettings(knobs, 12, 1), EnumerateSettings(knobs, 12, 2));
}

TEST(TuneKnobs, SampleOneShortOfTheWholeSpaceMissesExactlyOne) {
  const auto knobs = Knobs({3, 4});
  const auto settings = EnumerateSettings(knobs, 11, 9);
  ASSERT_EQ(settings.size(), 11u);
  EXPECT_EQ(std::set<KnobSetting>(settings.begin(), settings.end()).size(), 11u);
}

TEST(TuneKnobs, SamplesAHugeSpaceWithoutEnumeratingIt) {
  const auto knobs = Knobs(std::vector<size_t>(80, 3));  // 3^80 settings: saturated count
  const auto settings = EnumerateSettings(knobs, 50, 3);
  ASSERT_EQ(settings.size(), 50u);
  EXPECT_EQ(std::set<KnobSetting>(settings.begin(), settings.end()).size(), 50u);
  for (const auto& [name, value] : settings[0]) EXPECT_EQ(value, "0") << name;
}

TEST(TuneKnobs, FormatsNameValuePairs) {
  EXPECT_EQ(FormatSetting({{"BLOCK", "128"}, {"UNROLL", "4"}}), "BLOCK=128 UNROLL=4");
  EXPECT_EQ(FormatSetting({}), "");
}

}  // namespace
}  // namespace ksmith
