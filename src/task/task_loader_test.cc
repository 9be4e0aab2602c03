// Loading task.toml: every built-in task loads, and each kind of malformed file is refused with
// a message that names the file, the line where known, and what is wrong.
#include "task/task_loader.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// Line numbers matter: some tests check that an error names the line it is on.
constexpr const char* kToyTask = R"TOML(name = "toy"
category = "elementwise"
level = 2
description = "y[r, c] = x[r, c] + b[c]"
pytorch = "y = x + b"
signature = "void toy(const float* x, const float* b, float* y, int64_t rows, int64_t cols)"
flops = "rows*cols"
bytes = "4*(2*rows*cols + cols)"
accumulation = "cols"
distributions = ["normal", "ties"]
allowed_libraries = ["blas"]

[[inputs]]
name = "x"
dtype = "fp32"
shape = ["rows", "cols"]

[[inputs]]
name = "b"
dtype = "fp32"
shape = ["cols"]

[[outputs]]
name = "y"
dtype = "fp32"
shape = ["rows", "cols"]

[shapes]
dev = [ { rows = 2, cols = 3 } ]
eval = [ { rows = 1, cols = 1 }, { rows = 5, cols = 7 } ]
bench = { rows = 64, cols = 64 }

[reference]
source = "reference.cc"
function = "toy_reference"

[baseline.cpu]
source = "baseline_cpu.cc"
libraries = []
description = "plain loop"

[tolerance.fp32]
norm = 2e-5
elem = 3e-4
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

class TaskLoaderTest : public ::testing::Test {
 protected:
  // Writes tasks/elementwise/<folder>/ with task.toml and both sources.
  fs::path Write(const std::string& toml, const std::string& folder = "toy") {
    const fs::path directory = temp_.path() / "elementwise" / folder;
    fs::create_directories(directory);
    std::ofstream(directory / "task.toml") << toml;
    std::ofstream(directory / "reference.cc") << "// reference\n";
    std::ofstream(directory / "baseline_cpu.cc") << "// baseline\n";
    return directory;
  }

  // Loads `toml` and returns the error message; fails the test if it loads.
  std::string LoadError(const std::string& toml) {
    auto task = LoadTask(Write(toml));
    EXPECT_FALSE(task.ok()) << "the task loaded";
    if (task.ok()) return {};
    EXPECT_EQ(task.error().kind, ErrorKind::kParse) << task.error().message;
    EXPECT_TRUE(Contains(task.error().message, "task.toml"));
    return task.error().message;
  }

  ScopedTempDir temp_{"ksmith-task-loader"};
};

TEST(LoadTask, LoadsEveryBuiltInTask) {
  const fs::path root = fs::path(KSMITH_SOURCE_DIR) / "tasks";
  size_t loaded = 0;
  for (const auto& category : fs::directory_iterator(root)) {
    if (!category.is_directory()) continue;
    for (const auto& folder : fs::directory_iterator(category.path())) {
      if (!fs::exists(folder.path() / "task.toml")) continue;
      auto task = LoadTask(folder.path());
      ASSERT_TRUE(task.ok()) << folder.path() << ": " << task.error().message;
      ++loaded;
      EXPECT_EQ(task->name, folder.path().filename().string());
      EXPECT_EQ(task->category, category.path().filename().string());
      // The function is the task's name, or starts with it where the name is a C library
      // function (tanh -> tanh_forward).
      EXPECT_TRUE(task->signature.function.starts_with(task->name)) << task->signature.function;
      EXPECT_EQ(task->bindings.size(), task->signature.parameters.size());
      EXPECT_FALSE(task->outputs.empty()) << task->name;
      EXPECT_FALSE(task->eval_shapes.empty()) << task->name;
      EXPECT_FALSE(task->dev_shapes.empty()) << task->name;
      EXPECT_FALSE(task->distributions.empty()) << task->name;
      EXPECT_EQ(task->bench_shape.size(), task->dims.size()) << task->name;
      EXPECT_TRUE(fs::exists(task->reference_source)) << task->name;
      ASSERT_TRUE(task->baselines.contains("cpu")) << task->name;
      EXPECT_TRUE(fs::exists(task->baselines.at("cpu").source)) << task->name;
      // The tuner, the default strategy without a model, starts from these.
      for (const char* backend : {"cpu", "cuda"}) {
        ASSERT_TRUE(task->seeds.contains(backend)) << task->name << " has no [seed] " << backend;
        EXPECT_TRUE(fs::exists(task->seeds.at(backend))) << task->name;
      }
      for (const auto& shape : task->eval_shapes) {
        EXPECT_GE(task->Flops(shape), 0) << task->name;
        EXPECT_GT(task->MinimumBytes(shape), 0) << task->name;
        EXPECT_GE(task->Accumulation(shape), 1.0) << task->name;
      }
    }
  }
  EXPECT_GE(loaded, 9u);
}

TEST_F(TaskLoaderTest, LoadsAValidTaskWithAllItsFields) {
  auto task = LoadTask(Write(kToyTask));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "toy");
  EXPECT_EQ(task->category, "elementwise");
  EXPECT_EQ(task->level, 2);
  EXPECT_EQ(task->pytorch, "y = x + b");
  EXPECT_EQ(task->dims, (std::vector<std::string>{"rows", "cols"}));
  ASSERT_EQ(task->bindings.size(), 5u);
  EXPECT_EQ(task->bindings[0].role, ParameterRole::kInput);
  EXPECT_EQ(task->bindings[1].role, ParameterRole::kInput);
  EXPECT_EQ(task->bindings[1].index, 1u);
  EXPECT_EQ(task->bindings[2].role, ParameterRole::kOutput);
  EXPECT_EQ(task->bindings[3].role, ParameterRole::kDim);
  EXPECT_EQ(task->bindings[4].index, 1u);
  ASSERT_EQ(task->eval_shapes.size(), 2u);
  EXPECT_EQ(task->eval_shapes[1].at("cols"), 7);
  EXPECT_EQ(task->bench_shape.at("rows"), 64);
  EXPECT_EQ(task->distributions, (std::vector<Distribution>{Distribution::kNormal, Distribution::kTies}));
  EXPECT_EQ(task->allowed_libraries, (std::vector<std::string>{"blas"}));
  EXPECT_EQ(task->reference_function, "toy_reference");
  EXPECT_EQ(task->reference_source, task->directory / "reference.cc");
  EXPECT_EQ(task->baselines.at("cpu").description, "plain loop");
  EXPECT_DOUBLE_EQ(task->ToleranceFor(DType::kFloat32).norm, 2e-5);
  EXPECT_DOUBLE_EQ(task->ToleranceFor(DType::kFloat32).elem, 3e-4);
  EXPECT_DOUBLE_EQ(task->ToleranceFor(DType::kFloat32).noise, 0.0);  // absent: none
  EXPECT_TRUE(task->seeds.empty()) << "[seed] is optional";
}

// A pooling-like task: the output width is derived from the input width and the window.
std::string WithDerivedWidth(const std::string& shapes) {
  std::string toml = Replace(kToyTask, "int64_t rows, int64_t cols)", "int64_t rows, int64_t cols, int64_t out)");
  toml = Replace(toml, "[[outputs]]\nname = \"y\"\ndtype = \"fp32\"\nshape = [\"rows\", \"cols\"]",
                 "[[outputs]]\nname = \"y\"\ndtype = \"fp32\"\nshape = [\"rows\", \"out\"]");
  toml = Replace(toml, "[shapes]", "[derived]\nout = \"(cols - 3) / 2 + 1\"\n\n[shapes]");
  return Replace(toml, "eval = [ { rows = 1, cols = 1 }, { rows = 5, cols = 7 } ]", shapes);
}

TEST_F(TaskLoaderTest, AnInputMayDrawItsOwnDistributionScaleOffsetAndDomain) {
  auto task = LoadTask(Write(Replace(kToyTask, "name = \"b\"\ndtype = \"fp32\"\n",
                                     "name = \"b\"\ndtype = \"fp32\"\ndistribution = \"uniform\"\n"
                                     "scale = 0.25\noffset = 1\nnonnegative = true\nheld = true\n")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_TRUE(task->inputs[0].draw.IsDefault());
  EXPECT_TRUE(task->inputs[1].draw.held);
  const InputDraw& draw = task->inputs[1].draw;
  ASSERT_TRUE(draw.own.has_value());
  EXPECT_EQ(*draw.own, Distribution::kUniform);
  EXPECT_DOUBLE_EQ(draw.scale, 0.25);
  EXPECT_DOUBLE_EQ(draw.offset, 1.0);
  EXPECT_TRUE(draw.nonnegative);
  EXPECT_TRUE(task->random_shapes);
}

TEST_F(TaskLoaderTest, BadInputDrawsAreRefusedWithTheirLine) {
  const std::string input_b = "name = \"b\"\ndtype = \"fp32\"\n";
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, input_b, input_b + "distribution = \"gaussian\"\n")), "gaussian"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, input_b, input_b + "scale = -1.0\n")), "'scale' must be positive"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, input_b, input_b + "nonnegative = 1\n")), "true or false"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, input_b, input_b + "held = \"yes\"\n")), "'held' must be true or false"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "name = \"y\"\n", "name = \"y\"\nheld = true\n")),
                       "applies to inputs only"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "name = \"y\"\n", "name = \"y\"\nscale = 2.0\n")),
                       "applies to inputs only"));
}

// The toy task with b an int32 input: `range` as given.
std::string WithIntegerInput(const std::string& range) {
  std::string toml = Replace(kToyTask, "const float* b", "const int32_t* b");
  return Replace(toml, "name = \"b\"\ndtype = \"fp32\"\n", "name = \"b\"\ndtype = \"int32\"\n" + range);
}

TEST_F(TaskLoaderTest, AnInt32InputIsDrawnFromItsRangeEvaluatedAtEachShape) {
  auto task = LoadTask(Write(WithIntegerInput("range = [0, \"rows + 1\"]\n")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->inputs[1].integer_range, (std::vector<std::string>{"0", "rows + 1"}));
  auto draw = task->DrawAt(task->inputs[1], task->bench_shape);
  ASSERT_TRUE(draw.ok()) << draw.error().message;
  ASSERT_TRUE(draw->integers.has_value());
  EXPECT_EQ(*draw->integers, (IntegerRange{0, 65}));
  EXPECT_FALSE(task->DrawAt(task->inputs[0], task->bench_shape)->integers.has_value());
}

TEST_F(TaskLoaderTest, BadIntegerInputsAreRefusedSayingWhatIsMissing) {
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("")), "needs 'range = [low, high]'"));
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("range = [0]\n")), "'range' must be [low, high]"));
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("range = [0, 1.5]\n")), "integer or a dim expression"));
  // Empty at the one-row eval shape (rows - 1 = 0).
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("range = [0, \"rows - 1\"]\n")), "is empty at rows=1"));
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("range = [0, \"depth\"]\n")), "depth"));
  EXPECT_TRUE(Contains(LoadError(WithIntegerInput("range = [0, 2]\ndistribution = \"normal\"\n")),
                       "does not apply to an int32 input"));
  const std::string input_b = "name = \"b\"\ndtype = \"fp32\"\n";
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, input_b, input_b + "range = [0, 2]\n")),
                       "'range' applies to int32 inputs only"));
}

TEST_F(TaskLoaderTest, ABaselineMayDeclareAbsoluteFoldersTheWorkerReads) {
  auto task = LoadTask(Write(Replace(kToyTask, "description = \"plain loop\"\n",
                                     "description = \"plain loop\"\nreadable = [\"/opt/torch/site-packages\"]\n")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_EQ(task->baselines.at("cpu").readable.size(), 1u);
  EXPECT_EQ(task->baselines.at("cpu").readable[0], fs::path("/opt/torch/site-packages"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "description = \"plain loop\"\n",
                                         "description = \"plain loop\"\nreadable = [\"site-packages\"]\n")),
                       "must be an absolute path"));
}

TEST_F(TaskLoaderTest, RandomShapesCanBeTurnedOff) {
  auto task = LoadTask(Write(Replace(kToyTask, "[shapes]\n", "[shapes]\nrandom = false\n")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_FALSE(task->random_shapes);
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "[shapes]\n", "[shapes]\nrandom = \"no\"\n")), "true or false"));
}

TEST_F(TaskLoaderTest, DerivedDimsAreComputedForEveryShape) {
  auto task = LoadTask(Write(WithDerivedWidth("eval = [ { rows = 1, cols = 3 }, { rows = 5, cols = 8 } ]")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_EQ(task->derived_dims.size(), 1u);
  EXPECT_TRUE(task->IsDerived("out"));
  EXPECT_FALSE(task->IsDerived("cols"));
  EXPECT_EQ(task->eval_shapes[0].at("out"), 1);
  EXPECT_EQ(task->eval_shapes[1].at("out"), 3);
  EXPECT_EQ(task->dev_shapes[0].at("out"), 1);
  EXPECT_EQ(task->bench_shape.at("out"), 31);
  auto drawn = task->WithDerivedDims({{"rows", 2}, {"cols", 2}});
  EXPECT_FALSE(drawn.ok()) << "a window wider than its input has no output";
}

TEST_F(TaskLoaderTest, ShapesThatGiveADerivedDimOrLeaveItBelowOneAreRefused) {
  EXPECT_TRUE(Contains(LoadError(WithDerivedWidth("eval = [ { rows = 1, cols = 3, out = 1 } ]")),
                       "dim 'out' is derived"));
  EXPECT_TRUE(Contains(LoadError(WithDerivedWidth("eval = [ { rows = 1, cols = 2 } ]")), "derived dim out"));
  const std::string unknown = Replace(WithDerivedWidth("eval = [ { rows = 1, cols = 3 } ]"),
                                      "out = \"(cols - 3) / 2 + 1\"", "out = \"(cols - window) / 2 + 1\"");
  EXPECT_TRUE(Contains(LoadError(unknown), "only free dims"));
}

TEST_F(TaskLoaderTest, LoadsSeedKernelsByBackend) {
  const fs::path directory =
      Write(std::string(kToyTask) + "\n[seed]\ncpu = \"seed_cpu.cc\"\ncuda = \"seed_cuda.cu\"\n");
  std::ofstream(directory / "seed_cpu.cc") << "// @tune BLOCK: 64, 128\n";
  std::ofstream(directory / "seed_cuda.cu") << "// @tune THREADS: 128, 256\n";
  auto task = LoadTask(directory);
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_EQ(task->seeds.size(), 2u);
  EXPECT_EQ(task->seeds.at("cpu"), directory / "seed_cpu.cc");
  EXPECT_EQ(task->seeds.at("cuda"), directory / "seed_cuda.cu");
}

TEST_F(TaskLoaderTest, MissingSeedFileIsRefusedByName) {
  const std::string message = LoadError(std::string(kToyTask) + "\n[seed]\ncpu = \"nowhere.cc\"\n");
  EXPECT_TRUE(Contains(message, "seed source"));
  EXPECT_TRUE(Contains(message, "nowhere.cc"));
  EXPECT_TRUE(Contains(message, "does not exist"));
}

TEST_F(TaskLoaderTest, SeedThatIsNotAFileNameIsRefused) {
  EXPECT_TRUE(Contains(LoadError(std::string(kToyTask) + "\n[seed]\ncpu = 3\n"), "'cpu' must be a file name"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "level = 2", "level = 2\nseed = \"seed_cpu.cc\"")), "[seed] must be a table"));
}

TEST_F(TaskLoaderTest, MissingTaskFileIsNotFound) {
  auto task = LoadTask(temp_.path() / "nothing-here");
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.error().kind, ErrorKind::kNotFound);
}

TEST_F(TaskLoaderTest, BadTomlSyntaxNamesFileAndLine) {
  const std::string message = LoadError(Replace(kToyTask, "level = 2", "level = = 2"));
  EXPECT_TRUE(Contains(message, "task.toml:3:")) << message;
}

TEST_F(TaskLoaderTest, MissingRequiredKeyIsNamed) {
  const std::string message = LoadError(Replace(kToyTask, "description = \"y[r, c] = x[r, c] + b[c]\"\n", ""));
  EXPECT_TRUE(Contains(message, "missing required key 'description'"));
}

TEST_F(TaskLoaderTest, NameMustEqualTheFolderName) {
  const std::string message = LoadError(Replace(kToyTask, "name = \"toy\"", "name = \"other\""));
  EXPECT_TRUE(Contains(message, "name 'other' must equal the folder name 'toy'"));
  EXPECT_TRUE(Contains(message, "task.toml:1:"));
}

TEST_F(TaskLoaderTest, ShapeMissingADimIsRefused) {
  const std::string message = LoadError(Replace(kToyTask, "{ rows = 5, cols = 7 }", "{ rows = 5 }"));
  EXPECT_TRUE(Contains(message, "shape gives no value for dim 'cols'"));
  EXPECT_TRUE(Contains(message, "task.toml:30"));
}

TEST_F(TaskLoaderTest, ShapeNamingAnUnknownDimIsRefused) {
  const std::string message =
      LoadError(Replace(kToyTask, "bench = { rows = 64, cols = 64 }", "bench = { rows = 64, cols = 64, depth = 2 }"));
  EXPECT_TRUE(Contains(message, "shape names 'depth', which is not a dim of the signature"));
}

TEST_F(TaskLoaderTest, NonPositiveDimIsRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "{ rows = 1, cols = 1 }", "{ rows = 0, cols = 1 }")),
                       "dim 'rows' must be a positive integer"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "{ rows = 1, cols = 1 }", "{ rows = 1, cols = \"1\" }")),
                       "dim 'cols' must be a positive integer"));
}

TEST_F(TaskLoaderTest, TensorShapeWithAnUnknownDimIsRefused) {
  const std::string message = LoadError(Replace(kToyTask, "shape = [\"cols\"]", "shape = [\"cols\", \"depth\"]"));
  EXPECT_TRUE(Contains(message, "tensor 'b' uses dim 'depth', which is not an int64_t parameter"));
}

TEST_F(TaskLoaderTest, SignatureParameterThatIsNotDeclaredIsRefused) {
  const std::string message = LoadError(Replace(kToyTask, "float* y, int64_t rows", "float* y, float* z, int64_t rows"));
  EXPECT_TRUE(Contains(message, "parameter 'z' is neither a declared input or output nor an int64_t dim"));
  EXPECT_TRUE(Contains(message, "task.toml:6"));
}

TEST_F(TaskLoaderTest, DimThatIsNotInt64IsRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "int64_t rows", "int rows")), "parameter 'rows' is neither"));
}

TEST_F(TaskLoaderTest, TensorThatIsNotInTheSignatureIsRefused) {
  const std::string extra = "[[outputs]]\nname = \"z\"\ndtype = \"fp32\"\nshape = [\"rows\"]\n\n[shapes]";
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "[shapes]", extra)),
                       "tensor 'z' is not a parameter of the signature"));
}

TEST_F(TaskLoaderTest, InputsMustBeConstFloatPointersAndOutputsMutable) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "const float* x", "float* x")),
                       "input 'x' must be declared 'const float* x'"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "float* y", "const float* y")),
                       "output 'y' must be declared 'float* y'"));
}

TEST_F(TaskLoaderTest, BadSignatureTextIsRefusedWithTheParserMessage) {
  const std::string message = LoadError(Replace(kToyTask, "void toy(", "int toy("));
  EXPECT_TRUE(Contains(message, "must start with 'void '"));
}

TEST_F(TaskLoaderTest, UnknownDistributionIsRefusedOnItsLine) {
  const std::string message = LoadError(Replace(kToyTask, "[\"normal\", \"ties\"]", "[\"normal\", \"gaussian\"]"));
  EXPECT_TRUE(Contains(message, "unknown distribution 'gaussian'"));
  EXPECT_TRUE(Contains(message, "task.toml:10"));
}

TEST_F(TaskLoaderTest, EmptyDistributionListIsRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "[\"normal\", \"ties\"]", "[]")),
                       "name at least one distribution"));
}

TEST_F(TaskLoaderTest, HalfPrecisionTensorsNeedTheirCpuTypeInTheSignature) {
  const std::string fp16 = Replace(kToyTask, "name = \"x\"\ndtype = \"fp32\"", "name = \"x\"\ndtype = \"fp16\"");
  const std::string message = LoadError(fp16);
  EXPECT_TRUE(Contains(message, "input 'x' must be declared 'const _Float16* x' (its dtype is fp16)"));
  EXPECT_TRUE(Contains(message, "task.toml"));
  auto task = LoadTask(Write(Replace(fp16, "const float* x", "const _Float16* x")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->inputs[0].dtype, DType::kFloat16);
  EXPECT_NE(task->CudaDeclaration().find("const __half* x"), std::string::npos) << task->CudaDeclaration();
  EXPECT_NE(task->signature.Declaration().find("const _Float16* x"), std::string::npos);

  const std::string bf16 = Replace(Replace(kToyTask, "name = \"y\"\ndtype = \"fp32\"", "name = \"y\"\ndtype = \"bf16\""),
                                   "float* y", "uint16_t* y");
  auto bf16_task = LoadTask(Write(bf16));
  ASSERT_TRUE(bf16_task.ok()) << bf16_task.error().message;
  EXPECT_NE(bf16_task->CudaDeclaration().find("__nv_bfloat16* y"), std::string::npos) << bf16_task->CudaDeclaration();
  EXPECT_NE(bf16_task->CudaReferenceDeclaration().find("double* y"), std::string::npos);
  EXPECT_DOUBLE_EQ(bf16_task->ToleranceFor(DType::kBFloat16).elem, 2 * 0x1p-8);
}

TEST_F(TaskLoaderTest, AnInt32OutputIsAnIndexAndNeedsNoRange) {
  auto task = LoadTask(Write(Replace(Replace(kToyTask, "name = \"y\"\ndtype = \"fp32\"", "name = \"y\"\ndtype = \"int32\""),
                                     "float* y", "int32_t* y")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->outputs[0].dtype, DType::kInt32);
}

TEST_F(TaskLoaderTest, UnknownDtypeIsRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "name = \"y\"\ndtype = \"fp32\"", "name = \"y\"\ndtype = \"fp64\"")),
                       "unknown dtype 'fp64'"));
}

TEST_F(TaskLoaderTest, CostExpressionWithAnUnknownDimIsRefused) {
  const std::string message = LoadError(Replace(kToyTask, "flops = \"rows*cols\"", "flops = \"rows*depth\""));
  EXPECT_TRUE(Contains(message, "'flops'"));
  EXPECT_TRUE(Contains(message, "unknown dim 'depth'"));
  EXPECT_TRUE(Contains(message, "column 6"));
  EXPECT_TRUE(Contains(message, "task.toml:7"));
}

TEST_F(TaskLoaderTest, NegativeCostIsRefusedWithTheShape) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "bytes = \"4*(2*rows*cols + cols)\"", "bytes = \"0-cols\"")),
                       "'bytes' is negative at rows=1, cols=1"));
}

TEST_F(TaskLoaderTest, MissingBenchOrEvalShapesAreRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "bench = { rows = 64, cols = 64 }\n", "")),
                       "needs a 'bench' shape"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "eval = [ { rows = 1, cols = 1 }, { rows = 5, cols = 7 } ]", "eval = []")),
                       "needs a non-empty 'eval' array"));
}

TEST_F(TaskLoaderTest, MissingSourceFilesAreRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "source = \"reference.cc\"", "source = \"missing.cc\"")),
                       "reference source"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "source = \"baseline_cpu.cc\"", "source = \"gone.cc\"")),
                       "baseline source"));
}

TEST_F(TaskLoaderTest, NonPositiveToleranceIsRefused) {
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "norm = 2e-5", "norm = -1.0")),
                       "tolerances must be positive"));
}

TEST_F(TaskLoaderTest, ToleranceNoiseIsReadAndBounded) {
  auto task = LoadTask(Write(Replace(kToyTask, "elem = 3e-4", "elem = 3e-4\nnoise = 4")));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_DOUBLE_EQ(task->ToleranceFor(DType::kFloat32).noise, 4.0);
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "elem = 3e-4", "elem = 3e-4\nnoise = -1.0")), "noise must be between 0 and 64"));
  EXPECT_TRUE(Contains(LoadError(Replace(kToyTask, "elem = 3e-4", "elem = 3e-4\nnoise = 100.0")), "noise must be between 0 and 64"));
}

TEST_F(TaskLoaderTest, OutputWithTheNameOfAnInputIsRefused) {
  const std::string toml = Replace(Replace(kToyTask, "name = \"y\"", "name = \"x\""), "float* y, ", "");
  LoadError(toml);
}

TEST_F(TaskLoaderTest, TaskWithoutOutputsIsRefused) {
  std::string toml = Replace(kToyTask, "[[outputs]]\nname = \"y\"\ndtype = \"fp32\"\nshape = [\"rows\", \"cols\"]\n",
                             "");
  toml = Replace(toml, "allowed_libraries = [\"blas\"]", "allowed_libraries = [\"blas\"]\noutputs = []");
  toml = Replace(toml, "float* y, ", "");
  LoadError(toml);
}

}  // namespace
}  // namespace ksmith
