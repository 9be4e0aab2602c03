// The checks of `ksmith tasks check` on synthetic tasks, each with its reference compiled by the
// real g++: a healthy task passes, and each kind of degenerate task is flagged by its check.
#include "eval/task_check.h"

#include <filesystem>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "eval/case_probe.h"
#include "eval/cases.h"
#include "sandbox/layout.h"
#include "task/task_loader.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// Two inputs, so that one of them can be ignored; n = 1 checks that a 1-element output (its own
// mean) is not held against a task.
constexpr const char* kToyTask = R"TOML(name = "toy"
category = "elementwise"
description = "y = f(a, b)"
signature = "void toy(const float* a, const float* b, float* y, int64_t n)"
flops = "n"
bytes = "12*n"
accumulation = "1"
distributions = ["normal", "uniform"]

[[inputs]]
name = "a"
dtype = "fp32"
shape = ["n"]

[[inputs]]
name = "b"
dtype = "fp32"
shape = ["n"]

[[outputs]]
name = "y"
dtype = "fp32"
shape = ["n"]

[shapes]
dev = [ { n = 8 }, { n = 37 } ]
eval = [ { n = 1 }, { n = 33 }, { n = 1000 } ]
bench = { n = 4096 }

[reference]
source = "reference.cc"
function = "toy_reference"

[baseline.cpu]
source = "baseline_cpu.cc"
description = "plain loop"
)TOML";

// A loss: one output element per case, so a constant can only pass if the value stays put
// from case to case.
constexpr const char* kLossTask = R"TOML(name = "toy_loss"
category = "elementwise"
description = "loss = f(a, b)"
signature = "void toy_loss(const float* a, const float* b, float* loss, int64_t n)"
flops = "2*n"
bytes = "8*n + 4"
accumulation = "n"
distributions = ["normal", "uniform"]

[[inputs]]
name = "a"
dtype = "fp32"
shape = ["n"]

[[inputs]]
name = "b"
dtype = "fp32"
shape = ["n"]

[[outputs]]
name = "loss"
dtype = "fp32"
shape = []

[shapes]
dev = [ { n = 8 }, { n = 37 } ]
eval = [ { n = 1 }, { n = 1000 } ]
bench = { n = 4096 }

[reference]
source = "reference.cc"
function = "toy_loss_reference"

[baseline.cpu]
source = "baseline_cpu.cc"
description = "plain loop"
)TOML";

class TaskCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    cache_env_.emplace("KSMITH_CACHE_DIR", (temp_.path() / "cache").string());
    auto cache = CacheDirectory();
    ASSERT_TRUE(cache.ok());
    auto compiler = CpuCompiler::Create(*cache);
    ASSERT_TRUE(compiler.ok()) << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
  }
  void TearDown() override { cache_env_.reset(); }

  // Writes tasks/elementwise/<name> under `root` (a task's folder is named after it).
  Result<Task> WriteTask(const std::string& root, const std::string& toml, const std::string& reference) {
    const std::string name = toml.substr(8, toml.find('"', 8) - 8);
    const fs::path directory = temp_.path() / root / "elementwise" / name;
    fs::create_directories(directory);
    std::ofstream(directory / "task.toml") << toml;
    std::ofstream(directory / "baseline_cpu.cc") << "// unused\n";
    std::ofstream(directory / "reference.cc") << "#include <cstdint>\n#include <cmath>\n" << reference;
    return LoadTask(directory);
  }

  // Writes the toy task with `body` as its reference's loop body (over i, writing y[i]).
  Result<Task> Write(const std::string& folder, const std::string& body) {
    return WriteTask(folder, kToyTask,
                     "extern \"C\" void toy_reference(const float* a, const float* b, double* y, int64_t n) {\n"
                     "  for (int64_t i = 0; i < n; ++i) {\n    " + body + "\n  }\n}\n");
  }

  TaskCheckReport CheckLoss(const std::string& folder, const std::string& body) {
    return CheckWritten(WriteTask(folder, kLossTask,
                                  "extern \"C\" void toy_loss_reference(const float* a, const float* b, double* loss, "
                                  "int64_t n) {\n  double sum = 0;\n  for (int64_t i = 0; i < n; ++i) sum += "
                                  "static_cast<double>(a[i]) * b[i];\n  " + body + "\n}\n"));
  }

  TaskCheckReport Check(const std::string& folder, const std::string& body) { return CheckWritten(Write(folder, body)); }

  TaskCheckReport CheckWritten(Result<Task> task) {
    EXPECT_TRUE(task.ok()) << task.error().message;
    if (!task.ok()) return {};
    auto reference = LoadCpuReference(*task, *compiler_);
    EXPECT_TRUE(reference.ok()) << reference.error().message;
    if (!reference.ok()) return {};
    return CheckTaskReference(*task, reference->entry, TaskCheckOptions{});
  }

  static std::string Describe(const TaskCheckReport& report) { return report.ToJson().dump(2); }

  // The finding of `check` about `tensor`, or null.
  static const TaskFinding* Find(const TaskCheckReport& report, const std::string& check, const std::string& tensor) {
    for (const auto& finding : report.findings) {
      if (finding.check == check && finding.tensor == tensor) return &finding;
    }
    return nullptr;
  }

  ScopedTempDir temp_{"ksmith-task-check"};
  std::optional<testing::ScopedEnv> cache_env_;
  std::optional<CpuCompiler> compiler_;
};

TEST_F(TaskCheckTest, HealthyTaskPasses) {
  const TaskCheckReport report = Check("healthy", "y[i] = static_cast<double>(a[i]) * b[i] + a[i];");
  EXPECT_TRUE(report.ok()) << Describe(report);
  EXPECT_EQ(report.shapes, 5);
  EXPECT_EQ(report.cases, 5 * 2 * 2);  // shapes x distributions x seeds
  EXPECT_EQ(report.ToJson()["findings"].size(), 0u);
}

TEST_F(TaskCheckTest, ReferenceThatIgnoresAnInputIsFlagged) {
  const TaskCheckReport report = Check("ignores_b", "y[i] = 2.0 * a[i] + 1e-9 * b[i];");
  EXPECT_FALSE(report.ok());
  const TaskFinding* finding = Find(report, kInputIgnored, "b");
  ASSERT_NE(finding, nullptr) << Describe(report);
  EXPECT_EQ(finding->shape, "every shape");
  EXPECT_EQ(finding->ToJson().value("input", ""), "b");
  EXPECT_EQ(Find(report, kInputIgnored, "a"), nullptr) << Describe(report);
  EXPECT_EQ(report.findings.size(), 1u) << Describe(report);
}

TEST_F(TaskCheckTest, ConstantReferenceIsFlagged) {
  const TaskCheckReport report = Check("constant", "y[i] = 3.0 + 1e-7 * a[i];");
  EXPECT_NE(Find(report, kNearConstantOutput, "y"), nullptr) << Describe(report);
  const TaskFinding* trivial = Find(report, kTrivialOutputPasses, "y");
  ASSERT_NE(trivial, nullptr) << Describe(report);
  EXPECT_NE(trivial->detail.find("mean"), std::string::npos) << trivial->detail;
  // Every shape but n = 1, whose 1-element output is its own mean whatever the task.
  EXPECT_EQ(trivial->shape, "n=8; n=37; n=33; ... (4 shapes)");
  EXPECT_NE(Find(report, kInputIgnored, "b"), nullptr) << Describe(report);
}

TEST_F(TaskCheckTest, OutputOfTinyValuesIsFlagged) {
  const TaskCheckReport report = Check("tiny", "y[i] = 1e-13 * (static_cast<double>(a[i]) + b[i]);");
  const TaskFinding* small = Find(report, kOutputTooSmall, "y");
  ASSERT_NE(small, nullptr) << Describe(report);
  EXPECT_NE(small->detail.find("of the magnitude floor"), std::string::npos) << small->detail;
  // All zeros is within rounding noise of such an output, so it passes too.
  EXPECT_NE(Find(report, kTrivialOutputPasses, "y"), nullptr) << Describe(report);
  // The output still varies relative to its own size: it is not near-constant.
  EXPECT_EQ(Find(report, kNearConstantOutput, "y"), nullptr) << Describe(report);
}

TEST_F(TaskCheckTest, ShapeWhereZerosPassIsNamed) {
  // Right everywhere but on n = 1000, where the reference all but vanishes.
  const TaskCheckReport report =
      Check("one_bad_shape", "y[i] = (n == 1000 ? 1e-13 : 1.0) * (static_cast<double>(a[i]) + b[i]);");
  const TaskFinding* trivial = Find(report, kTrivialOutputPasses, "y");
  ASSERT_NE(trivial, nullptr) << Describe(report);
  EXPECT_EQ(trivial->shape, "n=1000");
  EXPECT_EQ(trivial->distribution, "normal, uniform");
  // Both inputs matter on the other shapes.
  EXPECT_EQ(Find(report, kInputIgnored, "a"), nullptr) << Describe(report);
  EXPECT_EQ(Find(report, kInputIgnored, "b"), nullptr) << Describe(report);
}

TEST_F(TaskCheckTest, LossThatVariesFromCaseToCasePasses) {
  // One element per case: each case is "constant", which must not count against the task.
  const TaskCheckReport report = CheckLoss("loss", "*loss = sum / static_cast<double>(n);");
  EXPECT_TRUE(report.ok()) << Describe(report);
}

TEST_F(TaskCheckTest, LossThatBarelyChangesIsFlagged) {
  const TaskCheckReport report = CheckLoss("flat_loss", "*loss = 2.0 + 1e-9 * sum;");
  const TaskFinding* finding = Find(report, kNearConstantOutput, "loss");
  ASSERT_NE(finding, nullptr) << Describe(report);
  EXPECT_NE(finding->detail.find("across all"), std::string::npos) << finding->detail;
}

TEST_F(TaskCheckTest, ReferenceThatDoesNotCompileIsAnError) {
  const fs::path directory = temp_.path() / "broken" / "elementwise" / "toy";
  fs::create_directories(directory);
  std::ofstream(directory / "task.toml") << kToyTask;
  std::ofstream(directory / "baseline_cpu.cc") << "// unused\n";
  std::ofstream(directory / "reference.cc") << "this is not C++\n";
  auto task = LoadTask(directory);
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto reference = LoadCpuReference(*task, *compiler_);
  ASSERT_FALSE(reference.ok());
  EXPECT_EQ(reference.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(reference.error().message.find("does not compile"), std::string::npos) << reference.error().message;
}

class TaskBaselineCheckTest : public TaskCheckTest {
 protected:
  std::vector<TaskFinding> CheckBaseline(const std::string& folder, const std::string& baseline_body) {
    auto task = Write(folder, "y[i] = static_cast<double>(a[i]) * b[i] + a[i];");
    EXPECT_TRUE(task.ok()) << task.error().message;
    if (!task.ok()) return {};
    std::ofstream(task->baselines.at("cpu").source)
        << "#include <cstdint>\nextern \"C\" void toy(const float* a, const float* b, float* y, int64_t n) {\n"
        << "  for (int64_t i = 0; i < n; ++i) {\n    " << baseline_body << "\n  }\n}\n";
    auto reference = LoadCpuReference(*task, *compiler_);
    auto baseline = LoadCpuBaseline(*task, *compiler_);
    EXPECT_TRUE(reference.ok() && baseline.ok());
    if (!reference.ok() || !baseline.ok()) return {};
    return CheckTaskBaseline(*task, reference->entry, baseline->entry, TaskCheckOptions{});
  }
};

TEST_F(TaskBaselineCheckTest, RightBaselineHasNoFinding) {
  const auto findings = CheckBaseline("right", "y[i] = a[i] * b[i] + a[i];");
  EXPECT_TRUE(findings.empty()) << findings.front().detail;
}

TEST_F(TaskBaselineCheckTest, WrongBaselineIsFlaggedOncePerTensor) {
  // Right everywhere but the last element of a long row: only some shapes go wrong.
  const auto findings = CheckBaseline("wrong", "y[i] = a[i] * b[i] + (i == 999 ? 0.0f : a[i]);");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, kBaselineWrong);
  EXPECT_EQ(findings[0].tensor, "y");
  EXPECT_EQ(findings[0].shape, "n=1000");
  EXPECT_NE(findings[0].detail.find("baseline_cpu.cc"), std::string::npos) << findings[0].detail;
}

TEST_F(TaskBaselineCheckTest, BaselineThatWritesItsInputIsFlagged) {
  const auto findings =
      CheckBaseline("writes", "y[i] = a[i] * b[i] + a[i]; const_cast<float*>(b)[i] = 0;");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].tensor, "inputs");
}

// The toy reference y = a + b, called in this process as a built reference would be.
void AddReference(void* const* pointers, const int64_t* scalars) {
  const auto* a = static_cast<const float*>(pointers[0]);
  const auto* b = static_cast<const float*>(pointers[1]);
  auto* y = static_cast<double*>(pointers[2]);
  for (int64_t i = 0; i < scalars[3]; ++i) y[i] = static_cast<double>(a[i]) + b[i];
}

TEST_F(TaskCheckTest, JudgesOutputsExactlyAsAVerdictDoes) {
  // Given outputs off by growing relative errors, uniform or in one element, the checks' own
  // comparison must pass and fail exactly where CheckSnapshot (the verdict's) does.
  auto task = Write("judge", "y[i] = a[i] + b[i];");
  ASSERT_TRUE(task.ok()) << task.error().message;
  constexpr uint32_t kCanary = 0xa5a5a5a5;
  int passed = 0, failed = 0;
  for (const int64_t n : {1, 37, 1000}) {
    PreparedCase prepared = PrepareCase(*task, {{{"n", n}}, Distribution::kNormal, 7, "judge"}, 64);
    ComputeExpected(*task, &AddReference, prepared);
    const double input_rms = InputRms(prepared);
    for (const double error : {0.0, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3}) {
      for (const bool spike : {false, true}) {
        std::vector<float> got(prepared.expected[0].begin(), prepared.expected[0].end());
        for (size_t i = 0; i < got.size(); ++i) {
          if (!spike || i == got.size() / 2) got[i] = static_cast<float>(prepared.expected[0][i] * (1 + error) + error);
        }
        GuardedArena arena(prepared.layout);
        ASSERT_TRUE(arena.Prepare(prepared.inputs, kCanary).ok());
        std::memcpy(arena.pointers()[2], got.data(), got.size() * sizeof(float));
        const CaseCheck verdict = CheckSnapshot(*task, prepared, arena.Snapshot(), kCanary);
        const Comparison judged = JudgeOutput(*task, prepared, 0, got.data(), input_rms);
        EXPECT_EQ(judged.passed, verdict.problem == CaseProblem::kNone)
            << "n=" << n << " error " << error << (spike ? " in one element: " : ": ") << verdict.description;
        (judged.passed ? passed : failed)++;
      }
    }
  }
  EXPECT_GT(passed, 5);
  EXPECT_GT(failed, 5);
}

TEST(CheckedShapes, SkipsLargeOrCostlyEvalShapesButNeverDevShapes) {
  Task task;
  task.dims = {"n"};
  task.inputs = {{"x", DType::kFloat32, {"n"}}};
  task.outputs = {{"y", DType::kFloat32, {"n"}}};
  task.flops_expression = "n*n";
  task.dev_shapes = {{{"n", 8}}, {{"n", 5000}}};
  task.eval_shapes = {{{"n", 1}}, {{"n", 8}}, {{"n", 1000}}, {{"n", 4096}}, {{"n", 5000}}};
  TaskCheckOptions options;
  options.max_tensor_elements = 4096;
  options.max_flops = 2'000'000;
  const auto shapes = CheckedShapes(task, options);
  // dev 8, dev 5000, eval 1, eval 1000: 8 only once, 4096 costs 16.8M flops, 5000 is too large.
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[1].at("n"), 5000);
  EXPECT_EQ(shapes[2].at("n"), 1);
  EXPECT_EQ(shapes[3].at("n"), 1000);
}

}  // namespace
}  // namespace ksmith
