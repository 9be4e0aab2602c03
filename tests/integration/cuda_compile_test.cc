// Every CUDA kernel of the project (tasks' references, baselines and tuner seeds in their knob
// settings, honest and red-team kernels) compiles for Hopper as the evaluator would build it.
// Runs wherever nvcc is installed, GPU or not; alone (RUN_SERIAL), because its nvcc processes
// would take the cores that the timing tests beside it measure.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include "agent/tune_knobs.h"
#include "backends/cuda/cuda_audit.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_compiler.h"
#include "cli_runner.h"
#include "cuda_kernels.h"
#include "eval/compile_pool.h"
#include "task/registry.h"

namespace ksmith::it {
namespace {

// Queues one build (nvcc, or NVRTC for the NVRTC form) of `request` for `task` on `pool`.
std::future<Result<BuildOutput>> SubmitBuild(CompilePool& pool, const CudaCompiler& compiler, const Task& task,
                                             BuildRequest request) {
  return pool.Submit([&compiler, task, request = std::move(request)] { return compiler.Build(task, request); });
}

std::optional<CudaCompiler> Compiler() {
  auto target = ResolveCudaTarget(std::string("sm_90a"));
  if (!target.ok()) return std::nullopt;
  auto compiler = CudaCompiler::Create(CacheDir(), *target);
  if (!compiler.ok()) return std::nullopt;
  return std::move(compiler.value());
}

TEST(CudaKernelSuite, EveryKernelCompilesForHopper) {
  auto compiler = Compiler();
  if (!compiler) GTEST_SKIP() << "nvcc is not installed here: CUDA kernels cannot be compiled";
  TaskRegistry registry(SourceDir() / "tasks");
  CompilePool pool;
  struct Pending {
    std::string what;
    bool must_compile;
    std::future<Result<BuildOutput>> build;
    bool has_kernels = true;  // a cuBLAS baseline defines no kernel of its own
  };
  std::vector<Pending> pending;
  for (const auto& name : TaskNames()) {
    auto task = registry.Find(name);
    ASSERT_TRUE(task.ok()) << task.error().message;
    ASSERT_TRUE(task->cuda.has_value()) << name << " has no [cuda] table";
    const Task view = CudaView(*task);
    const auto baseline = view.baselines.at("cuda");
    pending.push_back({name + " reference", true,
                       SubmitBuild(pool, *compiler, view, {Slurp(view.cuda->reference_source), "reference.cu", KernelRole::kReference, {}})});
    pending.push_back({name + " baseline", true,
                       SubmitBuild(pool, *compiler, view, {Slurp(baseline.source), "baseline_cuda.cu", KernelRole::kBaseline, baseline.libraries}),
                       baseline.libraries.empty()});
  }
  for (const auto& kernel : AllCudaKernels()) {
    auto task = registry.Find(kernel.task);
    ASSERT_TRUE(task.ok()) << kernel.file;
    // Red-team kernels may fail to build on purpose (a library they may not link).
    const bool must_compile = kernel.expect == "passed";
    pending.push_back({kernel.file.filename().string(), must_compile,
                       SubmitBuild(pool, *compiler, CudaView(*task), {Slurp(kernel.file), kernel.file.filename().string(),
                                                     KernelRole::kCandidate, {}})});
    if (kernel.expect == "compile_error") pending.back().must_compile = false;
  }
  for (auto& item : pending) {
    auto build = item.build.get();
    ASSERT_TRUE(build.ok()) << item.what << ": " << build.error().message;
    if (item.must_compile) {
      EXPECT_TRUE(build->compiled) << item.what << "\n" << build->log.substr(0, 4000);
      if (item.has_kernels) {
        EXPECT_FALSE(build->resources.empty()) << item.what << ": no ptxas resource report";
      }
    }
  }
}

// Settings that put every value of every knob in at least one build: setting i moves each knob i
// values past its default (the first is the default, the second every knob changed).
std::vector<KnobSetting> EveryValueOnce(const std::vector<TuneKnob>& knobs) {
  size_t widest = 1;
  for (const auto& knob : knobs) widest = std::max(widest, knob.values.size());
  std::vector<KnobSetting> settings;
  for (size_t step = 0; step < widest; ++step) {
    KnobSetting setting;
    for (const auto& knob : knobs) {
      setting.emplace_back(knob.name, knob.values[(knob.default_index + step) % knob.values.size()]);
    }
    settings.push_back(std::move(setting));
  }
  return settings;
}

// The tuner builds a seed once per setting it tries; a setting that does not compile, or that the
// audit refuses, would be a wasted evaluation, or worse, the only one it tries. Every value of
// every knob is built (146 builds of the 54 seeds, by NVRTC: the seeds are in its form); every combination of them with
// KSMITH_EXHAUSTIVE=1 (426 builds, 13.5 minutes of CI's two cores).
TEST(CudaKernelSuite, EverySeedCompilesAndPassesTheAuditInItsKnobSettings) {
  auto compiler = Compiler();
  if (!compiler) GTEST_SKIP() << "nvcc is not installed here: CUDA kernels cannot be compiled";
  TaskRegistry registry(SourceDir() / "tasks");
  CompilePool pool;
  struct Pending {
    std::string what;
    Task task;
    std::future<Result<BuildOutput>> build;
  };
  std::vector<Pending> pending;
  for (const auto& name : TaskNames()) {
    auto task = registry.Find(name);
    ASSERT_TRUE(task.ok()) << task.error().message;
    ASSERT_TRUE(task->seeds.contains("cuda")) << name << " has no [seed] cuda";
    const std::string source = Slurp(task->seeds.at("cuda"));
    auto knobs = ParseTuneKnobs(source);
    ASSERT_TRUE(knobs.ok()) << task->seeds.at("cuda") << ": " << knobs.error().message;
    const size_t count = CountSettings(*knobs);
    ASSERT_LE(count, 64u) << name << ": too many settings to compile them all";
    const Task view = CudaView(*task);
    const auto settings = Exhaustive() ? EnumerateSettings(*knobs, count, 0) : EveryValueOnce(*knobs);
    for (const auto& setting : settings) {
      const std::string candidate = ApplyKnobs(source, setting);
      for (const auto& finding : AuditCudaSource(candidate, view)) {
        ADD_FAILURE() << name << " seed: the audit refuses line " << finding.line << ": "
                      << finding.message;
      }
      pending.push_back({name + " seed with " + FormatSetting(setting), view,
                         SubmitBuild(pool, *compiler, view, {candidate, "seed_cuda.cu", KernelRole::kCandidate, {}})});
    }
  }
  for (auto& item : pending) {
    auto build = item.build.get();
    ASSERT_TRUE(build.ok()) << item.what << ": " << build.error().message;
    EXPECT_TRUE(build->compiled) << item.what << "\n" << build->log.substr(0, 4000);
    EXPECT_FALSE(build->resources.empty()) << item.what << ": no ptxas resource report";
    if (!build->compiled) continue;
    auto symbols = ReadDynamicSymbols(build->shared_object);
    ASSERT_TRUE(symbols.ok()) << item.what << ": " << symbols.error().message;
    for (const auto& finding : AuditCudaBinary(*symbols, item.task, /*nvrtc_form=*/!build->device_code.empty())) {
      ADD_FAILURE() << item.what << ": the audit refuses the built library: " << finding.message;
    }
  }
}

}  // namespace
}  // namespace ksmith::it
