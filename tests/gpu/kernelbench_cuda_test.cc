// On a machine with an NVIDIA GPU and a torch with CUDA: KernelBench problems imported there get
// [cuda] (a float64 reference and a torch-eager baseline on the GPU), and CUDA candidates in
// tests/kernels/kernelbench/cuda/ and KernelBench-format ModelNew candidates in
// tests/kernels/kernelbench/modelnew/cuda/ get the verdict their first line names. The problems
// come from $KSMITH_TEST_KERNELBENCH_DIR, else the repository's copy (tests/data/kernelbench).
// Skips, saying why, elsewhere.
#include <iostream>
#include <sstream>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "../integration/kernelbench_import.h"

namespace ksmith::it {
namespace {

fs::path KernelBenchDir() {
  const char* configured = std::getenv("KSMITH_TEST_KERNELBENCH_DIR");
  return configured && *configured ? fs::path(configured) : KernelBenchCopy();
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

// An elementwise, a row reduction, a reduction over a middle dimension, softmax, a GEMM and a
// convolution: the shapes of problem the default-stream candidates of every style are tried on.
Imported GpuProblems() {
  return ImportOnce("gpu-level1", {(KernelBenchDir() / "level1").string(), "--problems", "1,19,23,47,87,95"});
}

TEST(KernelBenchCuda, ImportedProblemsGetTheirGpuReferenceAndBaseline) {
  if (const std::string why = WhyNot(); !why.empty()) GTEST_SKIP() << why;
  const Imported imported = GpuProblems();
  for (const char* task : {"kb_l1_019_relu", "kb_l1_023_softmax", "kb_l1_095_crossentropyloss"}) {
    const std::string toml = Slurp(imported.out / "kernelbench" / task / "task.toml");
    ASSERT_NE(toml.find("[cuda]"), std::string::npos) << task << " has no [cuda]: " << imported.report.dump();
  }
}

struct GpuCandidate {
  fs::path file;
  std::string task;
  std::string expect;
  std::string label;               // `# label: `: a label the verdict carries ("none": it carries none)
  std::string generalizes = "yes";  // `# generalizes: `: a passing ModelNew's hidden shapes
  std::vector<std::string> reasons;  // `# reason: `: words the verdict's reason contains (each line)
};

// CUDA C++ candidates (`// expect: `, named <kind>_<task>.cu) and KernelBench-format ModelNew ones
// (`# expect: `, named <what they try>_<task>.py). One test each, so that a GPU session can run
// them over several calls (--gtest_filter).
std::vector<GpuCandidate> GpuCandidates() {
  std::vector<GpuCandidate> candidates;
  const fs::path kernels = SourceDir() / "tests" / "kernels" / "kernelbench";
  for (const auto& [folder, extension, marker] : {std::tuple{kernels / "cuda", ".cu", "// expect: "},
                                                  std::tuple{kernels / "modelnew" / "cuda", ".py", "# expect: "}}) {
    for (const auto& file : FilesIn(folder, extension)) {
      const std::string stem = file.stem().string();
      GpuCandidate candidate{file, stem.substr(stem.find("kb_l")), ""};
      std::istringstream lines(Slurp(file));
      std::string first;
      std::getline(lines, first);
      if (first.starts_with(marker)) candidate.expect = first.substr(std::string_view(marker).size());
      for (std::string line; std::getline(lines, line) && line.starts_with("# ");) {
        if (line.starts_with("# label: ")) candidate.label = line.substr(9);
        if (line.starts_with("# generalizes: ")) candidate.generalizes = line.substr(15);
        if (line.starts_with("# reason: ")) candidate.reasons.push_back(line.substr(10));
      }
      candidates.push_back(candidate);
    }
  }
  return candidates;
}

void PrintTo(const GpuCandidate& candidate, std::ostream* out) { *out << candidate.file.filename(); }

class KernelBenchCudaCandidate : public ::testing::TestWithParam<GpuCandidate> {};

TEST_P(KernelBenchCudaCandidate, GetsTheVerdictItsHeaderNames) {
  if (const std::string why = WhyNot(); !why.empty()) GTEST_SKIP() << why;
  const GpuCandidate& candidate = GetParam();
  ASSERT_FALSE(candidate.expect.empty()) << candidate.file << " has no `expect:` first line";
  const Imported imported = GpuProblems();
  const CliResult run = RunKsmith({"eval", "--backend", "cuda", "--task", candidate.task, candidate.file.string(),
                                   "--json", "--quiet", "--timing-budget", "0.3"},
                                  {"KSMITH_TASKS_PATH=" + imported.out.string()});
  const nlohmann::json verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  const std::string status = verdict.value("status", std::string());
  const auto labels = verdict.value("labels", std::vector<std::string>{});
  std::cout << candidate.file.filename().string() << ": " << status << " in " << verdict.value("total_s", 0.0)
            << " s: " << verdict.value("reason", std::string()) << (labels.empty() ? "" : " [" + labels.front() + "]")
            << std::endl;
  EXPECT_EQ(status, candidate.expect) << verdict.value("reason", std::string());
  for (const auto& reason : candidate.reasons) {
    EXPECT_NE(verdict.value("reason", std::string()).find(reason), std::string::npos)
        << "the reason lacks '" << reason << "': " << verdict.value("reason", std::string());
  }
  if (candidate.label == "none") {
    EXPECT_TRUE(labels.empty()) << verdict.value("labels", nlohmann::json()).dump();
  } else if (!candidate.label.empty()) {
    EXPECT_TRUE(!labels.empty() && labels.front().starts_with(candidate.label))
        << "no label '" << candidate.label << "' in " << verdict.value("labels", nlohmann::json()).dump();
  }
  if (status == "passed") {
    EXPECT_NE(verdict.at("timing").value("baseline", std::string()).find("torch eager on the GPU"), std::string::npos);
  }
  if (status == "passed" && candidate.file.extension() == ".py") {
    const nlohmann::json shapes = verdict.value("generalization", nlohmann::json::object());
    EXPECT_EQ(shapes.value("generalizes", nlohmann::json()), nlohmann::json(candidate.generalizes == "yes"))
        << shapes.dump();
  }
}

// torch.compile beside eager (--compiled-baseline): the torch-ops ReLU and the load_inline
// softmax keep their verdicts, their hidden shapes and their eager speedup, and get a second
// speedup against torch.compile, from caches a warm step filled (the second run finds them).
TEST(KernelBenchCudaCompiled, CandidatesAreAlsoTimedAgainstTorchCompileWithoutChangingTheirVerdict) {
  if (const std::string why = WhyNot(); !why.empty()) GTEST_SKIP() << why;
  const Imported imported = GpuProblems();
  const fs::path folder = SourceDir() / "tests" / "kernels" / "kernelbench" / "modelnew" / "cuda";
  for (const auto& [file, task] : {std::pair{"honest_torch_ops_kb_l1_019_relu.py", "kb_l1_019_relu"},
                                   std::pair{"honest_load_inline_softmax_kb_l1_023_softmax.py", "kb_l1_023_softmax"}}) {
    for (int run_index = 0; run_index < 2; ++run_index) {
      const CliResult run = RunKsmith({"eval", "--backend", "cuda", "--task", task, (folder / file).string(), "--json",
                                       "--quiet", "--timing-budget", "0.3", "--compiled-baseline"},
                                      {"KSMITH_TASKS_PATH=" + imported.out.string()});
      const nlohmann::json verdict = run.Json();
      ASSERT_TRUE(verdict.is_object()) << run.Describe();
      std::cout << file << " run " << run_index << ": " << verdict.value("status", std::string()) << ", speedup "
                << verdict.value("speedup", 0.0) << ", vs torch.compile " << verdict.value("second_speedup", 0.0)
                << " in " << verdict.value("total_s", 0.0) << " s" << std::endl;
      EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.value("reason", std::string());
      EXPECT_EQ(verdict.value("generalization", nlohmann::json::object()).value("generalizes", nlohmann::json()), true);
      ASSERT_TRUE(verdict.contains("second_timing")) << verdict.dump(2);
      EXPECT_NE(verdict.at("second_timing").value("baseline", std::string()).find("torch.compile"), std::string::npos);
      EXPECT_GT(verdict.value("second_speedup", 0.0), 0.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelBenchCudaCandidate, ::testing::ValuesIn(GpuCandidates()),
                         [](const ::testing::TestParamInfo<GpuCandidate>& info) {
                           std::string name = info.param.file.stem().string();
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

}  // namespace
}  // namespace ksmith::it
