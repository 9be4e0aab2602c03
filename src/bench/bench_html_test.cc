#include "bench/bench_html.h"

#include <gtest/gtest.h>

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

TEST(BenchHtml, ThreeChartsAndATableWithEscapedNames) {
  BenchTaskResult fast{"soft<max>", "r1", "", {SampleFromVerdict(Passed(3.0, 0.5))}, 0, 0, 1, 1};
  BenchTaskResult slow{"relu", "r2", "", {SampleFromVerdict(Passed(0.5, 0.2))}, 0, 0, 1, 1};
  BenchTaskResult broken{"gelu", "", "optimize ended with exit code 3", {}, 0, 0, 0, 0};
  const std::string html =
      BenchHtml(BenchJson({"mini", "cpu", "tune", 1, 1, {{"cpu", "A <fast> CPU"}, {"cores", 16}}}, {fast, slow, broken}));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(Count(html, "<svg "), 3u);
  EXPECT_NE(html.find("id=\"fast-p\""), std::string::npos);
  EXPECT_NE(html.find("id=\"speedups\""), std::string::npos);
  EXPECT_NE(html.find("id=\"roofline\""), std::string::npos);
  EXPECT_EQ(Count(html, "<polyline"), 1u);              // the fast_p curve
  EXPECT_EQ(Count(html, "<rect "), 2u);                 // one bar per task with a correct kernel
  EXPECT_NE(html.find("class=\"bar slower\""), std::string::npos);  // 0.5x is drawn as slower
  EXPECT_NE(html.find("soft&lt;max&gt;"), std::string::npos);
  EXPECT_EQ(html.find("soft<max>"), std::string::npos);
  EXPECT_NE(html.find("<li>machine: A &lt;fast&gt; CPU, 16 cores</li>"), std::string::npos);
  EXPECT_NE(html.find("error: optimize ended with exit code 3"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);   // self-contained and static
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // nothing fetched
}

}  // namespace
}  // namespace ksmith
