#include "bench/bench_html.h"

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_summary.h"

namespace ksmith {
namespace {

constexpr int kWidth = 520;
constexpr int kHeight = 300;
constexpr int kMargin = 48;

std::string Escape(const std::string& text) {
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

double Number(const nlohmann::json& value, double fallback = 0) { return value.is_number() ? value.get<double>() : fallback; }

// Axes and a title; the plot area is [kMargin, kWidth - 16] x [16, kHeight - kMargin].
std::string Frame(const std::string& id, const std::string& title, const std::string& x_label, const std::string& y_label) {
  return fmt::format(
      "<svg id=\"{0}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1}\" height=\"{2}\" "
      "viewBox=\"0 0 {1} {2}\" role=\"img\" aria-label=\"{3}\"><title>{3}</title>"
      "<line x1=\"{4}\" y1=\"{5}\" x2=\"{6}\" y2=\"{5}\" class=\"axis\"/>"
      "<line x1=\"{4}\" y1=\"16\" x2=\"{4}\" y2=\"{5}\" class=\"axis\"/>"
      "<text x=\"{7}\" y=\"{8}\" class=\"label\" text-anchor=\"middle\">{9}</text>"
      "<text x=\"14\" y=\"{10}\" class=\"label\" text-anchor=\"middle\" transform=\"rotate(-90 14 {10})\">{11}</text>",
      id, kWidth, kHeight, Escape(title), kMargin, kHeight - kMargin, kWidth - 16, (kWidth + kMargin) / 2, kHeight - 8,
      Escape(x_label), (kHeight - kMargin + 16) / 2, Escape(y_label));
}

double PlotX(double fraction) { return kMargin + fraction * (kWidth - 16 - kMargin); }
double PlotY(double fraction) { return (kHeight - kMargin) - fraction * (kHeight - kMargin - 16); }

std::string FastPChart(const nlohmann::json& fast_p) {
  std::vector<std::pair<double, double>> points;
  for (const auto& [p, value] : fast_p.items()) points.emplace_back(std::stod(p), Number(value));
  std::sort(points.begin(), points.end());
  const double max_p = points.empty() ? 1 : std::max(points.back().first, 1e-9);
  std::string svg = Frame("fast-p", "fast_p: share of tasks faster than p x the baseline", "p", "fast_p");
  std::string polyline;
  for (const auto& [p, value] : points) {
    const double x = PlotX(p / max_p), y = PlotY(value);
    polyline += fmt::format("{:.1f},{:.1f} ", x, y);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" class=\"point\"><title>fast_{:g} = {:.0f}%</title></circle>"
                       "<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{:g}</text>",
                       x, y, p, 100 * value, x, kHeight - kMargin + 16, p);
  }
  for (double tick : {0.0, 0.5, 1.0}) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.0f}%</text>", kMargin - 4,
                       PlotY(tick) + 4, 100 * tick);
  }
  svg += fmt::format("<polyline points=\"{}\" class=\"line\"/></svg>", polyline);
  return svg;
}

// Best speedup per task as bars on a log scale, sorted, with the 1x line.
std::string SpeedupChart(const nlohmann::json& tasks) {
  std::vector<std::pair<double, std::string>> bars;
  for (const auto& task : tasks) {
    if (task["best_speedup"].is_number()) bars.emplace_back(task["best_speedup"].get<double>(), task["task"].get<std::string>());
  }
  std::sort(bars.begin(), bars.end());
  double low = 0.5, high = 2;
  for (const auto& [speedup, name] : bars) {
    low = std::min(low, speedup);
    high = std::max(high, speedup);
  }
  const double log_low = std::log10(low) - 0.05, log_high = std::log10(high) + 0.05;
  auto y_of = [&](double value) { return PlotY((std::log10(value) - log_low) / (log_high - log_low)); };
  std::string svg = Frame("speedups", "Best speedup per task (log scale)", "tasks, sorted", "speedup");
  const double width = bars.empty() ? 0 : (kWidth - 16 - kMargin) / static_cast<double>(bars.size());
  for (size_t i = 0; i < bars.size(); ++i) {
    const double top = y_of(bars[i].first), base = y_of(1.0);
    svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" class=\"{}\">"
                       "<title>{}: {:.2f}x</title></rect>",
                       kMargin + i * width + 1, std::min(top, base), std::max(1.0, width - 2), std::abs(base - top),
                       bars[i].first >= 1 ? "bar" : "bar slower", Escape(bars[i].second), bars[i].first);
    // The task's name under its bar, slanted so that long names of neighbours do not overlap.
    const double center = kMargin + (i + 0.5) * width;
    svg += fmt::format("<text x=\"{0:.1f}\" y=\"{1}\" class=\"tick task-label\" text-anchor=\"end\" "
                       "transform=\"rotate(-30 {0:.1f} {1})\">{2}</text>",
                       center, kHeight - kMargin + 12, Escape(bars[i].second));
  }
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"unit\"/>", kMargin, y_of(1.0),
                     kWidth - 16, y_of(1.0));
  for (double tick : {low, 1.0, high}) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick\" text-anchor=\"end\">{:.2g}x</text>", kMargin - 4,
                       y_of(tick) + 4, tick);
  }
  return svg + "</svg>";
}

// Each task's best kernel: speedup (log) against the fraction of the roofline it reaches.
std::string RooflineChart(const nlohmann::json& tasks) {
  std::vector<std::tuple<double, double, std::string>> points;
  double low = 0.5, high = 2, top = 1;
  for (const auto& task : tasks) {
    if (!task["best_speedup"].is_number() || !task["best_roofline_fraction"].is_number()) continue;
    points.emplace_back(task["best_speedup"].get<double>(), task["best_roofline_fraction"].get<double>(),
                        task["task"].get<std::string>());
    low = std::min(low, std::get<0>(points.back()));
    high = std::max(high, std::get<0>(points.back()));
    top = std::max(top, std::get<1>(points.back()));
  }
  const double log_low = std::log10(low) - 0.05, log_high = std::log10(high) + 0.05;
  std::string svg = Frame("roofline", "Best kernels against the measured roofline", "speedup (log scale)",
                          "fraction of roofline");
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"unit\"/>", kMargin, PlotY(1 / top),
                     kWidth - 16, PlotY(1 / top));
  for (const auto& [speedup, fraction, name] : points) {
    const double x = PlotX((std::log10(speedup) - log_low) / (log_high - log_low)), y = PlotY(fraction / top);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" class=\"point\"><title>{}: {:.2f}x, {:.0f}% of the "
                       "roofline</title></circle><text x=\"{:.1f}\" y=\"{:.1f}\" class=\"tick\">{}</text>",
                       x, y, Escape(name), speedup, 100 * fraction, x + 7, y - 6, Escape(name));
  }
  // Values on both axes: the speedups at the ends and 1x, the fractions 0%, 50% and 100%.
  for (double tick : {low, 1.0, high}) {
    const double x = PlotX((std::log10(tick) - log_low) / (log_high - log_low));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick axis-value\" text-anchor=\"middle\">{:.2g}x</text>", x,
                       kHeight - kMargin + 16, tick);
  }
  for (double fraction : {0.0, 0.5, 1.0}) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"tick axis-value\" text-anchor=\"end\">{:.0f}%</text>",
                       kMargin - 4, PlotY(fraction / top) + 4, 100 * fraction);
  }
  return svg + "</svg>";
}

std::string Percent(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.0f}%", 100 * value.get<double>()) : "-";
}

}  // namespace

std::string BenchHtml(const nlohmann::json& bench) {
  const auto& settings = bench["settings"];
  const auto& summary = bench["summary"];
  const std::string title = fmt::format("ksmith bench: {} on {}, {} strategy", settings.value("suite", ""),
                                        settings.value("backend", ""), settings.value("strategy", ""));
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + Escape(title) +
                     "</title><style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
                     "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
                     "th:first-child,td:first-child,td.words{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:16px}"
                     ".axis{stroke:#444}.unit{stroke:#999;stroke-dasharray:4 3}.line{fill:none;stroke:#2563eb;stroke-width:2}"
                     ".point{fill:#2563eb}.bar{fill:#16a34a}.bar.slower{fill:#dc2626}.label{font-size:12px}"
                     ".tick{font-size:10px;fill:#444}</style></head><body>\n";
  html += "<h1>" + Escape(title) + "</h1>\n<ul>";
  if (const std::string machine = DescribeMachine(settings.value("machine", nlohmann::json())); !machine.empty()) {
    html += "<li>machine: " + Escape(machine) + "</li>";
  }
  html += fmt::format("<li>tasks: {}, candidates: {}, samples per task: {}</li>", summary["tasks"].dump(),
                      summary["candidates"].dump(), settings["samples"].dump());
  html += fmt::format("<li>pass@1: {}; compile rate {}, correct rate {}</li>", Percent(summary["pass_at_1"]),
                      Percent(summary["compile_rate"]), Percent(summary["correct_rate"]));
  if (summary["geomean_speedup"].is_number()) {
    html += fmt::format("<li>geometric-mean speedup: {:.2f}x [{:.2f}, {:.2f}] over {} tasks</li>",
                        Number(summary["geomean_speedup"]), Number(summary["geomean_speedup_ci95"][0]),
                        Number(summary["geomean_speedup_ci95"][1]), summary["geomean_tasks"].dump());
  }
  html += fmt::format("<li>fast_1: {} (a speedup counts only when its 95% interval clears p)</li>", Percent(summary["fast_1"]));
  html += fmt::format("<li>tokens {}, cost ${:.4f}, evaluator time {:.1f} s, wall time {:.1f} s</li></ul>\n",
                      summary["tokens"].dump(), Number(summary["cost"]), Number(summary["device_s"]),
                      Number(summary["wall_s"]));
  html += "<div class=\"charts\">" + FastPChart(summary["fast_p"]) + SpeedupChart(bench["tasks"]) +
          RooflineChart(bench["tasks"]) + "</div>\n";
  html += "<h2>Tasks</h2><table><tr><th>task</th><th>samples</th><th>correct</th><th>pass@1</th>"
          "<th>best speedup [95% interval]</th><th>speedup@1</th><th>efficiency@1</th><th>best kernel</th><th>run</th></tr>\n";
  for (const auto& task : bench["tasks"]) {
    auto first = [](const nlohmann::json& list) { return list.empty() ? nlohmann::json() : list[0]; };
    const std::string error = task.value("error", std::string());
    const std::string kernel = task.value("best_kernel", std::string());
    std::string best = "-";
    if (!kernel.empty()) {
      best = fmt::format("<a class=\"best-kernel\" href=\"{}\">{}</a>", Escape(kernel),
                         Escape(std::filesystem::path(kernel).filename().string()));
      if (const auto knobs = task.value("best_knobs", nlohmann::json::object()); !knobs.empty()) {
        best += " <code>" + Escape(knobs.dump()) + "</code>";
      }
      if (const std::string words = task.value("best_explanation", std::string()); !words.empty()) {
        best += "<br><small>" + Escape(words) + "</small>";
      }
    }
    html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"best-speedup\">{}</td><td>{}</td><td>{}</td><td class=\"words\">{}</td><td>{}</td></tr>\n",
                        Escape(task.value("task", std::string())), task["samples"].dump(), Percent(task["correct_rate"]),
                        Percent(first(task["pass_at_k"])), SpeedupWithInterval(task),
                        first(task["speedup_at_k"]).is_number() ? fmt::format("{:.2f}x", first(task["speedup_at_k"]).get<double>()) : "-",
                        Percent(first(task["efficiency_at_k"])), best,
                        Escape(error.empty() ? task.value("run_id", std::string()) : "error: " + error));
  }
  return html + "</table></body></html>\n";
}

}  // namespace ksmith
