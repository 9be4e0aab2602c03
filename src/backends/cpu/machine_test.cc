// Machine facts: the cheap probe (cores, caches) and the cache of measured facts. The slow
// bandwidth and FLOP measurement is not run here.
#include "backends/cpu/machine.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

TEST(ProbeMachine, FindsAtLeastOneCoreAndALastLevelCache) {
  const MachineFacts facts = ProbeMachine();
  EXPECT_GE(facts.cores, 1);
  EXPECT_EQ(facts.cores, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_GT(facts.llc_bytes, 0u);
  EXPECT_FALSE(facts.hostname.empty());
}

TEST(ProbeMachine, CacheSizesAreOrderedWhenKnown) {
  const MachineFacts facts = ProbeMachine();
  if (facts.l1d_bytes > 0 && facts.l2_bytes > 0) {
    EXPECT_LE(facts.l1d_bytes, facts.l2_bytes);
  }
  if (facts.l2_bytes > 0) {
    EXPECT_LE(facts.l2_bytes, facts.llc_bytes);
  }
  // Sizes are whole KiB: "48K" in sysfs is 48 << 10 bytes.
  EXPECT_EQ(facts.llc_bytes % 1024, 0u);
}

TEST(ProbeMachine, MeasuresNothing) {
  const MachineFacts facts = ProbeMachine();
  EXPECT_EQ(facts.memory_bandwidth_gbs, 0.0);
  EXPECT_EQ(facts.fp32_gflops, 0.0);
  EXPECT_TRUE(facts.measured_at.empty());
  EXPECT_FALSE(facts.from_cache);
}

TEST(ProbeMachine, IsStableAcrossCalls) {
  const MachineFacts first = ProbeMachine();
  const MachineFacts second = ProbeMachine();
  EXPECT_EQ(first.cpu_model, second.cpu_model);
  EXPECT_EQ(first.cores, second.cores);
  EXPECT_EQ(first.llc_bytes, second.llc_bytes);
}

TEST(MachineFacts, JsonRoundTripKeepsEveryMeasuredField) {
  MachineFacts facts;
  facts.hostname = "host";
  facts.cpu_model = "Test CPU @ 3.0GHz";
  facts.cores = 12;
  facts.l1d_bytes = 48 << 10;
  facts.l2_bytes = 2 << 20;
  facts.llc_bytes = uint64_t{64} << 20;
  facts.compiler = "g++ (Debian 12.2.0) 12.2.0";
  facts.memory_bandwidth_gbs = 123.5;
  facts.fp32_gflops = 4567.25;
  facts.measured_at = "2025-01-02T03:04:05Z";
  const nlohmann::json json = facts.ToJson();
  EXPECT_EQ(json.at("cores"), 12);
  EXPECT_EQ(json.at("llc_bytes"), uint64_t{64} << 20);
  const MachineFacts back = MachineFacts::FromJson(json);
  EXPECT_EQ(back.hostname, facts.hostname);
  EXPECT_EQ(back.cpu_model, facts.cpu_model);
  EXPECT_EQ(back.cores, facts.cores);
  EXPECT_EQ(back.l1d_bytes, facts.l1d_bytes);
  EXPECT_EQ(back.l2_bytes, facts.l2_bytes);
  EXPECT_EQ(back.llc_bytes, facts.llc_bytes);
  EXPECT_EQ(back.compiler, facts.compiler);
  EXPECT_DOUBLE_EQ(back.memory_bandwidth_gbs, facts.memory_bandwidth_gbs);
  EXPECT_DOUBLE_EQ(back.fp32_gflops, facts.fp32_gflops);
  EXPECT_EQ(back.measured_at, facts.measured_at);
}

TEST(MachineFacts, FromJsonFillsDefaultsForMissingFields) {
  const MachineFacts facts = MachineFacts::FromJson(nlohmann::json::object());
  EXPECT_EQ(facts.cores, 1);
  EXPECT_EQ(facts.llc_bytes, 0u);
  EXPECT_EQ(facts.fp32_gflops, 0.0);
  EXPECT_TRUE(facts.hostname.empty());
}

class LoadMachineFactsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    const char* previous = std::getenv("KSMITH_CACHE_DIR");
    if (previous) saved_ = previous;
    ::setenv("KSMITH_CACHE_DIR", temp_.path().c_str(), 1);
    auto cache = CacheDirectory();
    ASSERT_TRUE(cache.ok());
    cache_ = *cache;
    auto compiler = CpuCompiler::Create(cache_);
    ASSERT_TRUE(compiler.ok()) << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("KSMITH_CACHE_DIR", saved_->c_str(), 1);
    } else {
      ::unsetenv("KSMITH_CACHE_DIR");
    }
  }

  // The cache file the facts of this machine and compiler are stored under (machine.cc's key).
  fs::path CachePath() const {
    MachineFacts probe = ProbeMachine();
    probe.compiler = compiler_->info().version;
    return MachineFactsCachePath(cache_, probe);
  }

  ScopedTempDir temp_{"ksmith-machine"};
  std::optional<std::string> saved_;
  fs::path cache_;
  std::optional<CpuCompiler> compiler_;
};

TEST_F(LoadMachineFactsTest, UsesCachedMeasurementsWithoutMeasuringAgain) {
  MachineFacts cached = ProbeMachine();
  cached.compiler = compiler_->info().version;
  cached.memory_bandwidth_gbs = 77.0;
  cached.fp32_gflops = 999.0;
  cached.measured_at = "2025-01-01T00:00:00Z";
  ASSERT_TRUE(WriteFileAtomic(CachePath(), cached.ToJson().dump(2)).ok());

  auto facts = LoadMachineFacts(*compiler_, cache_, /*refresh=*/false);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->from_cache);
  EXPECT_DOUBLE_EQ(facts->memory_bandwidth_gbs, 77.0);
  EXPECT_DOUBLE_EQ(facts->fp32_gflops, 999.0);
  EXPECT_EQ(facts->measured_at, "2025-01-01T00:00:00Z");
  // Nothing was compiled: the probe kernels did not run.
  EXPECT_TRUE(fs::is_empty(cache_ / "objects"));
}

}  // namespace
}  // namespace ksmith
