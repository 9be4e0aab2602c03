// On a machine with an NVIDIA GPU and a torch with CUDA: KernelBench problems imported there get
// [cuda] (a float64 reference and a torch-eager baseline on the GPU), and CUDA candidates in
// tests/kernels/kernelbench/cuda/ get the verdict their first line names. The problems come from
// $KSMITH_TEST_KERNELBENCH_DIR, else ../shared/kernelbench. Skips, saying why, everywhere else.
#include <gtest/gtest.h>

#include "../integration/kernelbench_import.h"

namespace ksmith::it {
namespace {

fs::path KernelBenchDir() {
  const char* configured = std::getenv("KSMITH_TEST_KERNELBENCH_DIR");
  return configured && *configured ? fs::path(configured) : SharedKernelBench();
}

std::string WhyNot() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  if (std::system("python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1") != 0) {
    return "python3 here has no torch with CUDA";
  }
  if (!fs::exists(KernelBenchDir() / "level1")) return "no KernelBench problems at " + KernelBenchDir().string();
  return {};
}

TEST(KernelBenchCuda, CandidatesOnImportedTasksGetTheVerdictTheirHeaderNames) {
  if (const std::string why = WhyNot(); !why.empty()) GTEST_SKIP() << why;
  const Imported imported = ImportOnce("gpu-level1", {(KernelBenchDir() / "level1").string(), "--problems", "19,23,95"});
  for (const char* task : {"kb_l1_019_relu", "kb_l1_023_softmax", "kb_l1_095_crossentropyloss"}) {
    const std::string toml = Slurp(imported.out / "kernelbench" / task / "task.toml");
    ASSERT_NE(toml.find("[cuda]"), std::string::npos) << task << " has no [cuda]: " << imported.report.dump();
  }
  for (const auto& file : FilesIn(SourceDir() / "tests" / "kernels" / "kernelbench" / "cuda", ".cu")) {
    const std::string stem = file.stem().string();
    const std::string task = stem.substr(stem.find('_') + 1);
    std::istringstream lines(Slurp(file));
    std::string first;
    std::getline(lines, first);
    ASSERT_TRUE(first.starts_with("// expect: ")) << file;
    const CliResult run = RunKsmith({"eval", "--backend", "cuda", "--task", task, file.string(), "--json", "--quiet",
                                     "--timing-budget", "0.3"},
                                    {"KSMITH_TASKS_PATH=" + imported.out.string()});
    const nlohmann::json verdict = run.Json();
    ASSERT_TRUE(verdict.is_object()) << run.Describe();
    EXPECT_EQ(verdict.value("status", std::string()), first.substr(11))
        << file.filename() << ": " << verdict.value("reason", std::string());
    if (verdict.value("status", std::string()) == "passed") {
      EXPECT_NE(verdict.at("timing").value("baseline", std::string()).find("torch eager on the GPU"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace ksmith::it
