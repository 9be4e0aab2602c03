// The benchmark's report for people: one self-contained HTML file (inline CSS and SVG, no
// scripts or fonts fetched from anywhere) with the summary, three charts and the per-task table,
// readable offline. The charts: the fast_p curve, the distribution of best speedups, and the best
// kernels' position against the measured roofline.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

/// `bench` as BenchJson() makes it.
std::string BenchHtml(const nlohmann::json& bench);

}  // namespace ksmith
