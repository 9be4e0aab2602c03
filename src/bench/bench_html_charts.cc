#include "bench/bench_html_charts.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_html_layout.h"
#include "bench/bench_summary.h"

namespace ksmith {
namespace {

// The speedup chart spans the page; the other two sit side by side under it (1080 px in all,
// inside a 1280 px window with the page's margins).
constexpr double kWideWidthPx = 1080;
constexpr double kNameColumnPx = 210;   // task names, right-aligned against the plot
constexpr double kValueColumnPx = 170;  // "12.34x [11.00, 13.50]" after the plot
constexpr double kRowPx = 22;
constexpr double kBarPx = 12;
constexpr double kCapPx = 10;           // the whisker's end caps
constexpr double kSmallWidthPx = 530;
constexpr double kSmallHeightPx = 320;
constexpr double kTickFontPx = 11;
constexpr double kNameFontPx = 12;

// The plot area of the two small charts: room on the left for values and the rotated axis title,
// above for the chart's title, below for values and the axis title.
constexpr double kPlotLeftPx = 62, kPlotRightPx = kSmallWidthPx - 24, kPlotTopPx = 46,
                 kPlotBottomPx = kSmallHeightPx - 54;
// The x values' baseline below the axis: far enough that "0x" clears the y axis's "0%".
constexpr double kXTickDropPx = 19;

double Number(const nlohmann::json& value, double fallback = 0) { return value.is_number() ? value.get<double>() : fallback; }

// `task[key]`, or null where a file written by another version lacks it (a const json's [] on a
// missing key is undefined).
const nlohmann::json& Field(const nlohmann::json& task, const char* key) {
  static const nlohmann::json kNull;
  const auto found = task.find(key);
  return found == task.end() ? kNull : *found;
}

// The svg element and its visible title; the <title> child is what screen readers announce.
std::string Open(const std::string& id, double width_px, double height_px, const std::string& title) {
  return fmt::format("<svg id=\"{0}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1:g}\" "
                     "height=\"{2:g}\" viewBox=\"0 0 {1:g} {2:g}\" role=\"img\" aria-label=\"{3}\"><title>{3}</title>"
                     "<text x=\"4\" y=\"22\" class=\"chart-title\">{3}</text>",
                     id, width_px, height_px, HtmlEscape(title));
}

// A shortened name's full text is in the tooltip of its row or point, not of the text itself.
std::string Text(double x, double y, const std::string& css_class, const std::string& anchor, const std::string& text) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"{}\" text-anchor=\"{}\">{}</text>", x, y, css_class,
                     anchor, HtmlEscape(text));
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& css_class) {
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" class=\"{}\"/>", x1, y1, x2, y2,
                     css_class);
}

// The small charts' axes: the two axis lines and their titles.
std::string SmallAxes(const std::string& x_title, const std::string& y_title) {
  const double middle_y = (kPlotTopPx + kPlotBottomPx) / 2;
  return Line(kPlotLeftPx, kPlotBottomPx, kPlotRightPx, kPlotBottomPx, "axis") +
         Line(kPlotLeftPx, kPlotTopPx, kPlotLeftPx, kPlotBottomPx, "axis") +
         Text((kPlotLeftPx + kPlotRightPx) / 2, kSmallHeightPx - 10, "axis-title", "middle", x_title) +
         fmt::format("<text x=\"16\" y=\"{0:.1f}\" class=\"axis-title\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 16 {0:.1f})\">{1}</text>",
                     middle_y, HtmlEscape(y_title));
}

// Percent ticks with grid lines on the small charts' y axis, for shares from 0 to `top`.
std::string PercentTicks(double top) {
  std::string svg;
  for (double share = 0; share <= top + 1e-9; share += top > 1.5 ? 0.5 : 0.25) {
    const double y = kPlotBottomPx - share / top * (kPlotBottomPx - kPlotTopPx);
    if (share > 0) svg += Line(kPlotLeftPx, y, kPlotRightPx, y, "grid");
    svg += Text(kPlotLeftPx - 6, y + 4, "tick axis-value", "end", fmt::format("{:.0f}%", 100 * share));
  }
  return svg;
}

struct Row {
  const nlohmann::json* task;
  SpeedupComparison comparison;
  double speedup;  // 0 without one: those rows go last
};

std::string SpeedupRow(const Row& row, const LogAxis& axis, double center_y) {
  const nlohmann::json& task = *row.task;
  const std::string name = task.value("task", std::string());
  const std::string css = ComparisonClass(row.comparison);
  std::string svg = fmt::format("<g class=\"task-row {}\" data-task=\"{}\"><title>{}: {}, {}</title>", css,
                                HtmlEscape(name), HtmlEscape(name), SpeedupWithInterval(task),
                                ComparisonWords(row.comparison));
  // Longer names are cut to what the column holds; the row's tooltip has the whole name.
  const auto name_chars = static_cast<size_t>((kNameColumnPx - 12) / TextWidthPx("x", kNameFontPx));
  svg += Text(kNameColumnPx - 8, center_y + 4, "task-label", "end", Shorten(name, name_chars));
  const double value_x = axis.end_px + 12;
  if (!Field(task, "best_speedup").is_number()) {
    // No bar to draw: a band across the plot says so, in the row's own colour.
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:g}\" class=\"band {}\"/>",
                       axis.start_px, center_y - kBarPx / 2, axis.end_px - axis.start_px, kBarPx, css);
    const std::string words = !task.value("error", std::string()).empty() ? "could not run"
                              : row.comparison == SpeedupComparison::kFailed ? "no correct kernel"
                                                                               : "correct, not timed alone";
    return svg + Text(value_x, center_y + 4, "value-label " + css, "start", words) + "</g>";
  }
  std::optional<double> low, high;
  if (const auto& interval = Field(task, "best_speedup_ci95"); interval.is_array() && interval.size() == 2 &&
                                                         interval[0].is_number() && interval[1].is_number()) {
    low = interval[0].get<double>();
    high = interval[1].get<double>();
  }
  const SpeedupMarks marks = PlaceSpeedupMarks(axis, row.speedup, low, high);
  svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:g}\" class=\"bar {}\"/>",
                     std::min(marks.bar_from_px, marks.bar_to_px), center_y - kBarPx / 2,
                     std::abs(marks.bar_to_px - marks.bar_from_px), kBarPx, css);
  if (marks.whisker_low_px && marks.whisker_high_px) {
    // One path: the interval's line and a cap at each end.
    svg += fmt::format("<path class=\"whisker\" d=\"M{0:.1f},{2:.1f}V{3:.1f}M{0:.1f},{4:.1f}H{1:.1f}M{1:.1f},{2:.1f}V{3:.1f}\"/>",
                       *marks.whisker_low_px, *marks.whisker_high_px, center_y - kCapPx / 2, center_y + kCapPx / 2,
                       center_y);
  }
  return svg + Text(value_x, center_y + 4, "value-label", "start", SpeedupWithInterval(task)) + "</g>";
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '&': escaped += "&amp;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string SpeedupChart(const nlohmann::json& tasks) {
  std::vector<Row> rows;
  std::vector<double> extent;  // every estimate and interval end, so that each whisker fits
  for (const auto& task : tasks) {
    rows.push_back({&task, CompareWithBaseline(task), Number(Field(task, "best_speedup"))});
    if (Field(task, "best_speedup").is_number()) extent.push_back(rows.back().speedup);
    if (const auto& interval = Field(task, "best_speedup_ci95"); interval.is_array()) {
      for (const auto& end : interval) extent.push_back(Number(end));
    }
  }
  // Fastest on top, the tasks without a speedup last, each group in the suite's order.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.speedup > b.speedup; });
  constexpr double kTopTicksY = 48, kRowsTop = 58;
  const double rows_bottom = kRowsTop + kRowPx * static_cast<double>(std::max<size_t>(rows.size(), 1));
  const double height = rows_bottom + 50;
  const LogAxis axis = LogAxis::Spanning(extent, kNameColumnPx, kWideWidthPx - kValueColumnPx);
  std::string svg = Open("speedups", kWideWidthPx, height, "Best speedup per task, with its 95% interval");
  for (double tick : axis.Ticks()) {
    const double x = axis.Px(tick);
    svg += Line(x, kRowsTop - 4, x, rows_bottom + 4, tick == 1 ? "unit" : "grid");
    svg += Text(x, kTopTicksY, "tick axis-value", "middle", TickText(tick));
    svg += Text(x, rows_bottom + 18, "tick axis-value", "middle", TickText(tick));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    svg += SpeedupRow(rows[i], axis, kRowsTop + kRowPx * (static_cast<double>(i) + 0.5));
  }
  if (rows.empty()) svg += Text((axis.start_px + axis.end_px) / 2, kRowsTop + 15, "value-label", "middle", "no tasks");
  svg += Text((axis.start_px + axis.end_px) / 2, height - 8, "axis-title", "middle",
              "speedup over the baseline (log scale; bars start at 1x, the same speed)");
  return svg + "</svg>";
}

std::string FastPChart(const nlohmann::json& fast_p) {
  std::vector<std::pair<double, double>> points;
  for (const auto& [p, value] : fast_p.items()) points.emplace_back(std::stod(p), Number(value));
  std::sort(points.begin(), points.end());
  const double max_p = points.empty() ? 1 : std::max(points.back().first, 1e-9);
  auto x_of = [&](double p) { return kPlotLeftPx + p / max_p * (kPlotRightPx - kPlotLeftPx); };
  auto y_of = [&](double share) { return kPlotBottomPx - share * (kPlotBottomPx - kPlotTopPx); };
  std::string svg = Open("fast-p", kSmallWidthPx, kSmallHeightPx, "fast_p: share of tasks reliably faster than p");
  svg += PercentTicks(1) + SmallAxes("p: speedup threshold over the baseline", "share of tasks");
  // The thresholds as x values (thinned where they crowd), each point's share above it.
  std::vector<std::vector<LabelBox>> ticks, values;
  std::vector<LabelBox> obstacles;
  for (const auto& [p, share] : points) {
    const std::string tick = TickText(p), value = fmt::format("{:.0f}%", 100 * share);
    const double tick_width = TextWidthPx(tick, kTickFontPx), value_width = TextWidthPx(value, kTickFontPx);
    ticks.push_back({{x_of(p) - tick_width / 2, kPlotBottomPx + kXTickDropPx - 11, tick_width, 14}});
    // Above the point, or beside it where the centred label would leave the plot, then below.
    values.push_back({{x_of(p) - value_width / 2, y_of(share) - 22, value_width, 14},
                      {x_of(p) + 6, y_of(share) - 20, value_width, 14},
                      {x_of(p) - 6 - value_width, y_of(share) - 20, value_width, 14},
                      {x_of(p) - value_width / 2, y_of(share) + 8, value_width, 14}});
    obstacles.push_back({x_of(p) - 4, y_of(share) - 4, 8, 8});
  }
  const auto tick_at = PlaceLabels(ticks, {0, 0, kSmallWidthPx, kSmallHeightPx});
  const auto value_at = PlaceLabels(values, {kPlotLeftPx, 30, kPlotRightPx - kPlotLeftPx, kPlotBottomPx - 30}, obstacles);
  std::string polyline;
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& [p, share] = points[i];
    const double x = x_of(p), y = y_of(share);
    polyline += fmt::format("{:.1f},{:.1f} ", x, y);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"point\"><title>fast_{:g} = {:.0f}%</title></circle>",
                       x, y, p, 100 * share);
    if (tick_at[i]) svg += Text(x, kPlotBottomPx + kXTickDropPx, "tick axis-value", "middle", TickText(p));
    if (value_at[i]) {
      const LabelBox& box = values[i][*value_at[i]];
      svg += Text(box.x, box.y + 11, "tick point-label", "start", fmt::format("{:.0f}%", 100 * share));
    }
  }
  return svg + fmt::format("<polyline points=\"{}\" class=\"line\"/></svg>", polyline);
}

std::string RooflineChart(const nlohmann::json& tasks) {
  std::vector<std::tuple<double, double, std::string, SpeedupComparison>> points;
  std::vector<double> speedups;
  double top = 1;
  for (const auto& task : tasks) {
    if (!Field(task, "best_speedup").is_number() || !Field(task, "best_roofline_fraction").is_number()) continue;
    points.emplace_back(Field(task, "best_speedup").get<double>(), Field(task, "best_roofline_fraction").get<double>(),
                        task.value("task", std::string()), CompareWithBaseline(task));
    speedups.push_back(std::get<0>(points.back()));
    top = std::max(top, std::get<1>(points.back()));
  }
  top = std::ceil(top * 4) / 4;
  // The fastest first: they take the label places before the crowd near 1x.
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  const LogAxis axis = LogAxis::Spanning(speedups, kPlotLeftPx + 12, kPlotRightPx - 12);
  auto y_of = [&](double fraction) { return kPlotBottomPx - fraction / top * (kPlotBottomPx - kPlotTopPx); };
  std::string svg = Open("roofline", kSmallWidthPx, kSmallHeightPx, "Best kernels against the measured roofline");
  svg += PercentTicks(top) + SmallAxes("speedup over the baseline (log scale)", "fraction of the roofline");
  for (double tick : axis.Ticks()) {
    svg += Line(axis.Px(tick), kPlotTopPx, axis.Px(tick), kPlotBottomPx, tick == 1 ? "unit" : "grid");
    svg += Text(axis.Px(tick), kPlotBottomPx + kXTickDropPx, "tick axis-value", "middle", TickText(tick));
  }
  std::vector<std::vector<LabelBox>> labels;
  std::vector<LabelBox> obstacles;
  for (const auto& [speedup, fraction, name, comparison] : points) {
    const double x = axis.Px(speedup), y = y_of(fraction), width = TextWidthPx(Shorten(name, 20), kTickFontPx);
    labels.push_back({{x + 8, y - 7, width, 14}, {x - 8 - width, y - 7, width, 14}, {x - width / 2, y - 22, width, 14},
                      {x - width / 2, y + 8, width, 14}});
    obstacles.push_back({x - 5, y - 5, 10, 10});
  }
  const auto label_at = PlaceLabels(labels, {kPlotLeftPx + 2, kPlotTopPx - 14, kPlotRightPx - kPlotLeftPx, kPlotBottomPx - kPlotTopPx + 12}, obstacles);
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& [speedup, fraction, name, comparison] = points[i];
    const double x = axis.Px(speedup), y = y_of(fraction);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" class=\"point {}\"><title>{}: {:.2f}x, {:.0f}% of the "
                       "roofline, {}</title></circle>",
                       x, y, ComparisonClass(comparison), HtmlEscape(name), speedup, 100 * fraction,
                       ComparisonWords(comparison));
    if (label_at[i]) {
      const LabelBox& box = labels[i][*label_at[i]];
      svg += Text(box.x, box.y + 11, "tick point-label", "start", Shorten(name, 20));
    }
  }
  return svg + "</svg>";
}

std::string ComparisonLegend() {
  std::string html = "<ul class=\"legend\" aria-label=\"what the colours mean\">";
  const std::pair<SpeedupComparison, const char*> entries[] = {
      {SpeedupComparison::kFaster, "faster: the whole 95% interval is above 1x"},
      {SpeedupComparison::kTie, "tie: the interval contains 1x (not told apart from the baseline)"},
      {SpeedupComparison::kSlower, "slower: the whole interval is below 1x"},
      {SpeedupComparison::kNoInterval, "no interval: a correct kernel whose speedup has no interval"},
      {SpeedupComparison::kFailed, "no correct kernel (or the task could not run)"}};
  for (const auto& [comparison, words] : entries) {
    html += fmt::format("<li class=\"legend-{0}\"><svg class=\"swatch\" width=\"18\" height=\"12\" "
                        "xmlns=\"http://www.w3.org/2000/svg\"><rect x=\"0.5\" y=\"0.5\" width=\"17\" height=\"11\" "
                        "class=\"bar {0}\"/></svg> {1}</li>",
                        ComparisonClass(comparison), HtmlEscape(words));
  }
  return html + "<li><svg class=\"swatch\" width=\"18\" height=\"12\" xmlns=\"http://www.w3.org/2000/svg\">"
                "<path class=\"whisker\" d=\"M2,1V11M2,6H16M16,1V11\"/></svg> the 95% interval of the best kernel's speedup</li></ul>";
}

}  // namespace ksmith
