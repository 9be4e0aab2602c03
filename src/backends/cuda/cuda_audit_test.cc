// The CUDA candidate contract: source rules on text, binary rules on hand-made symbol lists, and
// both on real nvcc builds (skipped, with a message, where nvcc is not installed).
#include "backends/cuda/cuda_audit.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/nvcc_compiler.h"
#include "binary/disassembly.h"
#include "core/files.h"
#include "task/task_loader.h"
#include "testing/test_nvcc.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Task VectorAdd() {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
  if (!task.ok()) ADD_FAILURE() << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

std::vector<std::string> Rules(const std::vector<AuditFinding>& findings) {
  std::vector<std::string> rules;
  for (const auto& finding : findings) rules.push_back(finding.rule);
  return rules;
}

bool HasRule(const std::vector<AuditFinding>& findings, const std::string& rule) {
  return std::any_of(findings.begin(), findings.end(), [&](const AuditFinding& f) { return f.rule == rule; });
}

std::string Describe(const std::vector<AuditFinding>& findings) {
  std::string text;
  for (const auto& finding : findings) text += finding.rule + ": " + finding.message + "\n";
  return text;
}

// An honest kernel that uses what the contract allows: the runtime, fp16, cooperative groups,
// CUB, PTX through inline asm, a quoted include of a bare header name, scratch memory.
constexpr const char* kHonestKernel = R"(
#include <cstdint>
#include <cuda_runtime.h>
#include "cuda_fp16.h"
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include <mma.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cub/block/block_reduce.cuh>
#include <cuComplex.h>

namespace cg = cooperative_groups;

__device__ __forceinline__ float add_ptx(float x, float y) {
  float out;
  asm("add.f32 %0, %1, %2;" : "=f"(out) : "f"(x), "f"(y));
  return out;
}

__global__ void cuda_add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = add_ptx(a[i], b[i]);
}

extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  cudaFuncSetAttribute(cuda_add_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0);
  if (cudaPeekAtLastError() != cudaSuccess) { return; }
  cuda_add_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
)";

// What the build tests add their variations to: quick to compile.
constexpr const char* kLeanKernel = R"(
#include <cstdint>
#include <cuda_runtime.h>
__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {
  if (n > 0) add_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}
)";

// ---------------------------------------------------------------------------------- source text

TEST(AuditCudaSource, AnHonestKernelUsingWhatTheContractAllowsIsClean) {
  const auto findings = AuditCudaSource(kHonestKernel, VectorAdd());
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST(AuditCudaSource, EveryRuleFiresOnItsExampleAndNamesTheLine) {
  const Task task = VectorAdd();
  const std::vector<std::pair<std::string, std::string>> examples = {
      {"#include <cuda.h>", "driver_api"},
      {"#include <cudaTypedefs.h>", "driver_api"},
      {"CUresult r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, 0);", "driver_api"},
      {"cudaGetDriverEntryPoint(\"cuMemAlloc\", &fn, 0, &status);", "driver_api"},
      {"cudaDeviceReset();", "context_control"},
      {"cudaThreadExit();", "context_control"},
      {"cudaCtxResetPersistingL2Cache();", "context_control"},
      {"cudaSetDevice(0);", "device_selection"},
      {"cudaProfilerStart();", "profiling"},
      {"#include <cupti.h>", "profiling"},
      {"#include <nvml.h>", "profiling"},
      {"nvmlInit_v2();", "profiling"},
      {"cudaIpcGetMemHandle(&handle, p);", "ipc"},
      {"cudaLibraryLoadFromFile(&lib, \"k.cubin\", 0, 0, 0, 0, 0, 0);", "dynamic_loading"},
      {"#include <nvrtc.h>", "dynamic_loading"},
      {"#include <dlfcn.h>", "dynamic_loading"},
      {"cudaEventElapsedTime(&ms, start, stop);", "timers"},
      {"asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));", "timers"},
      {"#include <cublas_v2.h>", "library_call"},
      {"#include \"cublasLt.h\"", "library_call"},
      {"#include <cudnn.h>", "library_call"},
      {"#include <cufft.h>", "library_call"},
      {"#include <cusparse.h>", "library_call"},
      {"#include <curand.h>", "library_call"},
      {"#include <cutlass/gemm/device/gemm.h>", "library_call"},
      {"#include <cute/tensor.hpp>", "library_call"},
      {"#include <cblas.h>", "library_call"},
      {"#include <thrust/sort.h>", "thrust"},
      {"#include <fstream>", "file_access"},
      {"#include <sys/socket.h>", "network"},
      {"std::thread worker([] {});", "thread_creation"},
      {"#include </etc/passwd>", "include_path"},
      {"#include \"../ksmith_wrapper.cu\"", "include_path"},
      {"#include_next <cuda_runtime.h>", "include_trick"},
      {"#include SECRET_HEADER", "include_trick"},
      {"int r = syscall(39);", "raw_syscall"},
      {"__attribute__((constructor)) static void early() {}", "load_time_code"},
      {"extern \"C\" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { return cudaSuccess; }",
       "api_definition"},
  };
  for (const auto& [line, rule] : examples) {
    const std::string source = "// line one\n" + line + "\n";
    const auto findings = AuditCudaSource(source, task);
    ASSERT_TRUE(HasRule(findings, rule)) << line << "\n" << Describe(findings);
    for (const auto& finding : findings) {
      if (finding.rule != rule) continue;
      EXPECT_EQ(finding.line, 2) << line;
      EXPECT_NE(finding.message.find("line 2"), std::string::npos) << finding.message;
    }
  }
}

TEST(AuditCudaSource, DeviceSideHeadersAreAllowedInEitherSpelling) {
  const auto findings = AuditCudaSource(
      "#include <curand_kernel.h>\n#include \"cuda_runtime.h\"\n#include <cuda/std/atomic>\n"
      "#include <cub/cub.cuh>\n#include <cuda_awbarrier.h>\n#include <nvtx3/nvToolsExt.h>\n",
      VectorAdd());
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST(AuditCudaSource, InlineAssemblyIsAllowed) {
  const auto findings = AuditCudaSource(
      "__device__ unsigned lane() { unsigned id; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(id)); return id; }\n"
      "__device__ void fence() { __asm__ __volatile__(\"membar.gl;\" ::: \"memory\"); }\n",
      VectorAdd());
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST(AuditCudaSource, TheSameWordsInCommentsOrStringsAreClean) {
  const auto findings = AuditCudaSource(R"(
// cudaDeviceReset() would destroy the context; #include <cuda.h> is the driver API
/* cuLaunchKernel(f, ...); #include <thrust/sort.h> */
const char* note = "cudaSetDevice(0); cudaEventElapsedTime; #include <cublas_v2.h>";
// asm("mov.u64 %0, %%globaltimer;")
)", VectorAdd());
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST(AuditCudaSource, AllowedLibrariesLiftTheirOwnRuleOnly) {
  Task task = VectorAdd();
  task.allowed_libraries = {"cublas", "thrust"};
  const std::string source = "#include <cublas_v2.h>\n#include <cublasLt.h>\n#include <thrust/sort.h>\n#include <cudnn.h>\n";
  const auto findings = AuditCudaSource(source, task);
  ASSERT_EQ(findings.size(), 1u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "library_call");
  EXPECT_EQ(findings[0].line, 4);
}

TEST(AuditCudaSource, ApiDefinitionsAreFoundAcrossLinesButCallsAndOrdinaryNamesAreNot) {
  // A stand-in that returns at once would hide the candidate's work from a synchronizing timer.
  const auto findings = AuditCudaSource(R"(
extern "C" cudaError_t
cudaStreamSynchronize(cudaStream_t stream,
                      int unused)
{
  return cudaSuccess;
}
__global__ void cuda_add(float* x) { x[0] = 1; }
__global__ void cudakernel(float* x) { x[0] = 2; }
void launch(float* p, size_t n) {
  if (cudaMalloc(&p, n)) { return; }
  while (cudaStreamQuery(0) == cudaErrorNotReady) { }
  cuCaddf(make_cuFloatComplex(1, 2), make_cuFloatComplex(3, 4));
}
)", VectorAdd());
  ASSERT_EQ(findings.size(), 1u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "api_definition");
  EXPECT_EQ(findings[0].line, 3);
  EXPECT_NE(findings[0].message.find("defines cudaStreamSynchronize: a CUDA API symbol"), std::string::npos)
      << findings[0].message;
}

TEST(AuditCudaSource, FindingsComeInLineOrder) {
  const auto findings = AuditCudaSource("#include <cuda.h>\n__device__ void f() { asm(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(x)); }\ncudaDeviceReset();\n", VectorAdd());
  EXPECT_EQ(Rules(findings), (std::vector<std::string>{"driver_api", "timers", "context_control"}));
}

// ------------------------------------------------------------------------------ binary symbols

DynamicSymbols HonestSymbols() {
  DynamicSymbols symbols;
  symbols.needed = {"libcudart.so.13", "libstdc++.so.6", "libgcc_s.so.1", "libc.so.6"};
  symbols.imported = {"__cudaRegisterFatBinary", "__cudaLaunchKernel", "__cudaPopCallConfiguration",
                      "__cxa_atexit", "__cxa_finalize", "cudaMemsetAsync", "cudaFuncSetAttribute",
                      "__gmon_start__"};
  symbols.exported = {"ksmith_entry"};
  symbols.defined = {"_Z10add_kernelPKfS0_Pfl", "_ZL24__sti____cudaRegisterAllv", "atexit",
                     "cuda_add", "ksmith_entry", "vector_add"};
  return symbols;
}

TEST(AuditCudaBinary, AnHonestBuildIsClean) {
  const auto findings = AuditCudaBinary(HonestSymbols(), VectorAdd());
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST(AuditCudaBinary, ForbiddenImportsAreFindings) {
  const std::vector<std::pair<std::string, std::string>> imports = {
      {"cudaDeviceReset", "context_control"}, {"cudaSetDevice", "device_selection"},
      {"cudaCtxResetPersistingL2Cache", "context_control"},
      {"cuLaunchKernel", "driver_api"},       {"cudaGetDriverEntryPointByVersion", "driver_api"},
      {"cudaProfilerStop", "profiling"},      {"cuptiActivityEnable", "profiling"},
      {"cudaIpcOpenMemHandle", "ipc"},        {"cudaLibraryLoadData", "dynamic_loading"},
      {"cudaEventElapsedTime", "timers"},     {"cublasSgemm_v2", "library_call"},
      {"dlopen", "dynamic_loading"},          {"fopen", "file_access"},
      {"getenv", "environment"},              {"pthread_create", "thread_creation"},
      {"clock_gettime", "timers"},            {"_exit", "exit"},
      {"quick_exit", "exit"},                 {"atexit", "exit"},
  };
  for (const auto& [name, rule] : imports) {
    DynamicSymbols symbols = HonestSymbols();
    symbols.imported.push_back(name);
    const auto findings = AuditCudaBinary(symbols, VectorAdd());
    ASSERT_TRUE(HasRule(findings, rule)) << name << "\n" << Describe(findings);
    EXPECT_NE(findings[0].message.find(name), std::string::npos);
  }
}

// nvcc gives every plain (non-inline, non-template) __device__ function a host stub that calls
// ::exit, so an honest kernel with a helper imports exit. Ending the worker can only turn a
// verdict into a crash, never into a pass, so plain exit is allowed in CUDA binaries.
TEST(AuditCudaBinary, ThePlainExitOfNvccsDeviceFunctionStubsIsAllowed) {
  DynamicSymbols symbols = HonestSymbols();
  symbols.imported.push_back("exit");
  EXPECT_TRUE(AuditCudaBinary(symbols, VectorAdd()).empty()) << Describe(AuditCudaBinary(symbols, VectorAdd()));
}

TEST(AuditCudaBinary, LinkedLibrariesBeyondTheRuntimeNeedTheTasksPermission) {
  DynamicSymbols symbols = HonestSymbols();
  symbols.needed.push_back("libcublas.so.13");
  symbols.needed.push_back("libcublasLt.so.13");
  symbols.imported.push_back("cublasCreate_v2");
  Task task = VectorAdd();
  EXPECT_EQ(Rules(AuditCudaBinary(symbols, task)),
            (std::vector<std::string>{"library_call", "library_call", "library_call"}));
  task.allowed_libraries = {"cublas"};
  EXPECT_TRUE(AuditCudaBinary(symbols, task).empty()) << Describe(AuditCudaBinary(symbols, task));
  symbols.needed.push_back("libcuda.so.1");
  const auto findings = AuditCudaBinary(symbols, task);
  ASSERT_EQ(findings.size(), 1u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "linked_library");
  EXPECT_NE(findings[0].message.find("libcuda.so.1"), std::string::npos);
}

TEST(AuditCudaBinary, ExportsOtherThanTheEntryAreFindingsExceptStandardLibraryInstances) {
  DynamicSymbols symbols = HonestSymbols();
  symbols.exported.push_back("vector_add");
  symbols.exported.push_back("_Z6helperPf");
  // libstdc++'s visibility pragmas export these whatever -fvisibility says.
  symbols.exported.push_back("_ZNSt6vectorIfSaIfEE17_M_realloc_insertIJRKfEEEvN9__gnu_cxx17__normal_iteratorIPfS1_EEDpOT_");
  symbols.exported.push_back("_ZSt16__introsort_loopIPflN9__gnu_cxx5__ops15_Iter_less_iterEEvT_S4_T0_T1_");
  symbols.exported.push_back("_ZTISt9exception");
  const auto findings = AuditCudaBinary(symbols, VectorAdd());
  ASSERT_EQ(findings.size(), 2u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "exports");
  EXPECT_NE(findings[0].message.find("'vector_add'"), std::string::npos);
  EXPECT_NE(findings[1].message.find("'_Z6helperPf'"), std::string::npos);
}

TEST(AuditCudaBinary, TheLauncherSlotIsAllowedOnlyInALibraryNvrtcBuilt) {
  // The worker fills that slot only for a library whose cubin ksmith compiled; anywhere else the
  // export is a finding like any other.
  DynamicSymbols symbols = HonestSymbols();
  symbols.exported.push_back("ksmith_launcher");
  EXPECT_TRUE(AuditCudaBinary(symbols, VectorAdd(), /*nvrtc_form=*/true).empty());
  const auto findings = AuditCudaBinary(symbols, VectorAdd(), /*nvrtc_form=*/false);
  ASSERT_EQ(findings.size(), 1u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "exports");
  EXPECT_NE(findings[0].message.find("'ksmith_launcher'"), std::string::npos);
}

TEST(AuditCudaBinary, DefinedApiNamesAreFoundEvenWhenHidden) {
  DynamicSymbols symbols = HonestSymbols();
  symbols.defined.push_back("cudaEventElapsedTime");
  symbols.defined.push_back("cuLaunchKernel");
  symbols.defined.push_back("nvmlDeviceGetClockInfo");
  const auto findings = AuditCudaBinary(symbols, VectorAdd());
  ASSERT_EQ(findings.size(), 3u) << Describe(findings);
  EXPECT_EQ(findings[0].rule, "api_definition");
  EXPECT_NE(findings[0].message.find("defines cudaEventElapsedTime: a CUDA API symbol"), std::string::npos)
      << findings[0].message;
}

// ---------------------------------------------------------------------------------- real builds

class CudaAuditBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    auto compiler = testing::TestNvcc(temp_.path() / "cache");
    if (!compiler.ok()) GTEST_SKIP() << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
    task_ = VectorAdd();
  }

  // Builds `source` and reads its symbols; fails the test when it does not compile.
  std::optional<DynamicSymbols> BuildAndRead(const std::string& source,
                                             const std::vector<std::string>& libraries = {}) {
    auto build = compiler_->Build(task_, {source, "candidate.cu", KernelRole::kCandidate, libraries});
    if (!build.ok()) {
      ADD_FAILURE() << build.error().message;
      return std::nullopt;
    }
    if (!build->compiled) {
      ADD_FAILURE() << build->log;
      return std::nullopt;
    }
    object_ = build->shared_object;
    auto symbols = ReadDynamicSymbols(build->shared_object);
    if (!symbols.ok()) {
      ADD_FAILURE() << symbols.error().message;
      return std::nullopt;
    }
    return std::move(symbols.value());
  }

  ScopedTempDir temp_{"ksmith-cuda-audit"};
  std::optional<NvccCompiler> compiler_;
  Task task_;
  fs::path object_;
};

TEST_F(CudaAuditBuildTest, AnHonestBuildPassesBothAuditsAndTheInstructionScan) {
  auto symbols = BuildAndRead(kHonestKernel);
  ASSERT_TRUE(symbols.has_value());
  EXPECT_TRUE(AuditCudaSource(kHonestKernel, task_).empty());
  const auto findings = AuditCudaBinary(*symbols, task_);
  EXPECT_TRUE(findings.empty()) << Describe(findings) << ::testing::PrintToString(symbols->imported);
  auto uses = FindInstructions(object_, ForbiddenInstructions());
  ASSERT_TRUE(uses.ok()) << uses.error().message;
  EXPECT_TRUE(uses->empty());
}

TEST_F(CudaAuditBuildTest, AHiddenCudaApiDefinitionIsFoundInTheFullSymbolTable) {
  // A stand-in for the runtime's timer, hidden by -fvisibility=hidden: not in the dynamic table.
  auto symbols = BuildAndRead(std::string(kLeanKernel) + R"(
extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) { *ms = 1e-6f; return cudaSuccess; }
extern "C" float* keep_it(float* ms) { cudaEventElapsedTime(ms, nullptr, nullptr); return ms; }
)");
  ASSERT_TRUE(symbols.has_value());
  EXPECT_TRUE(std::find(symbols->exported.begin(), symbols->exported.end(), "cudaEventElapsedTime") ==
              symbols->exported.end());
  const auto findings = AuditCudaBinary(*symbols, task_);
  ASSERT_TRUE(HasRule(findings, "api_definition")) << Describe(findings);
  EXPECT_NE(Describe(findings).find("defines cudaEventElapsedTime: a CUDA API symbol"), std::string::npos);
}

TEST_F(CudaAuditBuildTest, ForbiddenRuntimeCallsAreSeenAsImports) {
  auto symbols = BuildAndRead(std::string(kLeanKernel) + R"(
extern "C" void reset_everything() { cudaDeviceReset(); cudaSetDevice(1); }
)");
  ASSERT_TRUE(symbols.has_value());
  const auto findings = AuditCudaBinary(*symbols, task_);
  EXPECT_TRUE(HasRule(findings, "context_control")) << Describe(findings);
  EXPECT_TRUE(HasRule(findings, "device_selection")) << Describe(findings);
}

TEST_F(CudaAuditBuildTest, CublasIsAFindingUnlessTheTaskAllowsIt) {
  auto symbols = BuildAndRead(std::string(kLeanKernel) + R"(
#include <cublas_v2.h>
extern "C" void make_handle() { cublasHandle_t handle; cublasCreate(&handle); }
)", {"cublas"});
  ASSERT_TRUE(symbols.has_value());
  EXPECT_TRUE(HasRule(AuditCudaBinary(*symbols, task_), "library_call"));
  task_.allowed_libraries = {"cublas"};
  const auto findings = AuditCudaBinary(*symbols, task_);
  EXPECT_TRUE(findings.empty()) << Describe(findings);
}

TEST_F(CudaAuditBuildTest, HostMachineCodeIsLeftToTheInstructionScan) {
  // Inline assembly passes the source audit (it is usually PTX); in host code the x86 scan of the
  // built object finds what it does.
  const std::string source = std::string(kLeanKernel) + R"(
extern "C" unsigned long long host_ticks() { unsigned lo, hi; asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); return (static_cast<unsigned long long>(hi) << 32) | lo; }
)";
  EXPECT_FALSE(HasRule(AuditCudaSource(source, task_), "inline_assembly"));
  auto symbols = BuildAndRead(source);
  ASSERT_TRUE(symbols.has_value());
  auto uses = FindInstructions(object_, ForbiddenInstructions());
  ASSERT_TRUE(uses.ok()) << uses.error().message;
  const auto findings = AuditInstructions(*uses);
  ASSERT_TRUE(HasRule(findings, "timers")) << Describe(findings);
}

}  // namespace
}  // namespace ksmith
