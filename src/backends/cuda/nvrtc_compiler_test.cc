// NVRTC-form builds (no GPU needed): ksmith-nvrtc and g++ walled in, the stored object and cubin,
// what the audit sees of the library, the cache, and each kind of failure with its message.
// Skipped, with a message, where the CUDA toolkit or ksmith-nvrtc is missing.
#include "backends/cuda/nvrtc_compiler.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cuda_audit.h"
#include "backends/cuda/cuda_compiler.h"
#include "backends/cuda/nvrtc_form.h"
#include "binary/elf_symbols.h"
#include "core/files.h"
#include "core/landlock.h"
#include "task/task_loader.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVectorAdd = R"(#include <cstdint>
#include <ksmith/launch.h>

constexpr int kThreads = 256;

#ifdef KSMITH_DEVICE
template <int BLOCK>
__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
#endif

#ifdef KSMITH_HOST
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  KSMITH_LAUNCH((n + kThreads - 1) / kThreads, kThreads, 0, stream, add_kernel<kThreads>)(a, b, c, n);
}
#endif
)";

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

class NvrtcCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    auto compiler = CudaCompiler::Create(temp_.path() / "cache", CudaTarget{"sm_90a", "--arch flag"});
    if (!compiler.ok()) GTEST_SKIP() << "nvcc is not installed: " << compiler.error().message;
    auto nvrtc = NvrtcCompiler::Create(temp_.path() / "cache", compiler->nvcc().info());
    if (!nvrtc.ok()) GTEST_SKIP() << "ksmith-nvrtc does not run here: " << nvrtc.error().message;
    compiler_.emplace(std::move(compiler.value()));
    auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::move(task.value());
  }

  Result<BuildOutput> BuildCandidate(const std::string& source) {
    return compiler_->Build(task_, {source, "candidate.cu", KernelRole::kCandidate, {}});
  }

  ScopedTempDir temp_{"ksmith-nvrtc"};
  std::optional<CudaCompiler> compiler_;
  Task task_;
};

TEST_F(NvrtcCompilerTest, BuildsALibraryThatExportsTheEntryAndTheModuleOnlyAndPassesTheAudit) {
  auto build = BuildCandidate(kVectorAdd);
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->compiled) << build->log;
  EXPECT_FALSE(build->cache_hit);
  EXPECT_EQ(build->sandboxed, LandlockAbi() > 0);
  EXPECT_TRUE(Contains(build->command, "ksmith-nvrtc"));
  EXPECT_TRUE(Contains(build->command, "-arch=sm_90a"));
  // The cubin and its kernel table stay beside the library, where the worker reads them.
  EXPECT_EQ(build->device_code, fs::path(build->shared_object).replace_extension(".cubin"));
  EXPECT_EQ(NvrtcDeviceCodeOf(build->shared_object, temp_.path() / "cache"), build->device_code);
  // Only ksmith's compiled-objects folder counts: the same files elsewhere (a link to them from
  // a KernelBench build's folder, which its candidate writes) name no device code.
  const fs::path elsewhere = temp_.path() / "elsewhere";
  fs::create_directories(elsewhere);
  for (const char* extension : {".so", ".cubin", ".kernels"}) {
    fs::create_symlink(fs::path(build->shared_object).replace_extension(extension),
                       (elsewhere / "modelnew_shim").replace_extension(extension));
  }
  EXPECT_TRUE(NvrtcDeviceCodeOf(elsewhere / "modelnew_shim.so", temp_.path() / "cache").empty());
  EXPECT_TRUE(NvrtcDeviceCodeOf(elsewhere / "modelnew_shim.so", elsewhere.parent_path()).empty());
  EXPECT_GT(fs::file_size(build->device_code), 1000u);
  auto table = ReadFile(fs::path(build->shared_object).replace_extension(".kernels"));
  ASSERT_TRUE(table.ok());
  EXPECT_TRUE(Contains(*table, "add_kernel<kThreads>\t_Z10add_kernelILi256EE"));

  auto symbols = ReadDynamicSymbols(build->shared_object);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  std::vector<std::string> exported = symbols->exported;
  std::sort(exported.begin(), exported.end());
  EXPECT_EQ(exported, (std::vector<std::string>{"ksmith_entry", "ksmith_launcher"}));
  // The launcher calls through the worker's slot: the library loads no code of its own.
  EXPECT_TRUE(AuditCudaBinary(*symbols, task_, /*nvrtc_form=*/true).empty())
      << ::testing::PrintToString(symbols->imported);
  EXPECT_TRUE(AuditCudaSource(kVectorAdd, task_).empty());

  // ptxas's report, per kernel, from NVRTC's log.
  ASSERT_EQ(build->resources.size(), 1u) << build->log;
  EXPECT_TRUE(Contains(build->resources[0].name, "add_kernel")) << build->resources[0].name;
  EXPECT_GT(build->resources[0].registers, 0);

  auto again = BuildCandidate(kVectorAdd);
  ASSERT_TRUE(again.ok() && again->compiled);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->shared_object, build->shared_object);
  EXPECT_EQ(again->device_code, build->device_code);
  EXPECT_EQ(again->resources.size(), 1u);
  EXPECT_TRUE(fs::is_empty(temp_.path() / "cache" / "tmp"));
}

TEST_F(NvrtcCompilerTest, FirstBuildsAtOnceShareOneLauncherObject) {
  // The first builds of a cache compile ksmith's launcher object; one stored while another build
  // was linking must not take the file it was granted from under it.
  std::vector<std::future<Result<BuildOutput>>> builds;
  for (int i = 0; i < 4; ++i) {
    builds.push_back(std::async(std::launch::async, [this, i] {
      return BuildCandidate(std::string(kVectorAdd) + "// variant " + std::to_string(i) + "\n");
    }));
  }
  for (auto& build : builds) {
    auto output = build.get();
    ASSERT_TRUE(output.ok()) << output.error().message;
    EXPECT_TRUE(output->compiled) << output->log;
  }
}

TEST_F(NvrtcCompilerTest, CompilesWhatTheOldFormExpresses) {
  // Templates, two kernels with host logic between them, dynamic shared memory, half precision,
  // cooperative groups, a knob, and the C headers and macros NVRTC lacks, written where both
  // compilers read them.
  const std::string source = std::string("#define BLOCK 128\n") + R"(
#include <cstdint>
#include <cfloat>
#include <cmath>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <ksmith/launch.h>
#ifdef KSMITH_DEVICE
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <typename T, int THREADS>
__global__ void partial_sums(const float* a, float* partial, int64_t n) {
  extern __shared__ float tile[];
  cg::thread_block block = cg::this_thread_block();
  float sum = -FLT_MAX < 0 ? 0.0f : INFINITY;
  for (int64_t i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS) {
    sum += __half2float(__float2half(static_cast<T>(a[i]))) * static_cast<float>(M_PI / M_PI);
  }
  tile[threadIdx.x] = sum;
  block.sync();
  if (threadIdx.x == 0) {
    float total = 0;
    for (int t = 0; t < THREADS; ++t) total += tile[t];
    partial[blockIdx.x] = total;
  }
}
__global__ void scale(const float* partial, float* c, int64_t blocks) { c[threadIdx.x] = partial[0] * blocks; }
#endif
#ifdef KSMITH_HOST
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  const int64_t blocks = n < 64 * BLOCK ? 1 : 64;
  KSMITH_LAUNCH(blocks, BLOCK, BLOCK * sizeof(float), stream, partial_sums<float, BLOCK>)(a, c, n);
  KSMITH_LAUNCH(1, 1, 0, stream, scale)((const float*)c, c, blocks);
  (void)b;
}
#endif
)";
  auto build = BuildCandidate(source);
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->compiled) << build->log;
  EXPECT_EQ(build->resources.size(), 2u) << build->log;
}

TEST_F(NvrtcCompilerTest, ADeviceErrorNamesItsLine) {
  std::string source = kVectorAdd;
  source.replace(source.find("c[i] = a[i] + b[i];"), 19, "c[i] = a[i] + undefined_name;");
  auto build = BuildCandidate(source);
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "candidate.cu(10): error"));
  EXPECT_TRUE(Contains(build->log, "undefined_name"));
  EXPECT_FALSE(Contains(build->log, (temp_.path() / "cache" / "tmp").string())) << "build folders are trimmed";
}

TEST_F(NvrtcCompilerTest, AHostErrorAndAWrongSignatureAreTheHostCompilers) {
  std::string source = kVectorAdd;
  source.replace(source.find("int64_t n, cudaStream_t stream)"), 31, "int n, cudaStream_t stream)");
  auto build = BuildCandidate(source);
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "ksmith-expected-signature")) << build->log;
}

TEST_F(NvrtcCompilerTest, ALaunchOfAKernelThatDoesNotExistFailsTheBuild) {
  std::string source = kVectorAdd;
  source.replace(source.find("add_kernel<kThreads>)"), 21, "add_kernal<kThreads>)");
  auto build = BuildCandidate(source);
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "add_kernal")) << build->log;
}

TEST_F(NvrtcCompilerTest, TrustedLibrariesStayWithNvcc) {
  auto build = compiler_->Build(task_, {kVectorAdd, "baseline_cuda.cu", KernelRole::kBaseline, {}});
  ASSERT_FALSE(build.ok());
  EXPECT_TRUE(Contains(build.error().message, "built with nvcc"));
}

TEST_F(NvrtcCompilerTest, ACacheMissingTheCubinBuildsAgain) {
  auto build = BuildCandidate(kVectorAdd);
  ASSERT_TRUE(build.ok() && build->compiled);
  fs::remove(build->device_code);
  auto again = BuildCandidate(kVectorAdd);
  ASSERT_TRUE(again.ok() && again->compiled) << (again.ok() ? again->log : again.error().message);
  EXPECT_FALSE(again->cache_hit);
  EXPECT_TRUE(fs::exists(again->device_code));
}

TEST_F(NvrtcCompilerTest, ASourceWithoutLaunchesSaysHowToLaunch) {
  auto build = BuildCandidate("#include <ksmith/launch.h>\n#ifdef KSMITH_HOST\nextern \"C\" void vector_add(const float*, "
                              "const float*, float*, int64_t, cudaStream_t) {}\n#endif\n");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "KSMITH_LAUNCH(grid, block, shared_bytes, stream, kernel)"));
}

TEST_F(NvrtcCompilerTest, WithoutKsmithNvrtcTheFormIsAnErrorOfTheMachineNotACompileError) {
  testing::ScopedEnv missing("KSMITH_NVRTC", "/nonexistent/ksmith-nvrtc");
  auto compiler = CudaCompiler::Create(temp_.path() / "other", CudaTarget{"sm_90a", "--arch flag"});
  ASSERT_TRUE(compiler.ok()) << compiler.error().message;
  auto build = compiler->Build(task_, {kVectorAdd, "candidate.cu", KernelRole::kCandidate, {}});
  ASSERT_FALSE(build.ok());
  EXPECT_EQ(build.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(build.error().message, "KSMITH_NVRTC"));
}

TEST_F(NvrtcCompilerTest, AnIncludeOutsideTheSystemIsDeniedToBothCompilers) {
  if (LandlockAbi() == 0) GTEST_SKIP() << "Landlock is not available in this kernel";
  const fs::path secret = temp_.path() / "secret.h";
  std::ofstream(secret) << "#error the secret was read\n";
  for (const char* section : {"KSMITH_DEVICE", "KSMITH_HOST"}) {
    const std::string source = std::string(kVectorAdd) + "#ifdef " + section + "\n#include \"" + secret.string() +
                               "\"\n#endif\n";
    auto build = BuildCandidate(source);
    ASSERT_TRUE(build.ok()) << build.error().message;
    EXPECT_FALSE(build->compiled) << section;
    EXPECT_TRUE(build->sandboxed);
    EXPECT_FALSE(Contains(build->log, "the secret was read")) << section;
  }
}

// A toolkit whose headers are not under nvcc's ../include (nvcc behind a wrapper script, Debian's
// layout): the folders come from nvcc itself, so both compilers find crt/ and CCCL.
TEST_F(NvrtcCompilerTest, NvccBehindAWrapperScriptGivesTheToolkitsFolders) {
  const fs::path wrapper = temp_.path() / "wrapped" / "bin" / "nvcc";
  fs::create_directories(wrapper.parent_path());
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << compiler_->nvcc().info().executable.string() << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  testing::ScopedEnv nvcc("KSMITH_NVCC", wrapper.string());
  auto compiler = CudaCompiler::Create(temp_.path() / "wrapped-cache", CudaTarget{"sm_90a", "--arch flag"});
  ASSERT_TRUE(compiler.ok()) << compiler.error().message;
  EXPECT_EQ(compiler->nvcc().info().toolkit_root, fs::canonical(temp_.path() / "wrapped"));
  EXPECT_EQ(compiler->nvcc().info().paths.include_dirs, compiler_->nvcc().info().paths.include_dirs);
  EXPECT_EQ(compiler->nvcc().info().paths.root, compiler_->nvcc().info().paths.root) << "nvcc's own TOP";
  EXPECT_NE(compiler->nvcc().info().paths.root, compiler->nvcc().info().toolkit_root);
  auto build = compiler->Build(task_, {kVectorAdd, "candidate.cu", KernelRole::kCandidate, {}});
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_TRUE(build->compiled) << build->log;
  EXPECT_EQ(build->sandboxed, LandlockAbi() > 0);
}

// A host compiler that reads outside the walls (here a wrapper script checking a file of its
// own) fails walled in: the build says so and runs in the open, as nvcc's builds do.
TEST_F(NvrtcCompilerTest, WhereTheWallsStopTheCompilersTheBuildRunsInTheOpenAndSaysSo) {
  if (LandlockAbi() == 0) GTEST_SKIP() << "Landlock is not available in this kernel";
  const fs::path marker = temp_.path() / "outside" / "marker";
  fs::create_directories(marker.parent_path());
  std::ofstream(marker) << "outside the walls\n";
  const fs::path wrapper = temp_.path() / "cxx" / "g++";
  fs::create_directories(wrapper.parent_path());
  std::ofstream(wrapper) << "#!/bin/sh\ncat " << marker.string() << " > /dev/null || exit 1\nexec g++ \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  testing::ScopedEnv cxx("KSMITH_CXX", wrapper.string());
  auto compiler = CudaCompiler::Create(temp_.path() / "open-cache", CudaTarget{"sm_90a", "--arch flag"});
  ASSERT_TRUE(compiler.ok()) << compiler.error().message;
  auto build = compiler->Build(task_, {kVectorAdd, "candidate.cu", KernelRole::kCandidate, {}});
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_TRUE(build->compiled) << build->log;
  EXPECT_FALSE(build->sandboxed);
  // A candidate's own error is still its own, with the compiler's message.
  std::string broken = kVectorAdd;
  broken.replace(broken.find("c[i] = a[i] + b[i];"), 19, "c[i] = a[i] + undefined_name;");
  auto failed = compiler->Build(task_, {broken, "candidate.cu", KernelRole::kCandidate, {}});
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_FALSE(failed->compiled);
  EXPECT_TRUE(Contains(failed->log, "undefined_name"));
}

}  // namespace
}  // namespace ksmith
