// The CUDA compiler: target resolution, the generated wrapper, real nvcc builds (no GPU needed),
// the content-hash cache, compile failures, and the resources read from ptxas and cuobjdump.
// Builds are skipped, with a message, where nvcc is not installed.
#include "backends/cuda/nvcc_compiler.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/elf_symbols.h"
#include "core/files.h"
#include "core/landlock.h"
#include "task/task_loader.h"
#include "testing/scoped_env.h"
#include "testing/test_nvcc.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHonestVectorAdd = R"(
#include <cstdint>
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  add_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
)";

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

Task VectorAdd() {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
  if (!task.ok()) ADD_FAILURE() << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

// ------------------------------------------------------------------------------------- targets

TEST(NormalizeCudaArch, AcceptsTheThreeSpellings) {
  EXPECT_EQ(*NormalizeCudaArch("sm_90a"), "sm_90a");
  EXPECT_EQ(*NormalizeCudaArch("sm_80"), "sm_80");
  EXPECT_EQ(*NormalizeCudaArch("90a"), "sm_90a");
  EXPECT_EQ(*NormalizeCudaArch("120a"), "sm_120a");
  EXPECT_EQ(*NormalizeCudaArch("sm_100f"), "sm_100f");
}

TEST(NormalizeCudaArch, RejectsVirtualArchitecturesAndOtherTyposClearly) {
  auto virtual_arch = NormalizeCudaArch("compute_90");
  ASSERT_FALSE(virtual_arch.ok());
  EXPECT_EQ(virtual_arch.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_TRUE(Contains(virtual_arch.error().message, "virtual"));
  EXPECT_TRUE(Contains(virtual_arch.error().message, "sm_90"));
  for (const char* bad : {"hopper", "9.0", "sm90", "sm_9", "", "sm_90x", "sm_0"}) {
    auto arch = NormalizeCudaArch(bad);
    ASSERT_FALSE(arch.ok()) << bad;
    EXPECT_TRUE(Contains(arch.error().message, "sm_90a")) << bad;
  }
}

TEST(ArchForComputeCapability, UsesTheArchSpecificVariantOnHopperAndBlackwell) {
  EXPECT_EQ(*ArchForComputeCapability("9.0"), "sm_90a");
  EXPECT_EQ(*ArchForComputeCapability("10.0"), "sm_100a");
  EXPECT_EQ(*ArchForComputeCapability("12.0"), "sm_120a");
  EXPECT_EQ(*ArchForComputeCapability("8.0"), "sm_80");
  EXPECT_EQ(*ArchForComputeCapability("8.6"), "sm_86");
  EXPECT_EQ(*ArchForComputeCapability("10.3"), "sm_103");
  EXPECT_FALSE(ArchForComputeCapability("[N/A]").ok());
  EXPECT_FALSE(ArchForComputeCapability("90").ok());
}

TEST(ParseNvidiaSmiQuery, TakesTheFirstGpu) {
  auto target = ParseNvidiaSmiQuery("9.0, NVIDIA H100 80GB HBM3\n8.0, NVIDIA A100-SXM4-80GB\n");
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(target->arch, "sm_90a");
  EXPECT_EQ(target->origin, "detected GPU NVIDIA H100 80GB HBM3");
}

TEST(ParseNvidiaSmiQuery, NoDriverMeansNoTarget) {
  EXPECT_FALSE(ParseNvidiaSmiQuery("").has_value());
  EXPECT_FALSE(ParseNvidiaSmiQuery("NVIDIA-SMI has failed because it couldn't communicate with the "
                                   "NVIDIA driver. Make sure that the latest NVIDIA driver is "
                                   "installed and running.\n")
                   .has_value());
}

TEST(ResolveCudaTarget, TheFlagWins) {
  auto target = ResolveCudaTarget("sm_80");
  ASSERT_TRUE(target.ok()) << target.error().message;
  EXPECT_EQ(target->arch, "sm_80");
  EXPECT_EQ(target->origin, "--arch flag");
  EXPECT_EQ(target->Gencode(), "-gencode=arch=compute_80,code=sm_80");
  EXPECT_FALSE(ResolveCudaTarget("compute_80").ok());
}

TEST(ResolveCudaTarget, DetectsTheGpuThroughNvidiaSmi) {
  ScopedTempDir bin("ksmith-fake-smi");
  ASSERT_TRUE(bin.ok());
  const fs::path smi = bin.path() / "nvidia-smi";
  std::ofstream(smi) << "#!/bin/sh\necho '9.0, NVIDIA H200'\n";
  ::chmod(smi.c_str(), 0755);
  testing::ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
  auto target = ResolveCudaTarget(std::nullopt);
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->arch, "sm_90a");
  EXPECT_EQ(target->origin, "detected GPU NVIDIA H200");
}

TEST(ResolveCudaTarget, FallsBackToHopperWithoutAGpu) {
  ScopedTempDir bin("ksmith-no-smi");
  ASSERT_TRUE(bin.ok());
  // An nvidia-smi that fails the way it does on a machine without a driver, then none at all.
  const fs::path smi = bin.path() / "nvidia-smi";
  std::ofstream(smi) << "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate'\nexit 9\n";
  ::chmod(smi.c_str(), 0755);
  for (const std::string& search_path : {bin.path().string() + ":/usr/bin:/bin", bin.path().string() + "/none"}) {
    testing::ScopedEnv path("PATH", search_path);
    auto target = ResolveCudaTarget(std::nullopt);
    ASSERT_TRUE(target.ok());
    EXPECT_EQ(target->arch, "sm_90a");
    EXPECT_EQ(target->origin, "default (no GPU found)");
  }
}

TEST(CudaTarget, GencodeBuildsMachineCodeForTheExactArch) {
  EXPECT_EQ((CudaTarget{"sm_90a", "x"}.Gencode()), "-gencode=arch=compute_90a,code=sm_90a");
  EXPECT_EQ((CudaTarget{"sm_120a", "x"}.Gencode()), "-gencode=arch=compute_120a,code=sm_120a");
  EXPECT_EQ((CudaTarget{"sm_90a", "--arch flag"}.ToJson()),
            nlohmann::json({{"arch", "sm_90a"}, {"origin", "--arch flag"}}));
}

// ------------------------------------------------------------------------------------- wrapper

TEST(NvccWrapper, HoldsTheCudaDeclarationAndAnEntryThatPassesTheStream) {
  const Task task = VectorAdd();
  const std::string wrapper = NvccCompiler::WrapperSource(task, KernelRole::kCandidate, "/work/k.cu");
  EXPECT_TRUE(Contains(wrapper, "#include \"/work/k.cu\""));
  EXPECT_TRUE(Contains(wrapper, "#include <cuda_runtime.h>"));
  EXPECT_TRUE(Contains(wrapper, task.CudaDeclaration() + ";"));
  EXPECT_TRUE(Contains(wrapper, "cudaStream_t stream);"));
  EXPECT_TRUE(Contains(wrapper, "extern \"C\" __attribute__((visibility(\"default\"))) void "
                                "ksmith_entry(void* const* pointers, const int64_t* scalars, void* stream)"));
  EXPECT_TRUE(Contains(wrapper,
                       "vector_add(static_cast<const float*>(pointers[0]), "
                       "static_cast<const float*>(pointers[1]), static_cast<float*>(pointers[2]), "
                       "static_cast<int64_t>(scalars[3]), static_cast<cudaStream_t>(stream));"));
  EXPECT_LT(wrapper.find("ksmith-expected-signature"), wrapper.find(task.CudaDeclaration()));
}

TEST(NvccWrapper, ReferenceBindsTheCudaReferenceWithDoubleOutputs) {
  const Task task = VectorAdd();
  ASSERT_TRUE(task.cuda.has_value());
  const std::string wrapper = NvccCompiler::WrapperSource(task, KernelRole::kReference, "ref.cu");
  EXPECT_TRUE(Contains(wrapper, task.CudaReferenceDeclaration() + ";"));
  EXPECT_TRUE(Contains(wrapper, task.cuda->reference_function + "("));
  EXPECT_TRUE(Contains(wrapper, "static_cast<double*>(pointers[2])"));
  EXPECT_TRUE(Contains(wrapper, "static_cast<cudaStream_t>(stream)"));
}

// -------------------------------------------------------------------------------------- builds

class NvccCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    auto compiler = testing::TestNvcc(temp_.path() / "cache");
    if (!compiler.ok()) GTEST_SKIP() << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
    task_ = VectorAdd();
  }

  Result<BuildOutput> BuildCandidate(const std::string& source) {
    return compiler_->Build(task_, {source, "candidate.cu", KernelRole::kCandidate, {}});
  }

  ScopedTempDir temp_{"ksmith-nvcc"};
  std::optional<NvccCompiler> compiler_;
  Task task_;
};

TEST_F(NvccCompilerTest, CreateFindsNvccItsVersionAndTheToolkit) {
  const NvccInfo& info = compiler_->info();
  EXPECT_TRUE(info.executable.is_absolute());
  EXPECT_TRUE(Contains(info.version, "release"));
  EXPECT_TRUE(fs::is_directory(info.toolkit_root / "bin"));
  EXPECT_EQ(info.target.arch, "sm_90a");
  for (const char* flag : {"-O3", "-lineinfo", "-shared", "-fPIC,-fvisibility=hidden", "shared",
                           "-gencode=arch=compute_90a,code=sm_90a", "-v", "--no-undefined,-z,now"}) {
    EXPECT_NE(std::find(info.flags.begin(), info.flags.end(), flag), info.flags.end()) << flag;
  }
  EXPECT_TRUE(fs::is_directory(temp_.path() / "cache" / "cuda-objects"));
}

TEST_F(NvccCompilerTest, CreateFailsClearlyWhenNvccIsMissing) {
  testing::ScopedEnv nvcc("KSMITH_NVCC", "/nonexistent/bin/nvcc");
  auto compiler = NvccCompiler::Create(temp_.path() / "other", CudaTarget{"sm_90a", "--arch flag"});
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(compiler.error().message, "KSMITH_NVCC"));
}

TEST_F(NvccCompilerTest, BuildsAnHonestKernelThatExportsOnlyTheEntry) {
  auto build = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->compiled) << build->log;
  EXPECT_FALSE(build->cache_hit);
  EXPECT_GT(build->compile_s, 0.0);
  EXPECT_EQ(build->shared_object.parent_path(), temp_.path() / "cache" / "cuda-objects");
  EXPECT_TRUE(Contains(build->command, "-gencode=arch=compute_90a,code=sm_90a"));
  EXPECT_TRUE(Contains(build->command, "-cudart shared"));
  // Landlock is used wherever the kernel has it: nvcc runs walled in.
  EXPECT_EQ(build->sandboxed, LandlockAbi() > 0);

  auto symbols = ReadDynamicSymbols(build->shared_object);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_EQ(symbols->exported, std::vector<std::string>{"ksmith_entry"});
  EXPECT_TRUE(std::any_of(symbols->needed.begin(), symbols->needed.end(),
                          [](const std::string& name) { return name.starts_with("libcudart.so"); }))
      << ::testing::PrintToString(symbols->needed);
  // Built but hidden: the task's function and the kernel's host stub.
  EXPECT_TRUE(std::binary_search(symbols->defined.begin(), symbols->defined.end(), "vector_add"));
}

TEST_F(NvccCompilerTest, ReportsPtxasResourcesPerKernel) {
  auto build = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(build.ok() && build->compiled) << (build.ok() ? build->log : build.error().message);
  ASSERT_EQ(build->resources.size(), 1u) << build->log;
  const KernelResources& kernel = build->resources[0];
  EXPECT_EQ(kernel.name, "add_kernel(float const*, float const*, float*, long)");
  EXPECT_EQ(kernel.arch, "sm_90a");
  EXPECT_GT(kernel.registers, 0);
  EXPECT_EQ(kernel.spill_store_bytes, 0);
  const auto json = build->ToJson();
  EXPECT_EQ(json["resources"][0]["registers"], kernel.registers);
  EXPECT_EQ(json["compiled"], true);
  EXPECT_TRUE(json.contains("sass"));
}

TEST_F(NvccCompilerTest, SummarizesTheSassWhereCuobjdumpIsInstalled) {
  auto build = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(build.ok() && build->compiled) << (build.ok() ? build->log : build.error().message);
  if (compiler_->info().cuobjdump.empty()) {
    EXPECT_TRUE(Contains(build->FinalSass().error, "cuobjdump"));
    EXPECT_TRUE(build->FinalSass().kernels.empty());
    GTEST_SKIP() << "no cuobjdump beside nvcc or on PATH; the SASS summary is empty";
  }
  ASSERT_TRUE(build->FinalSass().error.empty()) << build->FinalSass().error;
  ASSERT_EQ(build->FinalSass().kernels.size(), 1u);
  EXPECT_EQ(build->FinalSass().kernels[0].arch, "sm_90a");
  EXPECT_EQ(build->FinalSass().kernels[0].name, "add_kernel(float const*, float const*, float*, long)");
  EXPECT_GE(build->FinalSass().total.loads, 2);  // a[i] and b[i]
  EXPECT_EQ(build->FinalSass().total.tensor_core, 0);
  EXPECT_EQ(build->FinalSass().total.local_loads, 0);
}

TEST_F(NvccCompilerTest, TheSecondBuildIsACacheHitWithTheSameReport) {
  auto first = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(first.ok() && first->compiled) << (first.ok() ? first->log : first.error().message);
  auto second = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(second->compiled);
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->compile_s, 0.0);
  EXPECT_EQ(second->shared_object, first->shared_object);
  EXPECT_EQ(second->log, first->log);
  EXPECT_EQ(second->command, first->command);
  EXPECT_EQ(second->sandboxed, first->sandboxed);
  EXPECT_EQ(ToJson(second->resources), ToJson(first->resources));
  EXPECT_EQ(second->FinalSass().ToJson(), first->FinalSass().ToJson());
  // Nothing is left behind in the build folders.
  EXPECT_TRUE(fs::is_empty(temp_.path() / "cache" / "tmp"));
}

TEST_F(NvccCompilerTest, ASignatureMismatchIsACompileErrorNamingTheExpectedDeclaration) {
  // The CPU signature: no stream.
  auto build = BuildCandidate(R"(
#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {}
)");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "ksmith-expected-signature"));
  EXPECT_TRUE(Contains(build->log, "cudaStream_t stream"));
  EXPECT_TRUE(Contains(build->log, "vector_add"));
  EXPECT_FALSE(Contains(build->log, (temp_.path() / "cache" / "tmp").string()))
      << "build folder paths are trimmed from the log";
  EXPECT_FALSE(fs::exists(build->shared_object));
}

TEST_F(NvccCompilerTest, AnIncludeOutsideTheSystemIsDeniedUnderLandlock) {
  if (LandlockAbi() == 0) GTEST_SKIP() << "Landlock is not available in this kernel";
  const fs::path secret = temp_.path() / "secret.h";
  std::ofstream(secret) << "#error the secret was read\n";
  auto build = BuildCandidate("#include \"" + secret.string() + "\"\n" + kHonestVectorAdd);
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(build->sandboxed);
  EXPECT_FALSE(Contains(build->log, "the secret was read"));
  EXPECT_TRUE(Contains(build->log, "Permission denied"));
}

TEST_F(NvccCompilerTest, BuildsTheTasksCudaReference) {
  ASSERT_TRUE(task_.cuda.has_value());
  auto source = ReadFile(task_.cuda->reference_source);
  ASSERT_TRUE(source.ok());
  auto build = compiler_->Build(task_, {*source, "reference.cu", KernelRole::kReference, {}});
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->compiled) << build->log;
  ASSERT_FALSE(build->resources.empty());
}

TEST_F(NvccCompilerTest, BuildStandaloneCompilesATrustedSourceWithoutAWrapper) {
  auto build = compiler_->BuildStandalone(R"(
__global__ void probe(float* x) { x[threadIdx.x] *= 2.0f; }
extern "C" __attribute__((visibility("default"))) void launch_probe(float* x) { probe<<<1, 32>>>(x); }
)", "probe.cu");
  ASSERT_TRUE(build.ok()) << build.error().message;
  ASSERT_TRUE(build->compiled) << build->log;
  auto symbols = ReadDynamicSymbols(build->shared_object);
  ASSERT_TRUE(symbols.ok());
  EXPECT_EQ(symbols->exported, std::vector<std::string>{"launch_probe"});
}

}  // namespace
}  // namespace ksmith
