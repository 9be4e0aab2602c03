// Task helpers: element counts, the cost model, tolerances, the reference's declaration, shapes.
#include "task/task.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Task LoadBuiltIn(const std::string& category, const std::string& name) {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / category / name);
  if (!task.ok()) throw std::runtime_error(task.error().message);
  return std::move(task.value());
}

class MatmulTask : public ::testing::Test {
 protected:
  Task task_ = LoadBuiltIn("gemm", "matmul");
  DimValues shape_ = {{"m", 4}, {"n", 5}, {"k", 6}};
};

TEST_F(MatmulTask, ElementsMultipliesTheTensorsDims) {
  ASSERT_EQ(task_.inputs.size(), 2u);
  EXPECT_EQ(task_.Elements(task_.inputs[0], shape_), 4 * 6);   // a[m, k]
  EXPECT_EQ(task_.Elements(task_.inputs[1], shape_), 6 * 5);   // b[k, n]
  EXPECT_EQ(task_.Elements(task_.outputs[0], shape_), 4 * 5);  // c[m, n]
}

TEST_F(MatmulTask, CostModelEvaluatesAtTheShape) {
  EXPECT_EQ(task_.Flops(shape_), 2 * 4 * 5 * 6);
  EXPECT_EQ(task_.MinimumBytes(shape_), 4 * (4 * 6 + 6 * 5 + 4 * 5));
  EXPECT_DOUBLE_EQ(task_.Accumulation(shape_), 6.0);
}

TEST_F(MatmulTask, DimsFollowTheSignatureOrder) {
  EXPECT_EQ(task_.dims, (std::vector<std::string>{"m", "n", "k"}));
  EXPECT_EQ(task_.FormatShape(shape_), "m=4, n=5, k=6");
}

TEST_F(MatmulTask, ReferenceDeclarationHasDoubleOutputsAndTheReferenceName) {
  EXPECT_EQ(task_.ReferenceDeclaration(),
            "extern \"C\" void matmul_reference(const float* a, const float* b, double* c, "
            "int64_t m, int64_t n, int64_t k)");
  // The candidate's own signature is unchanged.
  EXPECT_EQ(task_.signature.Declaration(),
            "extern \"C\" void matmul(const float* a, const float* b, float* c, int64_t m, "
            "int64_t n, int64_t k)");
}

TEST_F(MatmulTask, ToleranceDefaultsWhenTheTaskGivesNone) {
  Task copy = task_;
  copy.tolerances.clear();
  const Tolerance tolerance = copy.ToleranceFor(DType::kFloat32);
  EXPECT_DOUBLE_EQ(tolerance.norm, Tolerance{}.norm);
  EXPECT_DOUBLE_EQ(tolerance.elem, Tolerance{}.elem);
  copy.tolerances[DType::kFloat32] = Tolerance{3e-5, 7e-4};
  EXPECT_DOUBLE_EQ(copy.ToleranceFor(DType::kFloat32).norm, 3e-5);
  EXPECT_DOUBLE_EQ(copy.ToleranceFor(DType::kFloat32).elem, 7e-4);
  // A 16-bit output's default adds one rounding to its own type.
  EXPECT_DOUBLE_EQ(copy.ToleranceFor(DType::kFloat16).norm, 0x1p-11);
  EXPECT_DOUBLE_EQ(copy.ToleranceFor(DType::kBFloat16).elem, 2 * 0x1p-8);
}

TEST_F(MatmulTask, EvalShapesIncludeSizesThatAreNotMultiplesOfTheVectorWidth) {
  bool odd = false;
  bool tiny = false;
  for (const auto& shape : task_.eval_shapes) {
    for (const auto& [dim, value] : shape) {
      odd |= value % 8 != 0;
      tiny |= value == 1;
    }
  }
  EXPECT_TRUE(odd);
  EXPECT_TRUE(tiny);
}

TEST(Task, CostModelWithAnInvalidExpressionIsALogicError) {
  // The loader validates expressions, so a failure here is ksmith's own bug: it throws.
  Task task;
  task.flops_expression = "2*q";
  task.bytes_expression = "n/0";
  task.accumulation_expression = "(";
  const DimValues shape = {{"n", 3}};
  EXPECT_THROW(task.Flops(shape), std::logic_error);
  EXPECT_THROW(task.MinimumBytes(shape), std::logic_error);
  EXPECT_THROW(task.Accumulation(shape), std::logic_error);
}

TEST(Task, ElementsOfAScalarShapedTensorIsOne) {
  Task task;
  TensorSpec scalar;
  scalar.name = "s";
  EXPECT_EQ(task.Elements(scalar, {}), 1);
}

TEST(Task, ReferenceDeclarationOfEveryBuiltInTaskUsesDoubleOnlyForOutputs) {
  for (const auto& [category, name] : std::vector<std::pair<std::string, std::string>>{
           {"elementwise", "vector_add"}, {"normalization", "layernorm"}, {"reduction", "row_sum"}}) {
    const Task task = LoadBuiltIn(category, name);
    const std::string declaration = task.ReferenceDeclaration();
    EXPECT_NE(declaration.find(task.reference_function + "("), std::string::npos) << declaration;
    for (const auto& output : task.outputs) {
      EXPECT_NE(declaration.find("double* " + output.name), std::string::npos) << declaration;
    }
    for (const auto& input : task.inputs) {
      EXPECT_NE(declaration.find("const float* " + input.name), std::string::npos) << declaration;
    }
  }
}

TEST(Task, FormatShapeListsDimsInSignatureOrderNotAlphabetically) {
  const Task task = LoadBuiltIn("normalization", "softmax");
  EXPECT_EQ(task.FormatShape({{"cols", 10}, {"rows", 4}}), "rows=4, cols=10");
}

}  // namespace
}  // namespace ksmith
