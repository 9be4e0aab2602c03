// The HTML report opened in headless Chromium (Debian's `chromium`) at 1280 px, as a person would
// read it: every chart must render with its marks laid out, a visible title and labels that do
// not overlap; every interval must show; the table must fit the page; and the screenshot must
// show the comparison colours. Skips, saying so, where Chromium is missing.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/bench_html.h"
#include "bench/bench_summary.h"
#include "cli_runner.h"
#include "core/subprocess.h"
#include "png_pixels.h"

namespace ksmith::it {
namespace {

constexpr int kWindowWidthPx = 1280;

// Measures the page once laid out: each chart's box, marks, title and texts (with any two that
// overlap), each speedup row's bar and whisker, the legend, the page's width and the run cells.
constexpr const char* kProbe = R"(<script>
window.addEventListener('load', () => {
  const seen = element => { const b = element.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
  const box = element => { const b = element.getBoundingClientRect(); return {x: b.x, y: b.y, width: b.width, height: b.height}; };
  const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
    const marks = [...svg.querySelectorAll('polyline, rect, circle')]
        .filter(mark => { const b = mark.getBBox(); return b.width > 0 || b.height > 0; }).length;
    const titles = [...svg.querySelectorAll('text.chart-title')].filter(seen).map(text => text.textContent);
    // A text's own words, without those of its tooltip.
    const words = text => [...text.childNodes].filter(node => node.nodeType === Node.TEXT_NODE).map(node => node.data).join('');
    const labels = [...svg.querySelectorAll('text.task-label, text.axis-value')].filter(seen).map(words);
    // Every text drawn in the chart, pair by pair: more than half a pixel of overlap both ways.
    const texts = [...svg.querySelectorAll('text')].filter(seen).map(text => [words(text), text.getBoundingClientRect()]);
    const overlaps = [];
    for (let i = 0; i < texts.length; ++i) for (let j = i + 1; j < texts.length; ++j) {
      const [a, b] = [texts[i][1], texts[j][1]];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 0.5 && h > 0.5) overlaps.push([texts[i][0], texts[j][0]]);
    }
    const rows = [...svg.querySelectorAll('g.task-row')].map(row => {
      const bar = row.querySelector('rect.bar, rect.band'), whisker = row.querySelector('path.whisker');
      return {task: row.dataset.task, bar: bar ? bar.getAttribute('class') : '', bar_box: bar ? box(bar) : null,
              whisker: whisker ? box(whisker) : null};
    });
    // Texts the chart's edge would cut: drawn, but not all of them seen.
    const frame = svg.getBoundingClientRect();
    const cut = texts.filter(([, b]) => b.left < frame.left - 0.5 || b.right > frame.right + 0.5 ||
                                        b.top < frame.top - 0.5 || b.bottom > frame.bottom + 0.5).map(([text]) => text);
    return {id: svg.id, ...box(svg), marks, titles, labels, texts: texts.length, overlaps, cut, rows};
  });
  const legend = [...document.querySelectorAll('.legend li')]
      .map(item => ({cls: item.className, swatch: !!item.querySelector('svg') && seen(item.querySelector('svg'))}));
  const runs = [...document.querySelectorAll('td.run code')].map(code => ({
      text: code.textContent, title: code.getAttribute('title'), lines: code.getClientRects().length,
      height: code.getBoundingClientRect().height, font: parseFloat(getComputedStyle(code).fontSize)}));
  const best = [...document.querySelectorAll('td.best-speedup')].map(cell => cell.textContent);
  const links = [...document.querySelectorAll('a.best-kernel')].map(link => link.getAttribute('href'));
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({charts, legend, runs, best, links, inner_width: window.innerWidth,
      scroll_width: Math.max(document.body.scrollWidth, document.documentElement.scrollWidth)});
  document.body.appendChild(out);
});
</script>)";

std::string FindChromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(candidate)) return candidate;
  }
  return {};
}

nlohmann::json Passed(double speedup, double low, double high, double roofline) {
  return {{"status", "passed"}, {"stages", {{{"name", "build"}, {"outcome", "ok"}}}}, {"speedup", speedup},
          {"speedup_ci95", {low, high}}, {"roofline_fraction", roofline}};
}

// A suite a person would find crowded: ties near 1x whose points pile up on the roofline chart,
// a long name, long knobs and words, real run ids, a task with no correct kernel, one that failed.
nlohmann::json CrowdedBench() {
  std::vector<BenchTaskResult> results = {
      {"softmax", "20261121-103512-3fa9c1", "", {SampleFromVerdict(Passed(2.0, 1.8, 2.2, 0.6)),
                                                 SampleFromVerdict(Passed(0.7, 0.6, 0.8, 0.3))}, 0, 0, 1, 1},
      {"relu", "20261121-103514-07b2e4", "", {SampleFromVerdict(Passed(0.7, 0.6, 0.8, 0.3)), SampleOutcome{}}, 0, 0, 1, 1},
      {"layernorm", "20261121-103519-c41d09", "", {SampleFromVerdict(Passed(0.96, 0.92, 1.09, 0.41))}, 0, 0, 1, 1},
      {"no_kernel", "20261121-103533-9e0f11", "", {SampleOutcome{true}}, 0, 0, 1, 1},
      {"gelu", "", "optimize ended with exit code 3", {}, 0, 0, 0, 0}};
  const char* near_one[] = {"vector_add", "sum_reduce", "cross_entropy", "avg_pool2d", "transpose", "mse_loss"};
  for (int i = 0; i < 6; ++i) {
    const double speedup = 0.97 + 0.012 * i;
    results.push_back({near_one[i], "20261121-1036" + std::to_string(10 + i) + "-5d2a7" + std::to_string(i), "",
                       {SampleFromVerdict(Passed(speedup, speedup * 0.93, speedup * 1.08, 0.4 + 0.01 * i))}, 0, 0, 1, 1});
  }
  BenchTaskResult long_one{"fused_matmul_bias_gelu_dropout_layernorm_residual", "20261121-103700-ffee00", "",
                           {SampleFromVerdict(Passed(3.1, 2.9, 3.4, 0.72))}, 0, 0, 1, 1};
  long_one.best_kernel = "runs/fused_matmul_bias_gelu_dropout_layernorm_residual/candidate_12.cc";
  long_one.best_knobs = {{"BLOCK_SIZE_M", "128"}, {"BLOCK_SIZE_N", "256"}, {"BLOCK_SIZE_K", "64"}, {"UNROLL", "8"}};
  long_one.best_explanation = "Tiles the product in registers and fuses the bias, GELU, dropout mask, layer norm "
                              "and residual into the epilogue, so the output is written once.";
  results.push_back(long_one);
  nlohmann::json bench = BenchJson({"mini", "cpu", "tune", 2}, results);
  bench["tasks"][0]["best_kernel"] = "runs/softmax/best.cc";
  bench["tasks"][0]["best_knobs"] = {{"BLOCK", "256"}};
  return bench;
}

TEST(BenchHtmlInChromium, ReadableAt1280Pixels) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium here (Debian: apt-get install chromium)";
  const nlohmann::json bench = CrowdedBench();
  const fs::path directory = fs::temp_directory_path() / ("ksmith-html-" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const fs::path page = directory / "report.html", probed = directory / "probed.html",
                 screenshot = directory / "report.png";
  const std::string html = BenchHtml(bench);
  std::ofstream(page) << html;
  std::string with_probe = html;
  with_probe.insert(with_probe.rfind("</body>"), kProbe);
  std::ofstream(probed) << with_probe;
  auto run_chromium = [&](const std::string& action, const fs::path& file) {
    SpawnOptions spawn;
    spawn.argv = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                  "--user-data-dir=" + (directory / "profile").string(), "--virtual-time-budget=5000",
                  fmt::format("--window-size={},2000", kWindowWidthPx), action, "file://" + file.string()};
    spawn.inherit_environment = true;
    return RunCommand(spawn, std::chrono::seconds(120), size_t{16} << 20);
  };

  // The report itself, as a picture: a 1280 px wide PNG that shows the comparison colours.
  auto shot = run_chromium("--screenshot=" + screenshot.string(), page);
  ASSERT_TRUE(shot.ok()) << shot.error().message;
  ASSERT_TRUE(fs::exists(screenshot)) << shot->Describe() << "\n" << shot->output;
  std::ifstream png_file(screenshot, std::ios::binary);
  const std::string png_bytes((std::istreambuf_iterator<char>(png_file)), std::istreambuf_iterator<char>());
  std::string why;
  const auto png = ReadPng(png_bytes, &why);
  ASSERT_TRUE(png.has_value()) << why;
  EXPECT_EQ(png->width, static_cast<uint32_t>(kWindowWidthPx));
  const std::set<uint32_t> colours(png->rgb.begin(), png->rgb.end());
  EXPECT_GT(colours.size(), 16u) << "the screenshot is (nearly) one colour";
  // The faster, tie and slower fills of bench_html.cc, each on some bar: the shortest bar is 4 px
  // along and 12 px across, of which 3 x 8 are whole pixels wherever it falls.
  for (uint32_t fill : {0x1b9e77u, 0xa3a3a3u, 0xd95f02u}) {
    EXPECT_TRUE(HasPatch(*png, fill, 3, 8)) << fmt::format("no bar of #{:06x} in {}", fill, screenshot.string());
  }

  auto exit = run_chromium("--dump-dom", probed);
  ASSERT_TRUE(exit.ok()) << exit.error().message;
  const std::string& dom = exit->output;
  const size_t start = dom.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << exit->Describe() << "\n" << dom.substr(0, 3000);
  const size_t open = start + std::string("<pre id=\"probe\">").size();
  const auto probe = nlohmann::json::parse(dom.substr(open, dom.find("</pre>", open) - open), nullptr, false);
  ASSERT_TRUE(probe.is_object()) << dom.substr(start, 2000);
  EXPECT_EQ(probe["inner_width"], kWindowWidthPx) << "not measured at 1280 px";
  const auto& charts = probe["charts"];
  ASSERT_TRUE(charts.is_array()) << dom.substr(start, 2000);
  ASSERT_EQ(charts.size(), 3u) << charts.dump();
  for (const auto& chart : charts) {
    EXPECT_GT(chart["width"].get<double>(), 100) << chart.dump();
    EXPECT_GT(chart["height"].get<double>(), 100) << chart.dump();
    EXPECT_GE(chart["marks"].get<int>(), 2) << chart["id"];  // a curve and its points, bars, dots
    EXPECT_EQ(chart["titles"].size(), 1u) << chart["id"] << ": no visible title, only a tooltip";
    EXPECT_GE(chart["texts"].get<int>(), 8) << chart["id"];  // axis values at least
    EXPECT_EQ(chart["overlaps"], nlohmann::json::array()) << chart["id"] << ": labels drawn over each other";
    EXPECT_EQ(chart["cut"], nlohmann::json::array()) << chart["id"] << ": labels cut by the chart's edge";
  }
  const auto chart_of = [&](const std::string& id) {
    for (const auto& chart : charts) {
      if (chart["id"] == id) return chart;
    }
    return nlohmann::json::object();
  };
  // The speedup bars name their tasks; the roofline scatter has values on its axes (issue 13).
  const auto bars = chart_of("speedups")["labels"];
  EXPECT_NE(std::find(bars.begin(), bars.end(), "softmax"), bars.end()) << bars.dump();
  EXPECT_NE(std::find(bars.begin(), bars.end(), "relu"), bars.end()) << bars.dump();
  const auto axes = chart_of("roofline")["labels"];
  EXPECT_NE(std::find(axes.begin(), axes.end(), "1x"), axes.end()) << axes.dump();
  EXPECT_NE(std::find(axes.begin(), axes.end(), "50%"), axes.end()) << axes.dump();

  // Every task with an interval has a whisker along the speedup axis (the bars lie across the
  // page, names on the left), and a bar; the colour is the interval's, not the median's.
  std::map<std::string, nlohmann::json> rows;
  const nlohmann::json speedups = chart_of("speedups");
  for (const auto& row : speedups["rows"]) rows[row["task"].get<std::string>()] = row;
  for (const auto& task : bench["tasks"]) {
    const std::string name = task["task"].get<std::string>();
    if (!rows.contains(name)) {
      ADD_FAILURE() << name << " has no row";
      continue;
    }
    const auto& row = rows[name];
    if (!task["best_speedup_ci95"].is_array()) continue;
    ASSERT_TRUE(row["whisker"].is_object()) << name << ": no whisker";
    EXPECT_GT(row["whisker"]["width"].get<double>(), 0) << name << ": a whisker of no length";
    EXPECT_GE(row["bar_box"]["width"].get<double>(), 3) << name << ": a bar too short to see";
  }
  EXPECT_EQ(rows["layernorm"]["bar"], "bar tie") << "0.96x [0.92, 1.09] is a tie";
  EXPECT_EQ(rows["vector_add"]["bar"], "bar tie");
  EXPECT_EQ(rows["softmax"]["bar"], "bar faster");
  EXPECT_EQ(rows["relu"]["bar"], "bar slower");
  EXPECT_EQ(rows["gelu"]["bar"], "band failed");
  EXPECT_EQ(rows["no_kernel"]["bar"], "band failed");

  // A legend with a visible swatch for each colour.
  std::set<std::string> legend;
  for (const auto& item : probe["legend"]) {
    if (item["swatch"].get<bool>()) legend.insert(item["cls"].get<std::string>());
  }
  for (const char* entry : {"legend-faster", "legend-tie", "legend-slower", "legend-failed"}) {
    EXPECT_TRUE(legend.contains(entry)) << entry << " missing from " << probe["legend"].dump();
  }

  // The page fits the window: no sideways scrolling, and each run id on one line, its full id
  // in the title.
  EXPECT_LE(probe["scroll_width"].get<int>(), kWindowWidthPx);
  EXPECT_EQ(probe["runs"].size(), bench["tasks"].size() - 1) << probe["runs"].dump();  // gelu never ran
  for (const auto& run : probe["runs"]) {
    EXPECT_EQ(run["lines"], 1) << run.dump();
    EXPECT_LT(run["height"].get<double>(), 1.6 * run["font"].get<double>()) << run.dump();
    EXPECT_TRUE(run["title"].get<std::string>().ends_with(run["text"].get<std::string>().substr(3))) << run.dump();
  }
  // The best speedup comes with its interval, and the best kernel with a link.
  ASSERT_EQ(probe["best"].size(), bench["tasks"].size()) << probe.dump();
  EXPECT_EQ(probe["best"][0], "2.00x [1.80, 2.20]") << probe.dump();
  EXPECT_EQ(probe["links"], nlohmann::json::array({"runs/softmax/best.cc",
                                                   "runs/fused_matmul_bias_gelu_dropout_layernorm_residual/candidate_12.cc"}));
  if (!HasFailure()) fs::remove_all(directory);  // kept, screenshot and all, for a look when it fails
}

}  // namespace
}  // namespace ksmith::it
