// The benchmark's report for people: one self-contained HTML file (inline CSS and SVG, no
// scripts or fonts fetched from anywhere) with the summary, three charts and the per-task table,
// readable offline and laid out for a 1280 px window: no sideways scrolling, run ids on one line.
// The charts (bench_html_charts.h): each task's best speedup with its 95% interval, coloured by
// how the interval compares with 1x and explained by a legend; the fast_p curve; and the best
// kernels' position against the measured roofline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

/// `bench` as BenchJson() makes it.
std::string BenchHtml(const nlohmann::json& bench);

}  // namespace ksmith
