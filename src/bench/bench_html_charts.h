// The HTML report's charts, each one inline SVG with a visible title, labelled axes with values
// on them, and labels placed so that none overlaps another (bench_html_layout.h):
// - "speedups": each task's best speedup as a bar from the 1x line on a log scale, its 95%
//   interval as a whisker, coloured by how the interval compares with 1; task names on a list
//   axis, one row per task, so that they never collide;
// - "fast-p": the fast_p curve over the thresholds p;
// - "roofline": each best kernel's speedup against the fraction of the measured roofline it reaches.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

/// `text` safe inside HTML and SVG text and attributes.
std::string HtmlEscape(const std::string& text);

/// `tasks`: BenchJson()'s task list.
std::string SpeedupChart(const nlohmann::json& tasks);

/// `fast_p`: BenchJson()'s summary.fast_p, {"0": share, "0.5": share, ...}.
std::string FastPChart(const nlohmann::json& fast_p);

std::string RooflineChart(const nlohmann::json& tasks);

/// What the colours of the speedup and roofline charts mean, as an HTML list with swatches.
std::string ComparisonLegend();

}  // namespace ksmith
