// The optional [cuda] table of task.toml: a GPU reference and GPU-sized shapes, validated like
// [shapes], and the CUDA declarations that candidates and the GPU reference must match.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "task/task.h"
#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// Line numbers matter: the tests check that an error names the line it is on.
constexpr const char* kToyTask = R"TOML(name = "toy"
category = "elementwise"
description = "y[r, c] = x[r, c] * 2"
signature = "void toy(const float* x, float* y, int64_t rows, int64_t cols)"
flops = "rows*cols"
bytes = "8*rows*cols"
distributions = ["normal"]

[[inputs]]
name = "x"
dtype = "fp32"
shape = ["rows", "cols"]

[[outputs]]
name = "y"
dtype = "fp32"
shape = ["rows", "cols"]

[shapes]
dev = [ { rows = 2, cols = 3 } ]
eval = [ { rows = 1, cols = 1 } ]
bench = { rows = 64, cols = 64 }

[reference]
source = "reference.cc"
function = "toy_reference"

[cuda]
reference = "reference.cu"
reference_function = "toy_reference_cuda"
eval = [ { rows = 1, cols = 1 }, { rows = 4099, cols = 4097 } ]
bench = { rows = 8192, cols = 8192 }

[baseline.cuda]
source = "baseline_cuda.cu"
libraries = ["cublas"]
description = "one thread per element"
)TOML";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the template lacks: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

class CudaTaskTest : public ::testing::Test {
 protected:
  fs::path Write(const std::string& toml) {
    const fs::path directory = temp_.path() / "elementwise" / "toy";
    fs::create_directories(directory);
    std::ofstream(directory / "task.toml") << toml;
    for (const char* source : {"reference.cc", "reference.cu", "baseline_cuda.cu"}) {
      std::ofstream(directory / source) << "// " << source << "\n";
    }
    return directory;
  }

  std::string LoadError(const std::string& toml) {
    auto task = LoadTask(Write(toml));
    EXPECT_FALSE(task.ok()) << "the task loaded";
    if (task.ok()) return {};
    EXPECT_EQ(task.error().kind, ErrorKind::kParse) << task.error().message;
    return task.error().message;
  }

  ScopedTempDir temp_{"ksmith-cuda-task"};
};

TEST_F(CudaTaskTest, LoadsAValidCudaTable) {
  auto task = LoadTask(Write(kToyTask));
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_TRUE(task->cuda.has_value());
  EXPECT_EQ(task->cuda->reference_source, task->directory / "reference.cu");
  EXPECT_EQ(task->cuda->reference_function, "toy_reference_cuda");
  ASSERT_EQ(task->cuda->eval_shapes.size(), 2u);
  EXPECT_EQ(task->cuda->eval_shapes[1].at("rows"), 4099);
  EXPECT_EQ(task->cuda->eval_shapes[1].at("cols"), 4097);
  EXPECT_EQ(task->cuda->bench_shape.at("cols"), 8192);
  // The CPU shapes are untouched: each backend verifies on its own shapes.
  ASSERT_EQ(task->eval_shapes.size(), 1u);
  EXPECT_EQ(task->bench_shape.at("rows"), 64);
  ASSERT_TRUE(task->baselines.contains("cuda"));
  EXPECT_EQ(task->baselines.at("cuda").source, task->directory / "baseline_cuda.cu");
  EXPECT_EQ(task->baselines.at("cuda").libraries, (std::vector<std::string>{"cublas"}));
}

TEST_F(CudaTaskTest, TaskWithoutACudaTableHasNoCudaVersion) {
  std::string toml = kToyTask;
  toml = toml.substr(0, toml.find("[cuda]"));
  auto task = LoadTask(Write(toml));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_FALSE(task->cuda.has_value());
  EXPECT_FALSE(task->baselines.contains("cuda"));
}

TEST_F(CudaTaskTest, MissingReferenceFileIsRefusedOnItsLine) {
  const std::string message =
      LoadError(Replace(kToyTask, "reference = \"reference.cu\"", "reference = \"gone.cu\""));
  EXPECT_TRUE(Contains(message, "cuda reference source"));
  EXPECT_TRUE(Contains(message, "gone.cu"));
  EXPECT_TRUE(Contains(message, "task.toml:29"));
}

TEST_F(CudaTaskTest, MissingReferenceFunctionIsNamed) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "reference_function = \"toy_reference_cuda\"\n", "")),
                       "missing required key 'reference_function'"));
}

TEST_F(CudaTaskTest, ShapeMissingADimIsRefusedOnItsLine) {
  const std::string message =
      LoadError(Replace(kToyTask, "{ rows = 4099, cols = 4097 }", "{ rows = 4099 }"));
  EXPECT_TRUE(Contains(message, "shape gives no value for dim 'cols'"));
  EXPECT_TRUE(Contains(message, "task.toml:31"));
}

TEST_F(CudaTaskTest, BadShapesAreRefusedLikeTheCpuShapes) {
  EXPECT_TRUE(Contains(
      LoadError(Replace(kToyTask, "{ rows = 4099, cols = 4097 }", "{ rows = 0, cols = 4097 }")),
      "dim 'rows' must be a positive integer"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "bench = { rows = 8192, cols = 8192 }",
                                         "bench = { rows = 8192, cols = 8192, depth = 2 }")),
                       "shape names 'depth', which is not a dim of the signature"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "bench = { rows = 8192, cols = 8192 }\n", "")),
                       "[cuda] needs a 'bench' shape"));
  EXPECT_TRUE(Contains(
      LoadError(Replace(kToyTask, "eval = [ { rows = 1, cols = 1 }, { rows = 4099", "eval = [] #")),
      "[cuda] needs a non-empty 'eval' array"));
}

TEST_F(CudaTaskTest, CostExpressionsAreCheckedOnTheCudaShapesToo) {
  // 0-rows+2 is positive on every CPU shape (rows = 1) and negative on the GPU's rows = 4099.
  const std::string message = LoadError(Replace(kToyTask, "flops = \"rows*cols\"", "flops = \"0-rows+2\""));
  EXPECT_TRUE(Contains(message, "'flops' is negative at rows=4099, cols=4097"));
}

TEST_F(CudaTaskTest, CudaTableThatIsNotATableIsRefused) {
  std::string toml = kToyTask;
  toml = toml.substr(0, toml.find("[cuda]"));
  toml = Replace(toml, "distributions = [\"normal\"]", "distributions = [\"normal\"]\ncuda = 3");
  EXPECT_TRUE(Contains(LoadError(toml), "[cuda] must be a table"));
}

TEST_F(CudaTaskTest, CudaDeclarationsAppendTheStream) {
  auto task = LoadTask(Write(kToyTask));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->CudaDeclaration(),
            "extern \"C\" void toy(const float* x, float* y, int64_t rows, int64_t cols, "
            "cudaStream_t stream)");
  EXPECT_EQ(task->CudaReferenceDeclaration(),
            "extern \"C\" void toy_reference_cuda(const float* x, double* y, int64_t rows, "
            "int64_t cols, cudaStream_t stream)");
  // The CPU declarations are unchanged.
  EXPECT_EQ(task->signature.Declaration(),
            "extern \"C\" void toy(const float* x, float* y, int64_t rows, int64_t cols)");
  EXPECT_EQ(task->ReferenceDeclaration(),
            "extern \"C\" void toy_reference(const float* x, double* y, int64_t rows, int64_t cols)");
}

TEST(CudaTask, EveryBuiltInTaskHasACudaVersionWithLargeShapes) {
  const fs::path root = fs::path(KSMITH_SOURCE_DIR) / "tasks";
  size_t checked = 0;
  for (const auto& category : fs::directory_iterator(root)) {
    if (!category.is_directory()) continue;
    for (const auto& folder : fs::directory_iterator(category.path())) {
      if (!fs::exists(folder.path() / "task.toml")) continue;
      auto task = LoadTask(folder.path());
      ASSERT_TRUE(task.ok()) << folder.path() << ": " << task.error().message;
      ASSERT_TRUE(task->cuda.has_value()) << task->name;
      ++checked;
      EXPECT_TRUE(fs::exists(task->cuda->reference_source)) << task->name;
      EXPECT_EQ(task->cuda->reference_function, task->name + "_reference_cuda");
      ASSERT_TRUE(task->baselines.contains("cuda")) << task->name;
      EXPECT_EQ(task->baselines.at("cuda").source.extension(), ".cu") << task->name;
      bool tiny = false;
      bool odd = false;
      bool fills_a_gpu = false;
      for (const auto& shape : task->cuda->eval_shapes) {
        const int64_t bytes = task->MinimumBytes(shape);
        // At least one eval shape must fill an H100: by the data it moves, or for matmul, by
        // the work it does.
        fills_a_gpu |= bytes >= (int64_t{64} << 20) || task->Flops(shape) >= int64_t{4'000'000'000};
        // Eval shapes must fit comfortably on one GPU together with the double reference.
        EXPECT_LE(bytes, int64_t{1} << 30) << task->name << " " << task->FormatShape(shape);
        for (const auto& [dim, value] : shape) {
          tiny |= value == 1;
          odd |= value % 8 != 0;
        }
      }
      EXPECT_TRUE(tiny) << task->name;
      EXPECT_TRUE(odd) << task->name;
      // A reduction to one scalar keeps its length moderate: the tolerance grows with the
      // accumulation length, and at tens of millions of terms a zero would pass.
      bool scalar_only = true;
      for (const auto& output : task->outputs) scalar_only &= output.shape.empty();
      EXPECT_TRUE(fills_a_gpu || scalar_only) << task->name;
      // The bench moves enough data to time the memory system, or does enough work to time the
      // arithmetic units (GEMM-like tasks).
      const DimValues& bench = task->cuda->bench_shape;
      EXPECT_TRUE(task->MinimumBytes(bench) >= (int64_t{128} << 20) || task->Flops(bench) >= int64_t{4'000'000'000})
          << task->name;
    }
  }
  EXPECT_GE(checked, 9u);
}

}  // namespace
}  // namespace ksmith
