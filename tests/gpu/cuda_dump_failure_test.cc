// On a machine with an NVIDIA GPU: `ksmith eval --backend cuda --dump-failure` writes a wrong CUDA
// kernel's first failing case (the GPU reference's answer as expected), and its rerun command
// fails on the same case with the same output. Without a GPU it skips and says why.
#include <string>
#include <vector>

#include "../integration/dump_check.h"

namespace ksmith::it {
namespace {

std::string WhyNoGpuForDump() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  return {};
}

TEST(CudaDumpFailure, AWrongKernelsCaseComesBackAndItsRerunFailsTheSameWay) {
  if (const std::string why = WhyNoGpuForDump(); !why.empty()) GTEST_SKIP() << why;
  ScratchFolder work("ksmith-cuda-dump");
  // Computes only the first half of y: the rest keeps the NaN poison.
  const fs::path candidate = SourceDir() / "tests" / "kernels" / "cuda" / "redteam" / "partial_relu.cu";
  const fs::path dump = work.path / "case";
  const CliResult run = RunKsmith({"eval", "--backend", "cuda", "--task", "relu", "--json", "--quiet", "--no-time",
                                   "--seeds", "1", "--dump-failure", dump.string(), candidate.string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_EQ(verdict.value("status", ""), "wrong_output") << run.Describe();
  const auto described = nlohmann::json::parse(Slurp(dump / "case.json"), nullptr, false);
  ASSERT_TRUE(described.is_object()) << run.Describe();
  EXPECT_EQ(described["backend"], "cuda");
  EXPECT_EQ(described["label"], FailedCaseLabel(verdict));
  const int64_t n = described["shape"]["n"].get<int64_t>();
  EXPECT_GE(described["first_difference"]["index"].get<int64_t>(), n / 2);

  const auto rerun = described["rerun"].get<std::vector<std::string>>();
  ASSERT_GE(rerun.size(), 2u);
  const fs::path again = work.path / "again";
  const CliResult replay = ReplayDump(described, again);
  ASSERT_EQ(replay.exit_code, 0) << replay.Describe();
  EXPECT_EQ(FailedCaseLabel(replay.Json()), FailedCaseLabel(verdict)) << replay.Describe();
  EXPECT_EQ(Slurp(again / "inputs" / "x.npy"), Slurp(dump / "inputs" / "x.npy"));
  EXPECT_EQ(Slurp(again / "actual" / "y.npy"), Slurp(dump / "actual" / "y.npy"));

  bool missing = false;
  const std::string checked = RunPython(
      "import numpy as np\n"
      "d = '" + dump.string() + "'\n"
      "x = np.load(d + '/inputs/x.npy'); e = np.load(d + '/expected/y.npy'); a = np.load(d + '/actual/y.npy')\n"
      "print('relu' if np.array_equal(e, np.maximum(x.astype(np.float64), 0)) else 'not relu',\n"
      "      'differs' if not np.array_equal(a.astype(np.float64), e, equal_nan=True) else 'same')\n",
      missing);
  if (missing) GTEST_SKIP() << "no python3 with numpy (tried /usr/bin/python3 and the one on PATH): the .npy files were written but not read back";
  EXPECT_EQ(checked, "relu differs\n");
}

}  // namespace
}  // namespace ksmith::it
