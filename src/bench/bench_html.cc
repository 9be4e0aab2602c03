#include "bench/bench_html.h"

#include <filesystem>

#include <fmt/format.h>

#include "bench/bench_html_charts.h"
#include "bench/bench_html_layout.h"
#include "bench/bench_summary.h"

namespace ksmith {
namespace {

// The comparison colours are a colour-blind-safe pair (Dark2's green and orange) with grey for a
// tie; the words beside each bar and in the table say the same, for anyone who cannot tell them.
constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1120px;margin:1.5em auto;padding:0 16px;color:#222;line-height:1.4}"
    "h1{font-size:1.6em}h2{margin-top:1.6em}figure{margin:0 0 1em}"
    "figcaption{font-size:13px;color:#555;max-width:1080px}.charts{display:flex;flex-wrap:wrap;gap:20px}"
    ".charts figcaption{max-width:530px}svg.chart{display:block;max-width:100%;height:auto}"
    ".chart-title{font-size:15px;font-weight:bold;fill:#222}.axis-title{font-size:12px;fill:#333}"
    ".tick{font-size:11px;fill:#444}.task-label{font-size:12px;fill:#222}.value-label{font-size:11px;fill:#333}"
    ".value-label.failed,.value-label.no-interval{fill:#777;font-style:italic}"
    ".axis{stroke:#444}.grid{stroke:#e4e4e4}.unit{stroke:#555;stroke-dasharray:4 3}"
    ".line{fill:none;stroke:#4a5d8c;stroke-width:2}.point{fill:#4a5d8c}"
    // Only marks take a comparison's colour: a row's group and its texts carry the class too, and
    // a stroke there would outline the text.
    ".bar.faster,.point.faster{fill:#1b9e77}.bar.tie,.point.tie{fill:#a3a3a3}.bar.slower,.point.slower{fill:#d95f02}"
    ".bar.no-interval,.band.no-interval,.point.no-interval{fill:#fff;stroke:#555}"
    ".bar.failed,.band.failed{fill:#f0f0f0;stroke:#aaa;stroke-dasharray:3 2}.task-row.failed .task-label{fill:#777}"
    ".whisker{fill:none;stroke:#111;stroke-width:1.5}"
    ".legend{list-style:none;padding:0;margin:0 0 8px;display:flex;flex-wrap:wrap;gap:4px 20px;font-size:13px}"
    ".legend li{white-space:nowrap}.swatch{vertical-align:-1px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}th{background:#f4f4f4}"
    "th:first-child,th.words{text-align:left}td{white-space:nowrap}td.task,td.words{text-align:left;white-space:normal}"
    // The two columns of words share what the figures leave of 1280 px: a task's name keeps 11em
    // (about 20 characters) and breaks beyond; knobs' JSON has no spaces, so it breaks anywhere.
    "td.task{overflow-wrap:anywhere;min-width:11em}td.words{overflow-wrap:anywhere;min-width:14em}td.run code{font-size:13px}"
    "span.tag{padding:0 5px;border-radius:3px;color:#fff}span.tag.tie{color:#222}"
    "span.tag.faster{background:#1b9e77}span.tag.tie{background:#d6d6d6}span.tag.slower{background:#d95f02}"
    "span.tag.no-interval,span.tag.failed{color:#555;font-style:italic}";

// A field of a bench.json object, null where it is missing (a file written by another version):
// const json's operator[] on a missing key is undefined.
const nlohmann::json& Field(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto found = object.find(key);
  return found == object.end() ? kNull : *found;
}

const nlohmann::json& At(const nlohmann::json& list, size_t index) {
  static const nlohmann::json kNull;
  return list.is_array() && index < list.size() ? list[index] : kNull;
}

double Number(const nlohmann::json& value, double fallback = 0) { return value.is_number() ? value.get<double>() : fallback; }

std::string Percent(const nlohmann::json& value) {
  return value.is_number() ? fmt::format("{:.0f}%", 100 * value.get<double>()) : "-";
}

nlohmann::json First(const nlohmann::json& list) { return list.is_array() && !list.empty() ? list[0] : nlohmann::json(); }

std::string Summary(const nlohmann::json& settings, const nlohmann::json& summary) {
  std::string html = "<ul>";
  if (const std::string machine = DescribeMachine(settings.value("machine", nlohmann::json())); !machine.empty()) {
    html += "<li>machine: " + HtmlEscape(machine) + "</li>";
  }
  html += fmt::format("<li>tasks: {}, candidates: {}, samples per task: {}</li>", Field(summary, "tasks").dump(),
                      Field(summary, "candidates").dump(), Field(settings, "samples").dump());
  html += fmt::format("<li>pass@1: {}; compile rate {}, correct rate {}</li>", Percent(Field(summary, "pass_at_1")),
                      Percent(Field(summary, "compile_rate")), Percent(Field(summary, "correct_rate")));
  if (Field(summary, "geomean_speedup").is_number()) {
    html += fmt::format("<li>geometric-mean speedup: {:.2f}x [{:.2f}, {:.2f}] over {} tasks</li>",
                        Number(Field(summary, "geomean_speedup")), Number(At(Field(summary, "geomean_speedup_ci95"), 0)),
                        Number(At(Field(summary, "geomean_speedup_ci95"), 1)), Field(summary, "geomean_tasks").dump());
  }
  html += fmt::format("<li>fast_1: {} (a speedup counts only when its 95% interval clears p)</li>", Percent(Field(summary, "fast_1")));
  return html + fmt::format("<li>tokens {}, cost ${:.4f}, evaluator time {:.1f} s, wall time {:.1f} s</li></ul>\n",
                            Field(summary, "tokens").dump(), Number(Field(summary, "cost")), Number(Field(summary, "device_s")),
                            Number(Field(summary, "wall_s")));
}

std::string Figure(const std::string& chart, const std::string& caption) {
  return "<figure>" + chart + "<figcaption>" + caption + "</figcaption></figure>\n";
}

// The best kernel's file, knobs and explanation, or why the task has none.
std::string BestKernelCell(const nlohmann::json& task) {
  if (const std::string error = task.value("error", std::string()); !error.empty()) return HtmlEscape("error: " + error);
  const std::string kernel = task.value("best_kernel", std::string());
  if (kernel.empty()) return "-";
  std::string cell = fmt::format("<a class=\"best-kernel\" href=\"{}\">{}</a>", HtmlEscape(kernel),
                                 HtmlEscape(std::filesystem::path(kernel).filename().string()));
  if (const auto knobs = task.value("best_knobs", nlohmann::json::object()); !knobs.empty()) {
    cell += " <code>" + HtmlEscape(knobs.dump()) + "</code>";
  }
  if (const std::string words = task.value("best_explanation", std::string()); !words.empty()) {
    cell += "<br><small>" + HtmlEscape(words) + "</small>";
  }
  return cell;
}

std::string TaskTable(const nlohmann::json& tasks) {
  std::string html = "<table><tr><th>task</th><th>samples</th><th>correct</th><th>pass@1</th>"
                     "<th>best speedup [95% interval]</th><th>vs baseline</th><th>speedup@1</th>"
                     "<th>efficiency@1</th><th class=\"words\">best kernel</th><th>run</th></tr>\n";
  for (const auto& task : tasks) {
    const SpeedupComparison comparison = CompareWithBaseline(task);
    const std::string run_id = task.value("run_id", std::string());
    // Run ids are long and alike: the part that differs is shown, the whole id is its title.
    const std::string run = run_id.empty() ? "-"
                                           : fmt::format("<code title=\"{}\">{}</code>", HtmlEscape(run_id),
                                                         HtmlEscape(ShortRunId(run_id)));
    const auto speedup_at_1 = First(Field(task, "speedup_at_k"));
    html += fmt::format(
        "<tr><td class=\"task\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"best-speedup\">{}</td>"
        "<td class=\"comparison\"><span class=\"tag {}\">{}</span></td><td>{}</td><td>{}</td>"
        "<td class=\"words\">{}</td><td class=\"run\">{}</td></tr>\n",
        HtmlEscape(task.value("task", std::string())), Field(task, "samples").dump(), Percent(Field(task, "correct_rate")),
        Percent(First(Field(task, "pass_at_k"))), SpeedupWithInterval(task), ComparisonClass(comparison),
        ComparisonWords(comparison), speedup_at_1.is_number() ? fmt::format("{:.2f}x", speedup_at_1.get<double>()) : "-",
        Percent(First(Field(task, "efficiency_at_k"))), BestKernelCell(task), run);
  }
  return html + "</table>\n";
}

}  // namespace

std::string BenchHtml(const nlohmann::json& bench) {
  // Objects, so that .value() reads a default where a file lacks them.
  const nlohmann::json settings = Field(bench, "settings").is_object() ? Field(bench, "settings") : nlohmann::json::object();
  const nlohmann::json summary = Field(bench, "summary").is_object() ? Field(bench, "summary") : nlohmann::json::object();
  const std::string title = fmt::format("ksmith bench: {} on {}, {} strategy", settings.value("suite", ""),
                                        settings.value("backend", ""), settings.value("strategy", ""));
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + HtmlEscape(title) +
                     "</title><style>" + kStyle + "</style></head><body>\n";
  html += "<h1>" + HtmlEscape(title) + "</h1>\n" + Summary(settings, summary);
  html += "<h2>Speedups</h2>\n" + ComparisonLegend() + "\n";
  html += Figure(SpeedupChart(Field(bench, "tasks")),
                 "Each bar runs from 1x (the baseline's speed) to the best correct kernel's median speedup, and its "
                 "whisker is that speedup's 95% interval. The colour says where the interval lies against 1x, not "
                 "where the median falls: a bar whose whisker crosses the 1x line is a tie.");
  html += "<div class=\"charts\">";
  html += Figure(FastPChart(Field(summary, "fast_p")),
                 "The share of tasks whose best kernel's 95% interval lies above p times the baseline's speed: "
                 "fast_1 is the share reliably faster than the baseline, fast_0 the share with any correct kernel.");
  html += Figure(RooflineChart(Field(bench, "tasks")),
                 "Each task's best kernel: its speedup against the fraction of the device's measured roofline "
                 "(memory bandwidth and peak FLOP rate) it reaches. Names that would overlap are left out; every "
                 "point names its task when hovered.");
  html += "</div>\n<h2>Tasks</h2>\n" + TaskTable(Field(bench, "tasks"));
  return html + "</body></html>\n";
}

}  // namespace ksmith
