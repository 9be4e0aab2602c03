// The HTML report opened in headless Chromium (Debian's `chromium`): every chart must render with
// its marks laid out, not just be present in the file. Skips, saying so, where Chromium is missing.
#include <algorithm>
#include <cstdlib>

#include "bench/bench_html.h"
#include "bench/bench_summary.h"
#include "cli_runner.h"
#include "core/subprocess.h"

namespace ksmith::it {
namespace {

// Measures each chart once laid out: its box and how many of its marks have a non-empty box.
constexpr const char* kProbe = R"(<script>
window.addEventListener('load', () => {
  const charts = [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const marks = [...svg.querySelectorAll('polyline, rect, circle')]
        .filter(mark => { const b = mark.getBBox(); return b.width > 0 || b.height > 0; }).length;
    // Texts that are laid out inside the chart, each with its own box: labels people can read.
    const labels = [...svg.querySelectorAll('text.task-label, text.axis-value')]
        .filter(text => { const b = text.getBoundingClientRect(); return b.width > 0 && b.height > 0; })
        .map(text => text.textContent);
    return {id: svg.id, width: box.width, height: box.height, marks, labels};
  });
  const best = [...document.querySelectorAll('td.best-speedup')].map(cell => cell.textContent);
  const links = [...document.querySelectorAll('a.best-kernel')].map(link => link.getAttribute('href'));
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({charts, best, links});
  document.body.appendChild(out);
});
</script>)";

std::string FindChromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}) {
    if (fs::exists(candidate)) return candidate;
  }
  return {};
}

TEST(BenchHtmlInChromium, EveryChartRenders) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "no chromium here (Debian: apt-get install chromium)";
  nlohmann::json pass = {{"status", "passed"}, {"stages", {{{"name", "build"}, {"outcome", "ok"}}}},
                         {"speedup", 2.0}, {"speedup_ci95", {1.8, 2.2}}, {"roofline_fraction", 0.6}};
  nlohmann::json slow = pass;
  slow["speedup"] = 0.7;
  slow["speedup_ci95"] = {0.6, 0.8};
  const nlohmann::json bench = BenchJson({"mini", "cpu", "tune", 2},
                                         {{"softmax", "r1", "", {SampleFromVerdict(pass), SampleFromVerdict(slow)}, 0, 0, 1, 1},
                                          {"relu", "r2", "", {SampleFromVerdict(slow), SampleOutcome{}}, 0, 0, 1, 1}});
  nlohmann::json linked = bench;
  linked["tasks"][0]["best_kernel"] = "runs/softmax/best.cc";
  linked["tasks"][0]["best_knobs"] = {{"BLOCK", "256"}};
  std::string html = BenchHtml(linked);
  html.insert(html.rfind("</body>"), kProbe);
  const fs::path directory = fs::temp_directory_path() / ("ksmith-html-" + std::to_string(::getpid()));
  fs::create_directories(directory);
  const fs::path page = directory / "report.html";
  std::ofstream(page) << html;
  SpawnOptions spawn;
  spawn.argv = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=" + (directory / "profile").string(), "--virtual-time-budget=5000", "--dump-dom",
                "file://" + page.string()};
  spawn.inherit_environment = true;
  auto exit = RunCommand(spawn, std::chrono::seconds(120), size_t{16} << 20);
  ASSERT_TRUE(exit.ok()) << exit.error().message;
  const std::string& dom = exit->output;
  const size_t start = dom.find("<pre id=\"probe\">");
  ASSERT_NE(start, std::string::npos) << exit->Describe() << "\n" << dom.substr(0, 3000);
  const size_t open = start + std::string("<pre id=\"probe\">").size();
  const auto probe = nlohmann::json::parse(dom.substr(open, dom.find("</pre>", open) - open), nullptr, false);
  ASSERT_TRUE(probe.is_object()) << dom.substr(start, 2000);
  const auto& charts = probe["charts"];
  ASSERT_TRUE(charts.is_array()) << dom.substr(start, 2000);
  ASSERT_EQ(charts.size(), 3u) << charts.dump();
  for (const auto& chart : charts) {
    EXPECT_GT(chart["width"].get<double>(), 100) << chart.dump();
    EXPECT_GT(chart["height"].get<double>(), 100) << chart.dump();
    EXPECT_GE(chart["marks"].get<int>(), 2) << chart.dump();  // a curve and its points, bars, dots
  }
  // The speedup bars name their tasks; the roofline scatter has values on its axes (issue 13).
  const auto labels_of = [&](const std::string& id) {
    for (const auto& chart : charts) {
      if (chart["id"] == id) return chart["labels"];
    }
    return nlohmann::json::array();
  };
  const auto bars = labels_of("speedups");
  EXPECT_NE(std::find(bars.begin(), bars.end(), "softmax"), bars.end()) << bars.dump();
  EXPECT_NE(std::find(bars.begin(), bars.end(), "relu"), bars.end()) << bars.dump();
  const auto axes = labels_of("roofline");
  EXPECT_NE(std::find(axes.begin(), axes.end(), "1x"), axes.end()) << axes.dump();
  EXPECT_NE(std::find(axes.begin(), axes.end(), "50%"), axes.end()) << axes.dump();
  // The best speedup comes with its interval, and the best kernel with a link.
  ASSERT_EQ(probe["best"].size(), 2u) << probe.dump();
  EXPECT_EQ(probe["best"][0], "2.00x [1.80, 2.20]") << probe.dump();
  EXPECT_EQ(probe["links"], nlohmann::json::array({"runs/softmax/best.cc"})) << probe.dump();
  fs::remove_all(directory);
}

}  // namespace
}  // namespace ksmith::it
