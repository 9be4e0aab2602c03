// The HTML report opened in headless Chromium (Debian's `chromium`): every chart must render with
// its marks laid out, not just be present in the file. Skips, saying so, where Chromium is missing.
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
    return {id: svg.id, width: box.width, height: box.height, marks};
  });
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(charts);
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
  std::string html = BenchHtml(bench);
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
  const auto charts = nlohmann::json::parse(dom.substr(open, dom.find("</pre>", open) - open), nullptr, false);
  ASSERT_TRUE(charts.is_array()) << dom.substr(start, 2000);
  ASSERT_EQ(charts.size(), 3u) << charts.dump();
  for (const auto& chart : charts) {
    EXPECT_GT(chart["width"].get<double>(), 100) << chart.dump();
    EXPECT_GT(chart["height"].get<double>(), 100) << chart.dump();
    EXPECT_GE(chart["marks"].get<int>(), 2) << chart.dump();  // a curve and its points, bars, dots
  }
  fs::remove_all(directory);
}

}  // namespace
}  // namespace ksmith::it
