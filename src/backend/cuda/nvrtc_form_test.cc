// The NVRTC form's text side: which sources are in it, the kernels their launches name, and the
// generated wrapper and data file.
#include "backend/cuda/nvrtc_form.h"

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

TEST(NvrtcLaunchScan, RefusesALaunchWithoutAKernelOrUnclosed) {
  auto missing = LaunchedKernels("\n\nKSMITH_LAUNCH(1, 256, 0, stream)(x);\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("line 3"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("the kernel is missing"), std::string::npos);
  auto unclosed = LaunchedKernels("KSMITH_LAUNCH(1, 256, 0, stream, k(x);\n");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_NE(unclosed.error().message.find("never closed"), std::string::npos);
}

TEST(NvrtcHostWrapper, BindsTheSignatureAndCarriesTheLauncher) {
  const Task task = LoadBuiltIn("elementwise/vector_add");
  const std::string wrapper = NvrtcHostWrapper(task, "/work/src/candidate.cu");
  EXPECT_NE(wrapper.find("#include <ksmith/launch.h>\n#include \"/work/src/candidate.cu\""), std::string::npos);
  EXPECT_NE(wrapper.find(task.CudaDeclaration() + ";"), std::string::npos);
  EXPECT_NE(wrapper.find("ksmith_entry("), std::string::npos);
  EXPECT_NE(wrapper.find("const KsmithModule* ksmith_module()"), std::string::npos);
  EXPECT_NE(wrapper.find("static const KsmithModule module{" + std::to_string(kNvrtcModuleVersion)), std::string::npos);
  // fp32 only: the half-precision headers, 0.2 s of the host compiler, are left out.
  EXPECT_EQ(wrapper.find("cuda_fp16.h"), std::string::npos);
}

TEST(NvrtcDataAssembly, CarriesTheCubinAndAnEscapedKernelTable) {
  const std::string data = NvrtcDataAssembly("kernel.cubin", {{"K<1, 2>", "_Z1KILi1ELi2EEvv"}, {"Q\"x", "_Z1Qv"}});
  EXPECT_NE(data.find(".incbin \"kernel.cubin\""), std::string::npos);
  EXPECT_NE(data.find(".asciz \"K<1, 2>\\t_Z1KILi1ELi2EEvv\\nQ\\\"x\\t_Z1Qv\\n\""), std::string::npos) << data;
  EXPECT_NE(data.find(".hidden ksmith_cubin_begin"), std::string::npos);
  EXPECT_NE(data.find(".note.GNU-stack"), std::string::npos);
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
