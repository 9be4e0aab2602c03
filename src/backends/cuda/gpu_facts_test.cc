// GPU facts without a GPU: the worker's JSON (as an H100 prints it), the cache, and every way the
// worker can be missing or fail. Fake workers are shell scripts.
#include "backends/cuda/gpu_facts.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kUuid = "GPU-5a6b7c8d-1e2f-3a4b-5c6d-7e8f9a0b1c2d";

// What `ksmith-cuda-worker --describe` prints on an H100 SXM (values from the device attributes).
Json H100Describe() {
  return {{"device", 0},
          {"name", "NVIDIA H100 80GB HBM3"},
          {"uuid", kUuid},
          {"compute_capability", "9.0"},
          {"sm_count", 132},
          {"max_threads_per_sm", 2048},
          {"shared_memory_per_block_default_bytes", 49152},
          {"shared_memory_per_block_bytes", 232448},
          {"shared_memory_per_sm_bytes", 233472},
          {"registers_per_sm", 65536},
          {"l2_bytes", 52428800},
          {"persisting_l2_max_bytes", 32505856},
          {"memory_bytes", uint64_t{85045510144}},
          {"memory_bus_width_bits", 5120},
          {"sm_clock_max_mhz", 1980},
          {"memory_clock_mhz", 2619},
          {"theoretical_bandwidth_gbps", 3352.32},
          {"ecc_enabled", true},
          {"pci_bus_id", "0000:18:00.0"},
          {"driver_version", "580.159.03"},
          {"driver_cuda_version", "13.0"},
          {"runtime_version", "13.0"}};
}

Json H100Peaks() {
  return {{"copy", {{"bytes", 1073741824}, {"repetitions", 10}, {"best_ms", 0.7532},
                    {"median_ms", 0.7561}, {"best_gbps", 2851.3}, {"median_gbps", 2840.1},
                    {"seconds", 0.21}}},
          {"fp32_fma", {{"blocks", 1056}, {"threads_per_block", 256}, {"flops", 5.67e11},
                        {"repetitions", 5}, {"best_ms", 9.49}, {"median_ms", 9.52},
                        {"best_tflops", 59.7}, {"median_tflops", 59.5}, {"seconds", 0.09}}},
          {"bf16_gemm", {{"m", 8192}, {"n", 8192}, {"k", 8192}, {"library", "cublasGemmEx"},
                         {"repetitions", 10}, {"best_ms", 1.4756}, {"median_ms", 1.51},
                         {"best_tflops", 745.2}, {"median_tflops", 728.1}, {"seconds", 0.41}}},
          {"errors", Json::array()},
          {"seconds", 0.93}};
}

Json H100Probe() { return {{"describe", H100Describe()}, {"peaks", H100Peaks()}}; }

// A fake ksmith-cuda-worker: prints `describe` for --describe and `probe` for --probe, or fails
// when one is empty.
class FakeWorker {
 public:
  FakeWorker(const std::string& describe_output, const std::string& probe_output) {
    EXPECT_TRUE(WriteFileAtomic(dir_.path() / "describe.out", describe_output).ok());
    EXPECT_TRUE(WriteFileAtomic(dir_.path() / "probe.out", probe_output).ok());
    const std::string script =
        "#!/bin/sh\n"
        "cd \"$(dirname \"$0\")\"\n"
        "echo \"$1\" >> calls.log\n"
        "case \"$1\" in\n"
        "  --describe) [ -s describe.out ] || { echo 'describe broke' >&2; exit 4; }; cat describe.out ;;\n"
        "  --probe) [ -s probe.out ] || { echo 'the probe must not run' >&2; exit 5; }; cat probe.out ;;\n"
        "  *) exit 2 ;;\n"
        "esac\n";
    EXPECT_TRUE(WriteFileAtomic(path(), script).ok());
    fs::permissions(path(), fs::perms::owner_all);
  }

  fs::path path() const { return dir_.path() / "ksmith-cuda-worker"; }
  fs::path cache() const { return dir_.path() / "cache"; }
  std::string calls() const {
    auto log = ReadFile(dir_.path() / "calls.log");
    return log.ok() ? *log : "";
  }

 private:
  ScopedTempDir dir_{"ksmith-gpu-facts-test"};
};

TEST(GpuFacts, ReadsTheWorkersProbeOutput) {
  auto facts = GpuFacts::FromWorkerJson(H100Probe());
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_EQ(facts->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(facts->uuid, kUuid);
  EXPECT_EQ(facts->compute_capability, "9.0");
  EXPECT_EQ(facts->sm_count, 132);
  EXPECT_EQ(facts->l2_bytes, 52428800u);
  EXPECT_EQ(facts->shared_memory_per_block_bytes, 232448u);
  EXPECT_EQ(facts->shared_memory_per_block_default_bytes, 49152u);
  EXPECT_EQ(facts->shared_memory_per_sm_bytes, 233472u);
  EXPECT_EQ(facts->memory_bytes, 85045510144u);
  EXPECT_EQ(facts->sm_clock_max_mhz, 1980);
  EXPECT_EQ(facts->memory_clock_mhz, 2619);
  EXPECT_EQ(facts->driver_version, "580.159.03");
  EXPECT_EQ(facts->runtime_version, "13.0");
  // The peaks are the best repetitions.
  EXPECT_DOUBLE_EQ(facts->copy_bandwidth_gbps, 2851.3);
  EXPECT_DOUBLE_EQ(facts->fp32_tflops, 59.7);
  EXPECT_DOUBLE_EQ(facts->bf16_tensor_tflops, 745.2);
  EXPECT_TRUE(facts->measured());
  EXPECT_TRUE(facts->probe_errors.empty());
}

TEST(GpuFacts, JsonRoundTripKeepsEveryField) {
  auto facts = GpuFacts::FromWorkerJson(H100Probe());
  ASSERT_TRUE(facts.ok());
  facts->measured_at = "2026-03-01T12:00:00Z";
  facts->probe_errors = {"cublasGemmEx: CUBLAS_STATUS_NOT_SUPPORTED"};
  const Json json = facts->ToJson();
  auto again = GpuFacts::FromJson(json);
  ASSERT_TRUE(again.ok()) << again.error().message;
  Json again_json = again->ToJson();
  EXPECT_EQ(again_json, json);
  // Every fact has its own key, with its unit in the name.
  for (const char* key : {"l2_bytes", "shared_memory_per_block_bytes", "sm_clock_max_mhz",
                          "copy_bandwidth_gbps", "fp32_tflops", "bf16_tensor_tflops"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
}

TEST(GpuFacts, DescribeAloneHasNoMeasurements) {
  auto facts = GpuFacts::FromWorkerJson(H100Describe());
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->sm_count, 132);
  EXPECT_FALSE(facts->measured());
  EXPECT_EQ(facts->bf16_tensor_tflops, 0.0);
}

TEST(GpuFacts, AWorkerErrorMeansNoGpu) {
  const Json no_device = {{"error", "cudaErrorNoDevice: no CUDA-capable device is detected"}};
  for (const Json& output : {no_device, Json{{"describe", no_device}, {"peaks", Json::object()}}}) {
    auto facts = GpuFacts::FromWorkerJson(output);
    ASSERT_FALSE(facts.ok());
    EXPECT_EQ(facts.error().kind, ErrorKind::kUnsupported);
    EXPECT_EQ(facts.error().message, "no CUDA GPU: cudaErrorNoDevice: no CUDA-capable device is detected");
  }
}

TEST(GpuFacts, MalformedJsonIsAnErrorValue) {
  EXPECT_EQ(GpuFacts::FromJson(Json::array()).error().kind, ErrorKind::kParse);
  EXPECT_EQ(GpuFacts::FromJson(Json{{"uuid", kUuid}, {"sm_count", "many"}}).error().kind,
            ErrorKind::kParse);
  EXPECT_EQ(GpuFacts::FromJson(Json{{"name", "no uuid"}}).error().kind, ErrorKind::kParse);
  Json probe = H100Probe();
  probe["peaks"]["errors"] = "not a list";
  EXPECT_EQ(GpuFacts::FromWorkerJson(probe).error().kind, ErrorKind::kParse);
}

TEST(LoadGpuFacts, SaysTheWorkerWasNotBuilt) {
  ScopedTempDir cache("ksmith-gpu-facts-test");
  auto facts = LoadGpuFacts("/nonexistent/ksmith-cuda-worker", cache.path(), false);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(facts.error().message.find(
                "ksmith-cuda-worker was not built: nvcc not found at configure time"),
            std::string::npos)
      << facts.error().message;
}

TEST(LoadGpuFacts, SaysThereIsNoGpu) {
  FakeWorker worker(R"({"error": "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"})",
                    "");
  auto facts = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, ErrorKind::kUnsupported);
  EXPECT_EQ(facts.error().message.rfind("no CUDA GPU: cudaErrorInsufficientDriver", 0), 0u)
      << facts.error().message;
}

TEST(LoadGpuFacts, AWorkerThatPrintsNoJsonIsAnInternalError) {
  FakeWorker worker("", "");  // --describe exits 4 with text only
  auto facts = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_FALSE(facts.ok());
  EXPECT_EQ(facts.error().kind, ErrorKind::kInternal);
  EXPECT_NE(facts.error().message.find("--describe failed (exit code 4)"), std::string::npos)
      << facts.error().message;
  EXPECT_NE(facts.error().message.find("describe broke"), std::string::npos);
}

TEST(LoadGpuFacts, UsesTheCacheWithoutRunningTheProbe) {
  // Given a cached measurement for this GPU and a worker whose --probe fails, the facts come
  // from the cache, and the fixed properties from the fresh --describe.
  Json describe = H100Describe();
  describe["driver_version"] = "580.200.01";  // the driver was upgraded since the measurement
  FakeWorker worker(describe.dump(), "");
  auto cached = GpuFacts::FromWorkerJson(H100Probe());
  ASSERT_TRUE(cached.ok());
  cached->measured_at = "2026-03-01T12:00:00Z";
  ASSERT_TRUE(WriteFileAtomic(worker.cache() / (std::string("gpu-") + kUuid + ".json"),
                              cached->ToJson().dump(2))
                  .ok());

  auto facts = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_TRUE(facts->from_cache);
  EXPECT_DOUBLE_EQ(facts->bf16_tensor_tflops, 745.2);
  EXPECT_EQ(facts->measured_at, "2026-03-01T12:00:00Z");
  EXPECT_EQ(facts->driver_version, "580.200.01");
  EXPECT_EQ(worker.calls(), "--describe\n");
}

TEST(LoadGpuFacts, MeasuresOnceThenCaches) {
  // Worker output arrives with stderr mixed in: the JSON is still found.
  FakeWorker worker(H100Describe().dump(),
                    "CUDA warning: something harmless\n" + H100Probe().dump(2) + "\n");
  auto first = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->from_cache);
  EXPECT_DOUBLE_EQ(first->copy_bandwidth_gbps, 2851.3);
  EXPECT_FALSE(first->measured_at.empty());
  EXPECT_TRUE(fs::exists(worker.cache() / (std::string("gpu-") + kUuid + ".json")));

  auto second = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  EXPECT_DOUBLE_EQ(second->copy_bandwidth_gbps, 2851.3);
  EXPECT_EQ(worker.calls(), "--describe\n--probe\n--describe\n");
}

TEST(LoadGpuFacts, RefreshMeasuresAgain) {
  FakeWorker worker(H100Describe().dump(), H100Probe().dump());
  ASSERT_TRUE(LoadGpuFacts(worker.path(), worker.cache(), false).ok());
  auto refreshed = LoadGpuFacts(worker.path(), worker.cache(), true);
  ASSERT_TRUE(refreshed.ok());
  EXPECT_FALSE(refreshed->from_cache);
  EXPECT_EQ(worker.calls(), "--describe\n--probe\n--describe\n--probe\n");
}

TEST(LoadGpuFacts, APartialMeasurementIsReturnedButNotCached) {
  Json probe = H100Probe();
  probe["peaks"].erase("bf16_gemm");
  probe["peaks"]["errors"] = {"cublasCreate: CUBLAS_STATUS_NOT_INITIALIZED: the library was not initialized"};
  FakeWorker worker(H100Describe().dump(), probe.dump());
  auto facts = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_FALSE(facts->measured());
  EXPECT_DOUBLE_EQ(facts->copy_bandwidth_gbps, 2851.3);
  ASSERT_EQ(facts->probe_errors.size(), 1u);
  EXPECT_FALSE(fs::exists(worker.cache() / (std::string("gpu-") + kUuid + ".json")));
}

TEST(LoadGpuFacts, ACorruptCacheIsMeasuredAgain) {
  FakeWorker worker(H100Describe().dump(), H100Probe().dump());
  ASSERT_TRUE(WriteFileAtomic(worker.cache() / (std::string("gpu-") + kUuid + ".json"), "{not json").ok());
  auto facts = LoadGpuFacts(worker.path(), worker.cache(), false);
  ASSERT_TRUE(facts.ok()) << facts.error().message;
  EXPECT_FALSE(facts->from_cache);
  EXPECT_TRUE(facts->measured());
}

TEST(DefaultCudaWorkerExecutable, HonoursTheEnvironmentElseSitsBesideThisExecutable) {
  {
    testing::ScopedEnv env("KSMITH_CUDA_WORKER", "/opt/ksmith/ksmith-cuda-worker");
    EXPECT_EQ(DefaultCudaWorkerExecutable(), fs::path("/opt/ksmith/ksmith-cuda-worker"));
  }
  testing::ScopedEnv env("KSMITH_CUDA_WORKER", "");
  const fs::path self = fs::read_symlink("/proc/self/exe");
  EXPECT_EQ(DefaultCudaWorkerExecutable(), self.parent_path() / "ksmith-cuda-worker");
}

}  // namespace
}  // namespace ksmith
