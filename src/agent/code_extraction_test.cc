#include "agent/code_extraction.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

constexpr const char* kKernel = R"(#include <cstdint>
extern "C" void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
}
)";

std::string Fenced(const std::string& language, const std::string& code) {
  return "```" + language + "\n" + code + "```\n";
}

TEST(CodeExtraction, TakesTheBlockThatDefinesTheFunctionWhateverItsTag) {
  for (const char* language : {"cpp", "c++", "cuda", "C", ""}) {
    const std::string answer = "Here is the kernel:\n\n" + Fenced(language, kKernel) + "\nIt is fast.";
    auto kernel = ExtractKernel(answer, "relu");
    ASSERT_TRUE(kernel.ok()) << language << ": " << kernel.error().message;
    EXPECT_EQ(kernel->source, kKernel);
    EXPECT_EQ(kernel->blocks_found, 1u);
  }
}

TEST(CodeExtraction, OfSeveralDefiningBlocksTakesTheLastAndSkipsOthers) {
  const std::string revised = std::string(kKernel) + "// revised\n";
  const std::string answer = Fenced("cpp", kKernel) + "Wait, better:\n" + Fenced("bash", "g++ -O3 relu.cpp\n") +
                             Fenced("cpp", revised) + Fenced("python", "print('relu(x)')\n");
  auto kernel = ExtractKernel(answer, "relu");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ(kernel->source, revised);
  EXPECT_EQ(kernel->block_index, 2u);
  EXPECT_EQ(kernel->blocks_found, 4u);
}

TEST(CodeExtraction, BareCodeWithoutFencesIsTakenWhole) {
  auto kernel = ExtractKernel(kKernel, "relu");
  ASSERT_TRUE(kernel.ok()) << kernel.error().message;
  EXPECT_EQ(kernel->source, kKernel);
  EXPECT_EQ(kernel->blocks_found, 0u);
}

TEST(CodeExtraction, ProseWithoutCodeIsAnExplainedFailure) {
  auto kernel = ExtractKernel("I cannot help with that, but relu is max(x, 0).", "relu");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.error().message, "the answer holds no code block");
}

TEST(CodeExtraction, TheWrongFunctionNameIsNamedInTheFailure) {
  std::string wrong = kKernel;
  wrong.replace(wrong.find("relu("), 4, "relu_kernel");
  auto kernel = ExtractKernel(Fenced("cpp", wrong), "relu");
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message.find("relu_kernel"), std::string::npos) << kernel.error().message;
  EXPECT_NE(kernel.error().message.find("but not relu"), std::string::npos) << kernel.error().message;
}

TEST(CodeExtraction, AnAnswerCutOffInsideTheBlockSaysSo) {
  const std::string answer = "```cpp\n" + std::string(kKernel).substr(0, 90);
  auto kernel = ExtractKernel(answer, "relu");
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.error().message.find("cut off"), std::string::npos) << kernel.error().message;
}

TEST(CodeExtraction, ADeclarationOrAMentionInACommentIsNotADefinition) {
  const std::string code = "// extern \"C\" void relu(const float* x, float* y, int64_t n) { }\n"
                           "extern \"C\" void relu(const float* x, float* y, int64_t n);\n"
                           "const char* note = \"extern \\\"C\\\" void relu() {\";\n";
  EXPECT_TRUE(DefinedExternCFunctions(code).empty());
  EXPECT_FALSE(ExtractKernel(Fenced("cpp", code), "relu").ok());
}

TEST(CodeExtraction, FindsDefinitionsWithAttributesStreamsAndExternBlocks) {
  const std::string cuda = "extern \"C\" __attribute__((visibility(\"default\"))) void softmax(const float* x, float* y,\n"
                           "    int64_t rows, int64_t cols, cudaStream_t stream) {\n  Launch<<<1, 1, 0, stream>>>(x, y);\n}\n";
  EXPECT_EQ(DefinedExternCFunctions(cuda), std::vector<std::string>{"softmax"});
  const std::string block = "extern \"C\" {\nvoid row_sum(const float* x, float* y, int64_t rows, int64_t cols) {\n}\n}\n";
  EXPECT_EQ(DefinedExternCFunctions(block), std::vector<std::string>{"row_sum"});
}

TEST(CodeExtraction, FencesMayBeIndentedTildesOrCarryExtraInfo) {
  const std::string answer = "  ~~~cuda title=kernel.cu\n" + std::string(kKernel) + "  ~~~\n";
  const auto blocks = FindCodeBlocks(answer);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].language, "cuda");
  EXPECT_TRUE(blocks[0].closed);
  EXPECT_TRUE(ExtractKernel(answer, "relu").ok());
}

const std::string kModelNew = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n";

TEST(ExtractModelNew, TakesTheLastPythonBlockThatDefinesModelNew) {
  const std::string answer = "Plan.\n```python\nclass Model(torch.nn.Module):\n    pass\n```\nThen:\n```cpp\nint x;\n```\n"
                             "```python\n" + kModelNew + "```\nNotes.\n```py\n" + kModelNew + "# v2\n```\n";
  const auto extracted = ExtractModelNew(answer);
  ASSERT_TRUE(extracted.ok()) << extracted.error().message;
  EXPECT_EQ(extracted->source, kModelNew + "# v2\n");
  EXPECT_EQ(extracted->block_index, 3u);
}

TEST(ExtractModelNew, BareCodeIsTakenWholeAndAMissingModelNewIsExplained) {
  const auto bare = ExtractModelNew(kModelNew);
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ(bare->source, kModelNew);
  const auto none = ExtractModelNew("```python\nclass Model(nn.Module):\n    pass\n```\n");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("defines class ModelNew"), std::string::npos) << none.error().message;
  const auto cut = ExtractModelNew("```python\n" + kModelNew);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("cut off"), std::string::npos) << cut.error().message;
}

}  // namespace
}  // namespace ksmith
