#include "bench/bench_html.h"

#include <gtest/gtest.h>

#include "bench/bench_html_charts.h"
#include "bench/bench_html_layout.h"
#include "bench/bench_summary.h"

namespace ksmith {
namespace {

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

nlohmann::json Passed(double speedup, double roofline) {
  return {{"status", "passed"}, {"stages", {{{"name", "build"}, {"outcome", "ok"}}}}, {"speedup", speedup},
          {"speedup_ci95", {speedup * 0.9, speedup * 1.1}}, {"roofline_fraction", roofline}};
}

nlohmann::json TaskWith(double speedup, double low, double high) {
  return {{"task", "t"}, {"best_speedup", speedup}, {"best_speedup_ci95", {low, high}}, {"correct_rate", 1.0}};
}

TEST(BenchHtml, ThreeChartsAndATableWithEscapedNames) {
  BenchTaskResult fast{"soft<max>", "r1", "", {SampleFromVerdict(Passed(3.0, 0.5))}, 0, 0, 1, 1};
  BenchTaskResult slow{"relu", "r2", "", {SampleFromVerdict(Passed(0.5, 0.2))}, 0, 0, 1, 1};
  BenchTaskResult broken{"gelu", "", "optimize ended with exit code 3", {}, 0, 0, 0, 0};
  const std::string html =
      BenchHtml(BenchJson({"mini", "cpu", "tune", 1, 1, {{"cpu", "A <fast> CPU"}, {"cores", 16}}}, {fast, slow, broken}));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "class=\"chart\""), 3u);
  EXPECT_NE(html.find("id=\"fast-p\""), std::string::npos);
  EXPECT_NE(html.find("id=\"speedups\""), std::string::npos);
  EXPECT_NE(html.find("id=\"roofline\""), std::string::npos);
  EXPECT_EQ(Count(html, "<polyline"), 1u);              // the fast_p curve
  EXPECT_EQ(Count(html, "class=\"chart-title\""), 3u);  // titles drawn, not only tooltips
  EXPECT_EQ(Count(html, "class=\"bar faster\"/>"), 2u);  // the bar and its legend swatch
  EXPECT_EQ(Count(html, "class=\"bar slower\"/>"), 2u);
  EXPECT_EQ(Count(html, "class=\"band failed\""), 1u);   // gelu: a band, not a bar
  EXPECT_EQ(Count(html, "<path class=\"whisker\""), 3u);  // one per interval, one in the legend
  EXPECT_NE(html.find("class=\"legend\""), std::string::npos);
  EXPECT_NE(html.find("soft&lt;max&gt;"), std::string::npos);
  EXPECT_EQ(html.find("soft<max>"), std::string::npos);
  EXPECT_NE(html.find("<li>machine: A &lt;fast&gt; CPU, 16 cores</li>"), std::string::npos);
  EXPECT_NE(html.find("error: optimize ended with exit code 3"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);   // self-contained and static
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // nothing fetched
}

// Given a tie whose median is below 1x, we should draw it as a tie: the interval decides.
TEST(BenchHtml, ColourComesFromTheIntervalNotTheMedian) {
  EXPECT_EQ(CompareWithBaseline(TaskWith(0.96, 0.92, 1.09)), SpeedupComparison::kTie);
  EXPECT_EQ(CompareWithBaseline(TaskWith(1.5, 0.9, 2.0)), SpeedupComparison::kTie);
  EXPECT_EQ(CompareWithBaseline(TaskWith(1.2, 1.01, 1.4)), SpeedupComparison::kFaster);
  EXPECT_EQ(CompareWithBaseline(TaskWith(1.2, 1.0, 1.4)), SpeedupComparison::kTie);  // "above 1", as verdicts say
  EXPECT_EQ(CompareWithBaseline(TaskWith(0.8, 0.7, 0.99)), SpeedupComparison::kSlower);
  EXPECT_EQ(CompareWithBaseline({{"best_speedup", 2.0}, {"best_speedup_ci95", nullptr}, {"correct_rate", 1.0}}),
            SpeedupComparison::kNoInterval);
  // Correct, but every speedup was timed beside other work: not compared, not failed.
  EXPECT_EQ(CompareWithBaseline({{"best_speedup", nullptr}, {"correct_rate", 0.5}}), SpeedupComparison::kNoInterval);
  EXPECT_EQ(CompareWithBaseline({{"best_speedup", nullptr}, {"correct_rate", 0.0}}), SpeedupComparison::kFailed);
  EXPECT_EQ(CompareWithBaseline({{"error", "could not start"}}), SpeedupComparison::kFailed);
  EXPECT_STREQ(ComparisonClass(SpeedupComparison::kTie), "tie");
  EXPECT_STREQ(ComparisonClass(SpeedupComparison::kNoInterval), "no-interval");
  EXPECT_STREQ(ComparisonWords(SpeedupComparison::kFailed), "no kernel");
}

TEST(BenchHtml, TheSpeedupAxisSpansPowersOfTwoAroundOne) {
  const LogAxis near_one = LogAxis::Spanning({0.96, 1.09}, 100, 500);
  EXPECT_EQ(near_one.low, 0.5);
  EXPECT_EQ(near_one.high, 2);
  EXPECT_DOUBLE_EQ(near_one.Px(1), 300);
  EXPECT_EQ(near_one.Ticks(), (std::vector<double>{0.5, 1, 2}));
  const LogAxis wide = LogAxis::Spanning({0.3, 12.5, 0, -1}, 0, 600);  // non-positive values ignored
  EXPECT_EQ(wide.low, 0.25);
  EXPECT_EQ(wide.high, 16);
  EXPECT_EQ(wide.Ticks(), (std::vector<double>{0.25, 0.5, 1, 2, 4, 8, 16}));
  // Twenty powers of two in 300 px do not fit: every fourth, and always 1x.
  const auto crowded = LogAxis::Spanning({1.0 / 1024, 1024}, 0, 300).Ticks();
  EXPECT_EQ(crowded, (std::vector<double>{1.0 / 256, 1.0 / 16, 1, 16, 256}));
  EXPECT_EQ(TickText(0.125), "0.125x");
  EXPECT_EQ(TickText(16), "16x");
}

TEST(BenchHtml, BarsStartAtOneAndAreNeverHairlines) {
  const LogAxis axis = LogAxis::Spanning({0.25, 4}, 0, 400);  // 100 px per factor of two
  const SpeedupMarks two = PlaceSpeedupMarks(axis, 2, 1.8, 2.2);
  EXPECT_DOUBLE_EQ(two.bar_from_px, 200);
  EXPECT_DOUBLE_EQ(two.bar_to_px, 300);
  ASSERT_TRUE(two.whisker_low_px && two.whisker_high_px);
  EXPECT_DOUBLE_EQ(*two.whisker_low_px, axis.Px(1.8));
  EXPECT_DOUBLE_EQ(*two.whisker_high_px, axis.Px(2.2));
  // 0.99x is 1.4 px left of 1x: drawn kMinBarPx long, still to the left.
  const SpeedupMarks tie = PlaceSpeedupMarks(axis, 0.99, 0.92, 1.09);
  EXPECT_DOUBLE_EQ(tie.bar_from_px, 200);
  EXPECT_DOUBLE_EQ(tie.bar_to_px, 200 - kMinBarPx);
  EXPECT_LT(*tie.whisker_low_px, 200);
  EXPECT_GT(*tie.whisker_high_px, 200);  // the whisker crosses 1x: that is what a tie looks like
  const SpeedupMarks just_above = PlaceSpeedupMarks(axis, 1.001, std::nullopt, std::nullopt);
  EXPECT_DOUBLE_EQ(just_above.bar_to_px - just_above.bar_from_px, kMinBarPx);
  EXPECT_FALSE(just_above.whisker_low_px.has_value());
  const SpeedupMarks exactly_one = PlaceSpeedupMarks(axis, 1, 1, 1);
  EXPECT_DOUBLE_EQ(exactly_one.bar_to_px - exactly_one.bar_from_px, kMinBarPx);
  EXPECT_DOUBLE_EQ((exactly_one.bar_to_px + exactly_one.bar_from_px) / 2, 200);
  // An interval that is a point still shows as a whisker, centred on it.
  EXPECT_DOUBLE_EQ(*exactly_one.whisker_high_px - *exactly_one.whisker_low_px, kMinWhiskerPx);
  // Ends outside the axis are held at its edges.
  EXPECT_DOUBLE_EQ(*PlaceSpeedupMarks(axis, 3, 2, 100).whisker_high_px, 400);
}

TEST(BenchHtml, LabelsThatWouldOverlapMoveOrAreLeftOut) {
  const LabelBox area{0, 0, 200, 100};
  const LabelBox right{50, 10, 40, 12}, left{5, 10, 40, 12}, above{50, 0, 40, 8};
  // The second label wants the first one's place: it takes its next choice; the third has none left.
  const auto placed = PlaceLabels({{right}, {right, left}, {right, left}}, area);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0], 0u);
  EXPECT_EQ(placed[1], 1u);
  EXPECT_FALSE(placed[2].has_value());
  // Outside the area, or over a mark, is no place either.
  EXPECT_FALSE(PlaceLabels({{{190, 10, 40, 12}}}, area)[0].has_value());
  EXPECT_EQ(PlaceLabels({{right, above}}, area, {{60, 15, 4, 4}})[0], 1u);
  // Touching edges do not overlap; half a pixel in does.
  EXPECT_FALSE((LabelBox{0, 0, 10, 10}.Overlaps({10, 0, 10, 10})));
  EXPECT_TRUE((LabelBox{0, 0, 10, 10}.Overlaps({9.5, 9.5, 10, 10})));
  EXPECT_DOUBLE_EQ(TextWidthPx("abcd", 10), TextWidthPx("äbcd", 10));  // characters, not bytes
}

TEST(BenchHtml, LongNamesAndRunIdsAreShortened) {
  EXPECT_EQ(Shorten("softmax", 7), "softmax");
  EXPECT_EQ(Shorten("softmax2", 7), "softma…");
  EXPECT_EQ(Shorten("größer_als", 4), "grö…");
  EXPECT_EQ(ShortRunId("20261121-103512-3fa9c1"), "…3fa9c1");
  EXPECT_EQ(ShortRunId("r1"), "r1");
  EXPECT_EQ(ShortRunId("a-long-id-ending-"), "a-long-id-ending-");
}

TEST(BenchHtml, AFileMissingItsFieldsStillRendersAPage) {
  // A bench.json from another version, or cut short: every field the page reads may be missing.
  const nlohmann::json bare = {{"tasks", {{{"task", "relu"}}}}};
  const std::string html = BenchHtml(bare);
  EXPECT_NE(html.find("<h1>"), std::string::npos);
  EXPECT_NE(html.find("relu"), std::string::npos);
  EXPECT_NE(BenchHtml(nlohmann::json::object()).find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
