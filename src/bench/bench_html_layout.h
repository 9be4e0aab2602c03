// The HTML report's geometry, apart from its markup so that it can be checked by itself: how a
// task's best speedup compares with the baseline (which sets its colour), the log-scaled speedup
// axis, where a bar and its 95% interval whisker go, and which labels fit without overlapping.
// Every length here is in CSS pixels of the chart's own coordinates.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

/// A task's best kernel against the baseline, by its speedup's 95% interval, as a verdict's
/// `comparison` reads it (docs/verdict.md): faster when the low end is above 1, slower when the
/// high end is below 1, a tie otherwise. The point estimate alone never decides: 0.96x
/// [0.92, 1.09] is a tie.
enum class SpeedupComparison {
  kFaster,
  kTie,
  kSlower,
  kNoInterval,  // a correct kernel, but no interval to compare by (or no speedup timed alone)
  kFailed,      // no correct kernel, or the task could not run
};

/// `task` as BenchJson() writes it (best_speedup, best_speedup_ci95, correct_rate, error).
SpeedupComparison CompareWithBaseline(const nlohmann::json& task);

/// The CSS class of the comparison's colour: "faster", "tie", "slower", "no-interval", "failed".
const char* ComparisonClass(SpeedupComparison comparison);

/// What the legend and the table say: "faster", "tie", "slower", "no interval", "no kernel" (no correct one).
const char* ComparisonWords(SpeedupComparison comparison);

/// A log-scaled speedup axis from `low` to `high` (both > 0) drawn over [start_px, end_px].
struct LogAxis {
  double low = 0.5;
  double high = 2;
  double start_px = 0;
  double end_px = 100;

  /// An axis from a power of two at or below the smallest value (and 0.5) to one at or above the
  /// largest (and 2), so that 1x is always inside and the ticks land on round values.
  static LogAxis Spanning(const std::vector<double>& values, double start_px, double end_px);

  double Px(double value) const;
  /// The powers of two from low to high, every other one (or every fourth) when there are many.
  std::vector<double> Ticks() const;
};

/// "0.5x", "1x", "16x", "0.125x".
std::string TickText(double value);

/// Shortest bar: a 0.99x bar is a hairline on any log scale, but must be seen (and its colour).
constexpr double kMinBarPx = 4;
/// Shortest whisker: an interval that rounds to a point still shows where it is.
constexpr double kMinWhiskerPx = 3;

/// One task's marks along the speedup axis.
struct SpeedupMarks {
  double bar_from_px = 0;  // the bar runs from the 1x line towards the estimate ...
  double bar_to_px = 0;    // ... at least kMinBarPx long, on the estimate's side of 1x
  std::optional<double> whisker_low_px;  // the 95% interval, when known: at least kMinWhiskerPx long
  std::optional<double> whisker_high_px;
};

SpeedupMarks PlaceSpeedupMarks(const LogAxis& axis, double speedup, std::optional<double> low,
                               std::optional<double> high);

/// A laid-out box: x, y its top left corner.
struct LabelBox {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;

  bool Overlaps(const LabelBox& other) const;
};

/// A generous estimate of `text`'s width in a sans-serif font of `font_px` (Chromium's DejaVu
/// Sans is wider than Arial): an overestimate only leaves out a label that would have fitted.
double TextWidthPx(std::string_view text, double font_px);

/// Places labels in order of priority: each takes the first of its candidate boxes that lies
/// inside `area` and overlaps no label placed before it and no obstacle (the marks). nullopt: the
/// label is left out, and its point keeps its tooltip and its row in the table.
std::vector<std::optional<size_t>> PlaceLabels(const std::vector<std::vector<LabelBox>>& candidates,
                                               const LabelBox& area, const std::vector<LabelBox>& obstacles = {});

/// `text` cut to `max_chars` characters (UTF-8 aware), ending in "…" when cut.
std::string Shorten(const std::string& text, size_t max_chars);

/// A run id as the table shows it: "20261121-103512-3fa9c1" is "…3fa9c1", the part that differs
/// between runs of one bench (the full id goes in the cell's title). Short or other ids unchanged.
std::string ShortRunId(const std::string& run_id);

}  // namespace ksmith
