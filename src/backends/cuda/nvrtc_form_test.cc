// The NVRTC form's text side: which sources are in it, the kernels their launches name, and the
// generated wrapper and data file.
#include "backends/cuda/nvrtc_form.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Task LoadBuiltIn(const std::string& path) {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / path);
  if (!task.ok()) ADD_FAILURE() << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

TEST(IsNvrtcForm, IsChosenByIncludingTheLaunchHeader) {
  EXPECT_TRUE(IsNvrtcForm("#include <ksmith/launch.h>\n"));
  EXPECT_TRUE(IsNvrtcForm("  # include \"ksmith/launch.h\"\n"));
  EXPECT_FALSE(IsNvrtcForm("// #include <ksmith/launch.h>\n#include <cuda_runtime.h>\n"));
  EXPECT_FALSE(IsNvrtcForm("/* #include <ksmith/launch.h> */\n"));
  EXPECT_FALSE(IsNvrtcForm("__global__ void k() {}\nvoid f() { k<<<1, 1>>>(); }\n"));
}

TEST(NvrtcLaunchScan, ReadsEachKernelExpressionAsThePreprocessorStringizesIt) {
  const std::string source = R"(
#include <ksmith/launch.h>
// KSMITH_LAUNCH(1, 1, 0, stream, InAComment)(x);
void f(cudaStream_t stream, int n) {
  KSMITH_LAUNCH((n + 255) / 256, dim3(16, 16), 0, stream, Tile<128,   4>)(a, b);
  KSMITH_LAUNCH(std::min(n, 8), 256, sizeof(float) * 64, stream,
                Reduce<float, Sum>)(x, n);
  KSMITH_LAUNCH(1, 1, 0, stream, Tile<128, 4>)(a, b);
  KSMITH_LAUNCH(1, 1, 0, stream, Tile<128,   4>)(c, d);
  MY_KSMITH_LAUNCH(1, 1, 0, stream, NotOurs)(x);
}
)";
  auto kernels = LaunchedKernels(source);
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  EXPECT_EQ(*kernels, (std::vector<std::string>{"Tile<128, 4>", "Reduce<float, Sum>"}));
}

TEST(NvrtcLaunchScan, ALaunchInAStringIsNoLaunch) {
  auto kernels = LaunchedKernels("const char* kHelp = \"KSMITH_LAUNCH(1, 1, 0, s, Nope)(\";\n"
                                 "KSMITH_LAUNCH(1, 1, 0, s, Real)(x);\n");
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  EXPECT_EQ(*kernels, std::vector<std::string>{"Real"});
}

TEST(NvrtcLaunchScan, RefusesALaunchWithoutAKernelOrUnclosed) {
  auto missing = LaunchedKernels("\n\nKSMITH_LAUNCH(1, 256, 0, stream)(x);\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("line 3"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("the kernel is missing"), std::string::npos);
  auto unclosed = LaunchedKernels("KSMITH_LAUNCH(1, 256, 0, stream, k(x);\n");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.error().message.find("never closed"), std::string::npos);
}

TEST(NvrtcHostWrapper, BindsTheSignatureAndTheEntry) {
  const Task task = LoadBuiltIn("elementwise/vector_add");
  const std::string wrapper = NvrtcHostWrapper(task, "/work/src/candidate.cu");
  EXPECT_NE(wrapper.find("#include <ksmith/launch.h>\n#include \"/work/src/candidate.cu\""), std::string::npos);
  EXPECT_NE(wrapper.find(task.CudaDeclaration() + ";"), std::string::npos);
  EXPECT_NE(wrapper.find("ksmith_entry("), std::string::npos);
  // The launcher is an object of ksmith's own, out of the candidate's translation unit's reach.
  EXPECT_EQ(wrapper.find("ksmith_launcher"), std::string::npos);
  // fp32 only: the half-precision headers, 0.2 s of the host compiler, are left out.
  EXPECT_EQ(wrapper.find("cuda_fp16.h"), std::string::npos);
}

TEST(NvrtcLauncherSource, ExportsTheSlotAndForwardsEveryLaunchThroughIt) {
  const std::string source = NvrtcLauncherSource();
  EXPECT_NE(source.find("extern \"C\" __attribute__((visibility(\"default\"))) KsmithLauncherSlot ksmith_launcher"),
            std::string::npos);
  EXPECT_NE(source.find("return ksmith_launcher.launch(ksmith_launcher.context, kernel,"), std::string::npos);
}

TEST(ParameterKinds, ReadsPointersIntegersFloatsAndTheRestFromADemangledKernel) {
  EXPECT_EQ(ParameterKinds("void (anonymous namespace)::Softmax<true, 4>(float const*, float*, long long, long long)"),
            "ppii");
  EXPECT_EQ(ParameterKinds("Scale(float4 const*, __half, float, double, unsigned int, bool, Pair<int, float>)"),
            "poffiio");
  EXPECT_EQ(ParameterKinds("K()"), "");
  EXPECT_EQ(ParameterKinds("not a function"), "");
}

TEST(NvrtcHeaders, GiveNvrtcTheCHeadersItLacksAndTheHostTheLaunchMacro) {
  EXPECT_NE(NvrtcHostHeaders().at("ksmith/launch.h").find("#define KSMITH_LAUNCH(grid, block, shared_bytes, stream, ...)"),
            std::string::npos);
  for (const char* header : {"ksmith/launch.h", "cstdint", "stdint.h", "cfloat", "cmath", "cuda_runtime.h"}) {
    EXPECT_TRUE(NvrtcDeviceHeaders().contains(header)) << header;
  }
  EXPECT_EQ(NvrtcDeviceHeaders().at("ksmith/launch.h").find("KSMITH_LAUNCH("), std::string::npos);
}

}  // namespace
}  // namespace ksmith
