// The compile pool with real nvcc builds: concurrent builds, and a destructor that finishes queued
// work. Skipped, with a message, where nvcc is not installed. And, with stand-in builds, the
// memory slots that bound how many build at once.
#include "eval/compile_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "backends/cuda/nvcc_compiler.h"
#include "core/files.h"
#include "task/task_loader.h"
#include "testing/test_nvcc.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// A distinct kernel per `scale`, so that no build is a cache hit of another.
std::string ScaledAdd(int scale) {
  return fmt::format(R"(
#include <cstdint>
#include <cuda_runtime.h>
__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {{
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + {}.0f * b[i];
}}
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n, cudaStream_t stream) {{
  if (n > 0) add_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
}}
)", scale);
}

class CompilePoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    auto compiler = testing::TestNvcc(temp_.path() / "cache");
    if (!compiler.ok()) GTEST_SKIP() << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
    auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::move(task.value());
  }

  // The build of one request, as the pool runs it.
  std::function<Result<BuildOutput>()> Build(BuildRequest request) {
    return [this, request = std::move(request)] { return compiler_->Build(task_, request); };
  }

  ScopedTempDir temp_{"ksmith-build-pool"};
  std::optional<NvccCompiler> compiler_;
  Task task_;
};

TEST_F(CompilePoolTest, DefaultsToOneThreadPerCore) {
  CompilePool pool;
  EXPECT_EQ(pool.threads(), std::max(1u, std::thread::hardware_concurrency()));
}

TEST_F(CompilePoolTest, RunsThreeRealBuildsConcurrently) {
  CompilePool pool(3);
  std::vector<std::future<Result<BuildOutput>>> builds;
  for (int scale = 1; scale <= 3; ++scale) {
    builds.push_back(pool.Submit(Build({ScaledAdd(scale), "candidate.cu", KernelRole::kCandidate, {}})));
  }
  std::set<fs::path> objects;
  for (auto& future : builds) {
    auto build = future.get();
    ASSERT_TRUE(build.ok()) << build.error().message;
    ASSERT_TRUE(build->compiled) << build->log;
    EXPECT_FALSE(build->cache_hit);
    EXPECT_TRUE(fs::exists(build->shared_object));
    EXPECT_FALSE(build->resources.empty());
    objects.insert(build->shared_object);
  }
  EXPECT_EQ(objects.size(), 3u);
}

TEST_F(CompilePoolTest, TheDestructorFinishesEveryQueuedBuild) {
  std::vector<std::future<Result<BuildOutput>>> builds;
  {
    // One thread, three jobs: two are still queued when the pool goes out of scope.
    CompilePool pool(1);
    builds.push_back(pool.Submit(Build({ScaledAdd(4), "candidate.cu", KernelRole::kCandidate, {}})));
    builds.push_back(pool.Submit(Build({"this is not CUDA", "broken.cu", KernelRole::kCandidate, {}})));
    builds.push_back(pool.Submit(Build({ScaledAdd(4), "candidate.cu", KernelRole::kCandidate, {}})));
  }
  for (auto& future : builds) {
    ASSERT_EQ(future.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  }
  auto first = builds[0].get();
  auto broken = builds[1].get();
  auto again = builds[2].get();
  ASSERT_TRUE(first.ok() && broken.ok() && again.ok());
  EXPECT_TRUE(first->compiled);
  EXPECT_FALSE(broken->compiled);  // a compile error is a result, not an Error
  EXPECT_TRUE(again->cache_hit);
}

// A stand-in build that takes `slots` and records how many slots were in use at once.
struct SlotMeter {
  std::atomic<int> in_use{0};
  std::atomic<int> most{0};

  std::function<Result<BuildOutput>()> Build(int slots) {
    return [this, slots] {
      const int now = in_use += slots;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      in_use -= slots;
      return Result<BuildOutput>(BuildOutput{});
    };
  }
};

TEST(CompilePoolSlots, NoMoreBuildsRunAtOnceThanTheMemoryHolds) {
  // Given four threads but memory for two builds at the limit, then at most two run at once.
  CompilePool pool(4, 2);
  EXPECT_EQ(pool.memory_slots(), 2u);
  SlotMeter meter;
  std::vector<std::future<Result<BuildOutput>>> builds;
  for (int i = 0; i < 8; ++i) builds.push_back(pool.Submit(meter.Build(1), 1));
  for (auto& build : builds) ASSERT_TRUE(build.get().ok());
  EXPECT_EQ(meter.most.load(), 2);
}

TEST(CompilePoolSlots, ABuildOfSeveralProcessesTakesTheirSlotsAndNeverMoreThanAll) {
  // Given three slots, a build sandbox of three processes runs alone, and one asking for more
  // than there are still runs (it takes all of them).
  CompilePool pool(4, 3);
  SlotMeter meter;
  std::vector<std::future<Result<BuildOutput>>> builds;
  builds.push_back(pool.Submit(meter.Build(1), 1));
  builds.push_back(pool.Submit(meter.Build(3), 3));
  builds.push_back(pool.Submit(meter.Build(1), 1));
  builds.push_back(pool.Submit(meter.Build(3), 10));
  for (auto& build : builds) {
    ASSERT_EQ(build.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    ASSERT_TRUE(build.get().ok());
  }
  EXPECT_EQ(meter.most.load(), 3);
}

TEST(CompilePoolSlots, WithoutAMemoryBoundEveryThreadBuilds) {
  CompilePool pool(3);
  EXPECT_EQ(pool.memory_slots(), 3 * kMemorySlotsPerBuild);
  SlotMeter meter;
  std::vector<std::future<Result<BuildOutput>>> builds;
  for (int i = 0; i < 6; ++i) builds.push_back(pool.Submit(meter.Build(kMemorySlotsPerBuild)));
  for (auto& build : builds) ASSERT_TRUE(build.get().ok());
  EXPECT_EQ(meter.most.load(), static_cast<int>(3 * kMemorySlotsPerBuild));
}

}  // namespace
}  // namespace ksmith
