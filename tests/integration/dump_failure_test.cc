// `ksmith eval --dump-failure DIR`: a wrong kernel's first failing case comes back as files that
// numpy reads, whose expected output is the task's function of the written inputs, and whose
// rerun command fails again on the same case; a passing kernel writes nothing.
#include <cstdio>
#include <string>
#include <vector>

#include "dump_check.h"

namespace ksmith::it {
namespace {

// A relu that returns its input: wrong exactly where x < 0.
constexpr const char* kIdentityRelu = R"(#include <cstdint>
extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}
)";

TEST(DumpFailure, AWrongKernelsCaseComesBackAsNpyAndItsRerunFailsTheSameWay) {
  ScratchFolder work("ksmith-dump");
  const fs::path candidate = work.path / "identity_relu.cc";
  {
    std::ofstream(candidate) << kIdentityRelu;
  }
  const fs::path dump = work.path / "case";
  const CliResult run = RunKsmith({"eval", "--task", "relu", "--json", "--quiet", "--no-time", "--seeds", "1",
                                   "--dump-failure", dump.string(), candidate.string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_EQ(verdict.value("status", ""), "wrong_output") << run.Describe();
  EXPECT_NE(run.err.find("wrote the failing case"), std::string::npos) << run.Describe();

  const auto described = nlohmann::json::parse(Slurp(dump / "case.json"), nullptr, false);
  ASSERT_TRUE(described.is_object()) << Slurp(dump / "case.json");
  EXPECT_EQ(described["task"], "relu");
  EXPECT_EQ(described["label"], FailedCaseLabel(verdict));
  EXPECT_EQ(described["seeds"], 1);
  EXPECT_TRUE(described["mismatch"].is_object());
  EXPECT_TRUE(fs::exists(dump / "README.md"));
  EXPECT_TRUE(fs::exists(dump / "rerun.sh"));

  // The files are what numpy reads; expected is relu of the written input, actual is not.
  bool missing = false;
  const std::string checked = RunPython(
      "import json, numpy as np\n"
      "d = '" + dump.string() + "'\n"
      "x = np.load(d + '/inputs/x.npy'); e = np.load(d + '/expected/y.npy'); a = np.load(d + '/actual/y.npy')\n"
      "c = json.load(open(d + '/case.json'))\n"
      "f = c['first_difference']\n"
      "print(json.dumps({'dtypes': [str(x.dtype), str(e.dtype), str(a.dtype)], 'n': int(x.shape[0]),\n"
      "  'shape_n': c['shape']['n'], 'expected_is_relu': bool(np.array_equal(e, np.maximum(x.astype(np.float64), 0))),\n"
      "  'actual_differs': bool(not np.array_equal(a.astype(np.float64), e)), 'actual_is_x': bool(np.array_equal(a, x)),\n"
      "  'first_negative': int(np.argmax(x < 0)), 'first_difference': f['index']}))\n",
      missing);
  if (missing) {
    GTEST_SKIP() << "no python3 with numpy (tried /usr/bin/python3 and the one on PATH): the .npy files were written but not read back";
  }
  const auto facts = nlohmann::json::parse(checked, nullptr, false);
  ASSERT_TRUE(facts.is_object()) << checked;
  EXPECT_EQ(facts["dtypes"], nlohmann::json({"float32", "float64", "float32"}));
  EXPECT_EQ(facts["n"], facts["shape_n"]);
  EXPECT_TRUE(facts["expected_is_relu"].get<bool>()) << checked;
  EXPECT_TRUE(facts["actual_differs"].get<bool>()) << checked;
  EXPECT_TRUE(facts["actual_is_x"].get<bool>()) << checked;
  EXPECT_EQ(facts["first_difference"], facts["first_negative"]) << checked;

  // The rerun command, run as printed (by this build's ksmith), fails on the same case with the
  // same numbers, and a second dump of it holds the same inputs byte for byte.
  const auto rerun = described["rerun"].get<std::vector<std::string>>();
  ASSERT_GE(rerun.size(), 2u);
  EXPECT_EQ(fs::canonical(rerun[0]), fs::canonical(CliPath()));
  EXPECT_EQ(rerun[1], "eval");
  const fs::path again = work.path / "again";
  const CliResult replay = ReplayDump(described, again);
  ASSERT_EQ(replay.exit_code, 0) << replay.Describe();
  const auto replayed = replay.Json();
  EXPECT_EQ(replayed.value("status", ""), "wrong_output") << replay.Describe();
  EXPECT_EQ(FailedCaseLabel(replayed), FailedCaseLabel(verdict));
  EXPECT_EQ(replayed.value("reason", "r"), verdict.value("reason", "v"));
  EXPECT_EQ(Slurp(again / "inputs" / "x.npy"), Slurp(dump / "inputs" / "x.npy"));
  EXPECT_EQ(Slurp(again / "actual" / "y.npy"), Slurp(dump / "actual" / "y.npy"));
}

TEST(DumpFailure, APassingKernelWritesNothing) {
  ScratchFolder work("ksmith-dump-pass");
  const fs::path dump = work.path / "case";
  const CliResult run = RunKsmith({"eval", "--task", "relu", "--json", "--quiet", "--no-time", "--seeds", "1",
                                   "--dump-failure", dump.string(), (HonestDir() / "relu_slow.cpp").string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.Json().value("status", ""), "passed") << run.Describe();
  EXPECT_NE(run.err.find("nothing written: the verdict passed"), std::string::npos) << run.Describe();
  EXPECT_TRUE(!fs::exists(dump) || fs::is_empty(dump));
}

TEST(DumpFailure, AFolderHoldingFilesIsAUsageError) {
  ScratchFolder work("ksmith-dump-full");
  std::ofstream(work.path / "old.json") << "{}";
  const CliResult run = RunKsmith({"eval", "--task", "relu", "--quiet", "--no-time", "--dump-failure",
                                   work.path.string(), (HonestDir() / "relu_slow.cpp").string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("not an empty folder"), std::string::npos) << run.Describe();
}

}  // namespace
}  // namespace ksmith::it
