// The OpenCL candidate form read from text: `@launch` lines, knobs, sizes, the kernel declaration,
// and the source audit. No OpenCL runtime is needed (tests/integration/opencl_test.cc runs one).
#include "backends/opencl/opencl_form.h"

#include <string>

#include <gtest/gtest.h>

#include "agent/model_format.h"
#include "backends/opencl/opencl_backend.h"
#include "task/signature.h"

namespace ksmith {
namespace {

Task TaskWith(const std::string& signature) {
  Task task;
  auto parsed = ParseSignature(signature);
  EXPECT_TRUE(parsed.ok()) << signature;
  if (parsed.ok()) task.signature = *parsed;
  return task;
}

std::string ErrorOf(const std::string& source) {
  auto launches = ParseLaunches(source);
  EXPECT_FALSE(launches.ok()) << source;
  return launches.ok() ? std::string() : launches.error().message;
}

TEST(ParseLaunches, ReadsEveryLaunchInOrderWithNestedParentheses) {
  auto launches = ParseLaunches(
      "// @launch row_stats global=(rows * (WG)) local=(WG)\n"
      "  //@launch apply  global=(cols, (rows + 7) / 8) local=(16, 8)\n"
      "__kernel void row_stats() {}\n");
  ASSERT_TRUE(launches.ok()) << launches.error().message;
  ASSERT_EQ(launches->size(), 2u);
  EXPECT_EQ((*launches)[0].kernel, "row_stats");
  EXPECT_EQ((*launches)[0].global, std::vector<std::string>{"rows * (WG)"});
  EXPECT_EQ((*launches)[0].local, std::vector<std::string>{"WG"});
  EXPECT_EQ((*launches)[1].kernel, "apply");
  EXPECT_EQ((*launches)[1].global, (std::vector<std::string>{"cols", "(rows + 7) / 8"}));
  EXPECT_EQ((*launches)[1].local, (std::vector<std::string>{"16", "8"}));
}

TEST(ParseLaunches, ExplainsWhatIsMissingOrMalformed) {
  EXPECT_NE(ErrorOf("__kernel void k() {}\n").find("no `// @launch` line"), std::string::npos);
  EXPECT_NE(ErrorOf("// @launch k global=(n)\n").find("line 1: no local=("), std::string::npos);
  EXPECT_NE(ErrorOf("\n// @launch k global=(n, m) local=(64)\n").find("line 2: global and local need the same number"),
            std::string::npos);
  EXPECT_NE(ErrorOf("// @launch 9k global=(n) local=(64)\n").find("'9k' is not a kernel name"), std::string::npos);
  EXPECT_NE(ErrorOf("// @launch k global=(a, b, c, d) local=(1, 1, 1, 1)\n").find("1 to 3"), std::string::npos);
  EXPECT_NE(ErrorOf("// @launch k global=(n local=(64)\n").find("not closed"), std::string::npos);
}

TEST(IntegerMacros, ReadsObjectLikeIntegerDefinesOnly) {
  const DimValues macros = IntegerMacros(
      "#ifndef WG\n#define WG 256\n#endif\n"
      "#  define TILE (16)  // a comment\n"
      "#define SCALE 0.5f\n"
      "#define F(x) 3\n"
      "#define WG 512\n"
      "#define HEX 0x100u /* a comment */\n"
      "#define LONG 64L\n");
  EXPECT_EQ(macros.at("WG"), 256) << "the first definition wins, as the #ifndef guard makes it";
  EXPECT_EQ(macros.at("TILE"), 16);
  EXPECT_EQ(macros.at("HEX"), 256);
  EXPECT_EQ(macros.at("LONG"), 64);
  EXPECT_FALSE(macros.contains("SCALE"));
  EXPECT_FALSE(macros.contains("F"));
}

TEST(ResolveLaunch, RoundsGlobalUpToTheLocalSizeWithMacrosAndParameters) {
  const Task task = TaskWith("void softmax(const float* x, float* y, int64_t rows, int64_t cols)");
  auto plan = MakePlan("// @launch k global=(rows * WG, cols) local=(WG, 4)\n#define WG 128\n", task);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto sizes = ResolveLaunch(plan->launches[0], *plan, {0, 0, 3, 10}, 1024);
  ASSERT_TRUE(sizes.ok()) << sizes.error().message;
  EXPECT_EQ(sizes->global, (std::vector<size_t>{384, 12}));
  EXPECT_EQ(sizes->local, (std::vector<size_t>{128, 4}));
  // A case with nothing to do still launches one group; the kernel's bounds check decides.
  auto empty = ResolveLaunch(plan->launches[0], *plan, {0, 0, 0, 0}, 1024);
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_EQ(empty->global, (std::vector<size_t>{128, 4}));
}

TEST(ResolveLaunch, RefusesGroupsTheDeviceCannotRunAndSizesThatDoNotEvaluate) {
  const Task task = TaskWith("void relu(const float* x, float* y, int64_t n)");
  auto plan = MakePlan("// @launch k global=(n) local=(2048)\n// @launch k global=(n / 0) local=(1)\n"
                       "// @launch k global=(n) local=(n - n)\n// @launch k global=(m) local=(1)\n", task);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto too_big = ResolveLaunch(plan->launches[0], *plan, {0, 0, 100}, 1024);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().message.find("work-group of 2048 items exceeds this device's 1024"), std::string::npos);
  EXPECT_FALSE(ResolveLaunch(plan->launches[1], *plan, {0, 0, 100}, 1024).ok());
  auto zero = ResolveLaunch(plan->launches[2], *plan, {0, 0, 100}, 1024);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("not positive"), std::string::npos);
  EXPECT_FALSE(ResolveLaunch(plan->launches[3], *plan, {0, 0, 100}, 1024).ok()) << "'m' names nothing";
}

TEST(OpenclPlan, SurvivesItsJson) {
  const Task task = TaskWith("void relu(const float* x, float* y, int64_t n)");
  auto plan = MakePlan("// @launch relu_k global=(n) local=(WG)\n#define WG 64\n", task);
  ASSERT_TRUE(plan.ok());
  auto back = OpenclPlan::FromJson(plan->ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->ToJson(), plan->ToJson());
  EXPECT_EQ(back->parameter_names, (std::vector<std::string>{"x", "y", "n"}));
  EXPECT_EQ(back->macros.at("WG"), 64);
  EXPECT_FALSE(OpenclPlan::FromJson(nlohmann::json{{"launches", 3}}).ok());
  EXPECT_EQ(OpenclPlanPath("/cache/objects/abc.clbin"), std::filesystem::path("/cache/objects/abc.clbin.plan.json"));
}

TEST(KernelDeclaration, MapsTheSignatureToOpenclArguments) {
  const Task task = TaskWith("void layernorm(const float* x, const float* gamma, float* y, int64_t rows, int64_t cols)");
  EXPECT_EQ(KernelDeclaration(task, "ln"),
            "__kernel void ln(__global const float* x, __global const float* gamma, __global float* y, long rows, long cols)");
  EXPECT_TRUE(SignatureMapsToOpencl(task).ok());
  const Status scalar = SignatureMapsToOpencl(TaskWith("void scale(const float* x, float* y, float alpha, int64_t n)"));
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.error().message.find("only int64_t scalars"), std::string::npos);
}

TEST(AuditOpenclSource, RefusesInlineAssemblyAndIncludesButNotInComments) {
  const auto findings = AuditOpenclSource(
      "// asm in a comment is fine, as is #include in one\n"
      "#include \"other.cl\"\n"
      "__kernel void k() { __asm__(\"\"); }\n");
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].rule, "local_include");
  EXPECT_EQ(findings[0].line, 2);
  EXPECT_EQ(findings[1].rule, "inline_assembly");
  EXPECT_EQ(findings[1].line, 3);
  EXPECT_TRUE(AuditOpenclSource("// @launch k global=(n) local=(64)\n__kernel void k(long n) {}\n").empty());
}

TEST(AuditOpenclSource, RefusesWordsBuiltWhereNoLineShowsThem) {
  const auto pasted = AuditOpenclSource("#define J(a, b) a##b\n__kernel void k() { J(__as, m__)(\"\"); }\n");
  ASSERT_EQ(pasted.size(), 1u);
  EXPECT_EQ(pasted[0].rule, "token_pasting");
  const auto spliced = AuditOpenclSource("__kernel void k() { __as\\\nm__(\"\"); }\n");
  ASSERT_EQ(spliced.size(), 1u);
  EXPECT_EQ(spliced[0].rule, "line_splice");
  // A multi-line macro's continuation after a space is no split word.
  EXPECT_TRUE(AuditOpenclSource("#define TWICE(x) \\\n  ((x) + (x))\n").empty());
}

// A model's answer on the opencl backend: the candidate is the last block with `@launch` lines
// whose kernels it defines, whatever the kernels are called.
TEST(OpenclAnswers, TheLastBlockWithLaunchLinesAndTheirKernelsIsTheCandidate) {
  const Task task = TaskWith("void relu(const float* x, float* y, int64_t n)");
  const std::string kernel =
      "// @launch relu_k global=(n) local=(64)\n__kernel void relu_k(__global const float* x, __global float* y, long n) {}\n";
  auto extracted = NativeModelFormat().Extract("Plan.\n```opencl\n" + kernel + "```\nA helper:\n```c\nint h;\n```\n", task, "opencl");
  ASSERT_TRUE(extracted.ok()) << extracted.error().message;
  EXPECT_NE(extracted->source.find("__kernel void relu_k("), std::string::npos) << extracted->source;
  auto unnamed = NativeModelFormat().Extract("```opencl\n// @launch other global=(n) local=(64)\n__kernel void relu_k() {}\n```\n",
                                             task, "opencl");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.error().message.find("none of the 1 code block is OpenCL C with `// @launch` lines"), std::string::npos)
      << unnamed.error().message;
  auto cut = NativeModelFormat().Extract("```opencl\n" + kernel, task, "opencl");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("cut off"), std::string::npos) << cut.error().message;
  // The C++ backends still look for the extern "C" function.
  EXPECT_FALSE(NativeModelFormat().Extract("```opencl\n" + kernel + "```\n", task, "cpu").ok());
}

}  // namespace
}  // namespace ksmith
