#include "backends/cpu/machine.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "binary/shared_library.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/strings.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// Trusted probe kernels, compiled with the candidates' own flags so that they see the same
// vector units. They time themselves: they run in the evaluator, not the sandbox.
constexpr const char* kProbeSource = R"PROBE(
#include <omp.h>
#include <sys/mman.h>
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <immintrin.h>

// Backed by huge pages where the kernel has them, as the timing loop's buffers are: with 4 KiB
// pages the TLB misses cost a quarter of the bandwidth (29.5 against 37.2 GB/s read-only on the
// development VM), and honest kernels timed on huge pages then read faster than "the peak".
static float* HugeArray(size_t n) {
  constexpr size_t kHuge = size_t{2} << 20;
  const size_t bytes = (n * sizeof(float) + kHuge - 1) / kHuge * kHuge;
  void* data = std::aligned_alloc(kHuge, bytes);
  if (data != nullptr) madvise(data, bytes, MADV_HUGEPAGE);
  return static_cast<float*>(data);
}

extern "C" __attribute__((visibility("default")))
double ksmith_probe_bandwidth_gbs(size_t bytes_per_array, int repetitions) {
  const size_t n = bytes_per_array / sizeof(float);
  float* a = HugeArray(n);
  float* b = HugeArray(n);
  float* c = HugeArray(n);
  #pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) { a[i] = 0.f; b[i] = 1.f; c[i] = 2.f; }
  double best = 0;
  float sum = 0;
  for (int r = 0; r < repetitions; ++r) {
    double start = omp_get_wtime();
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i];
    double copy_s = omp_get_wtime() - start;
    start = omp_get_wtime();
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    double triad_s = omp_get_wtime() - start;
    // A read-only stream: no write-allocate traffic, the rate a reduction or a kernel with
    // streaming stores can reach.
    start = omp_get_wtime();
    float total = 0;
    #pragma omp parallel for simd schedule(static) reduction(+ : total)
    for (size_t i = 0; i < n; ++i) total += c[i];
    double read_s = omp_get_wtime() - start;
    sum += total;
#if defined(__AVX__)
    // Copy and triad with streaming stores: no write-allocate traffic, so a kernel that uses
    // them moves more bytes a second than the plain loops (47.0 and 42.9 GB/s against 27 and 29
    // on the development VM, where honest vector_add settings reached 41.5).
    start = omp_get_wtime();
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n / 8 * 8; i += 8) _mm256_stream_ps(a + i, _mm256_load_ps(b + i));
    _mm_sfence();
    double stream_copy = 2.0 * (n / 8 * 8) * sizeof(float) / (omp_get_wtime() - start) / 1e9;
    start = omp_get_wtime();
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n / 8 * 8; i += 8) {
      _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_load_ps(b + i), _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_load_ps(c + i))));
    }
    _mm_sfence();
    double stream_triad = 3.0 * (n / 8 * 8) * sizeof(float) / (omp_get_wtime() - start) / 1e9;
    if (stream_copy > best) best = stream_copy;
    if (stream_triad > best) best = stream_triad;
#endif
    double copy = 2.0 * n * sizeof(float) / copy_s / 1e9;
    double triad = 3.0 * n * sizeof(float) / triad_s / 1e9;
    double read = 1.0 * n * sizeof(float) / read_s / 1e9;
    if (copy > best) best = copy;
    if (triad > best) best = triad;
    if (read > best) best = read;
  }
#if defined(__AVX__) && defined(__CLFLUSHOPT__)
  // The timed calls run on buffers of a few to tens of megabytes, evicted from the caches before
  // each call: a streaming copy of that size and in that state runs faster than over the large
  // arrays (best of 60 on the development VM: 55-56 GB/s over 4 MiB, 50-52 over 16 MiB, against
  // 47.7 over 1.9 GB), and honest kernels reach it (relu settings at 55).
  for (size_t megabytes : {size_t{4}, size_t{16}}) {
    const size_t small = std::min(n / 8 * 8, (megabytes << 20) / sizeof(float));
    for (int r = 0; r < 8 * repetitions; ++r) {
      for (size_t i = 0; i < small; i += 16) { _mm_clflushopt(a + i); _mm_clflushopt(b + i); }
      _mm_sfence();
      double start = omp_get_wtime();
      #pragma omp parallel for schedule(static)
      for (size_t i = 0; i < small; i += 8) _mm256_stream_ps(a + i, _mm256_load_ps(b + i));
      _mm_sfence();
      double evicted_copy = 2.0 * small * sizeof(float) / (omp_get_wtime() - start) / 1e9;
      if (evicted_copy > best) best = evicted_copy;
    }
  }
#endif
  volatile float sink = a[n / 2] + sum;
  (void)sink;
  std::free(a); std::free(b); std::free(c);
  return best;
}

extern "C" __attribute__((visibility("default")))
double ksmith_probe_gflops(long iterations) {
  double total_flops = 0;
  double start = omp_get_wtime();
  #pragma omp parallel reduction(+ : total_flops)
  {
#if defined(__AVX512F__)
    using Vec = __m512; constexpr int kLanes = 16;
    auto set = [](float v) { return _mm512_set1_ps(v); };
    auto fma = [](Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); };
#elif defined(__FMA__)
    using Vec = __m256; constexpr int kLanes = 8;
    auto set = [](float v) { return _mm256_set1_ps(v); };
    auto fma = [](Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); };
#else
    using Vec = float; constexpr int kLanes = 1;
    auto set = [](float v) { return v; };
    auto fma = [](Vec a, Vec b, Vec c) { return a * b + c; };
#endif
    constexpr int kChains = 12;  // enough independent chains to hide FMA latency
    Vec acc[kChains];
    for (int j = 0; j < kChains; ++j) acc[j] = set(1.0f + j * 1e-3f);
    const Vec m = set(0.999999f), add = set(1e-7f);
    for (long i = 0; i < iterations; ++i) {
      for (int j = 0; j < kChains; ++j) acc[j] = fma(acc[j], m, add);
    }
    float sum = 0;
    for (int j = 0; j < kChains; ++j) {
      float lanes[kLanes];
      *reinterpret_cast<Vec*>(lanes) = acc[j];
      for (int l = 0; l < kLanes; ++l) sum += lanes[l];
    }
    volatile float sink = sum;
    (void)sink;
    total_flops += 2.0 * kLanes * kChains * static_cast<double>(iterations);
  }
  return total_flops / (omp_get_wtime() - start) / 1e9;
}
)PROBE";

constexpr const char* kProbeVersion = "5";  // 2: the read-only stream; 3: huge pages, streaming stores; 4-5: a streaming copy at timed sizes after eviction
constexpr size_t kBandwidthArrayMinBytes = size_t{64} << 20;
constexpr int kBandwidthRepetitions = 5;
constexpr long kFlopIterations = 20'000'000;
constexpr int kFlopRepetitions = 3;

uint64_t ReadCacheSize(int index) {
  std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  std::string text;
  if (!(file >> text) || text.empty()) return 0;
  uint64_t value = std::stoull(text);
  if (text.back() == 'K') value <<= 10;
  if (text.back() == 'M') value <<= 20;
  return value;
}

std::string CurrentTime() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

struct Probe {
  std::unique_ptr<SharedLibrary> library;
  double (*bandwidth)(size_t bytes_per_array, int repetitions) = nullptr;  // [GB/s]
  double (*gflops)(long iterations) = nullptr;
};

Result<Probe> LoadProbe(const CpuCompiler& compiler) {
  auto build = compiler.BuildStandalone(kProbeSource, "ksmith_probe.cc");
  if (!build.ok()) return build.error();
  if (!build->compiled) {
    return MakeError(ErrorKind::kInternal, "the machine probe did not compile:\n{}", build->log);
  }
  auto library = SharedLibrary::Open(build->shared_object);
  if (!library.ok()) return library.error();
  auto bandwidth = (*library)->Symbol("ksmith_probe_bandwidth_gbs");
  auto gflops = (*library)->Symbol("ksmith_probe_gflops");
  if (!bandwidth.ok() || !gflops.ok()) return MakeError(ErrorKind::kInternal, "probe symbols missing");
  Probe probe;
  probe.bandwidth = reinterpret_cast<double (*)(size_t, int)>(*bandwidth);
  probe.gflops = reinterpret_cast<double (*)(long)>(*gflops);
  probe.library = std::move(library.value());
  return probe;
}

size_t BandwidthArrayBytes(uint64_t llc_bytes) { return std::max<size_t>(kBandwidthArrayMinBytes, 4 * llc_bytes); }

}  // namespace

nlohmann::json MachineFacts::ToJson() const {
  return {{"hostname", hostname},
          {"cpu_model", cpu_model},
          {"cores", cores},
          {"l1d_bytes", l1d_bytes},
          {"l2_bytes", l2_bytes},
          {"llc_bytes", llc_bytes},
          {"compiler", compiler},
          {"memory_bandwidth_gbs", memory_bandwidth_gbs},
          {"fp32_gflops", fp32_gflops},
          {"measured_at", measured_at},
          {"from_cache", from_cache}};
}

MachineFacts MachineFacts::FromJson(const nlohmann::json& json) {
  MachineFacts facts;
  facts.hostname = json.value("hostname", "");
  facts.cpu_model = json.value("cpu_model", "");
  facts.cores = json.value("cores", 1);
  facts.l1d_bytes = json.value("l1d_bytes", uint64_t{0});
  facts.l2_bytes = json.value("l2_bytes", uint64_t{0});
  facts.llc_bytes = json.value("llc_bytes", uint64_t{0});
  facts.compiler = json.value("compiler", "");
  facts.memory_bandwidth_gbs = json.value("memory_bandwidth_gbs", 0.0);
  facts.fp32_gflops = json.value("fp32_gflops", 0.0);
  facts.measured_at = json.value("measured_at", "");
  return facts;
}

fs::path MachineFactsCachePath(const fs::path& cache_directory, const MachineFacts& facts) {
  // The probe's version is part of the key: a cache from an older probe is measured again.
  const std::string key = Sha256Hex(std::string(kProbeVersion) + "|" + facts.cpu_model + "|" +
                                    std::to_string(facts.cores) + "|" + facts.compiler + "|" +
                                    std::to_string(facts.llc_bytes))
                              .substr(0, 16);
  return cache_directory / ("machine-" + key + ".json");
}

Result<double> MeasureBandwidthNow(const CpuCompiler& compiler, uint64_t llc_bytes) {
  auto probe = LoadProbe(compiler);
  if (!probe.ok()) return probe.error();
  return probe->bandwidth(BandwidthArrayBytes(llc_bytes), kBandwidthRepetitions);
}

MachineFacts ProbeMachine() {
  MachineFacts facts;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  facts.hostname = host;
  facts.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.starts_with("model name")) {
      facts.cpu_model = std::string(Trim(line.substr(line.find(':') + 1)));
      break;
    }
  }
  // index0: L1d, index2: L2, index3 (when present): L3.
  facts.l1d_bytes = ReadCacheSize(0);
  facts.l2_bytes = ReadCacheSize(2);
  const uint64_t l3 = ReadCacheSize(3);
  facts.llc_bytes = l3 > 0 ? l3 : facts.l2_bytes;
  if (facts.llc_bytes == 0) facts.llc_bytes = uint64_t{32} << 20;  // conservative when unknown
  return facts;
}

Result<MachineFacts> LoadMachineFacts(const CpuCompiler& compiler, const fs::path& cache_directory,
                                      bool refresh) {
  MachineFacts facts = ProbeMachine();
  facts.compiler = compiler.info().version;
  const fs::path cache_path = MachineFactsCachePath(cache_directory, facts);
  if (!refresh) {
    if (auto cached = ReadFile(cache_path); cached.ok()) {
      const auto json = nlohmann::json::parse(*cached, nullptr, false);
      if (!json.is_discarded() && json.value("fp32_gflops", 0.0) > 0) {
        MachineFacts loaded = MachineFacts::FromJson(json);
        loaded.from_cache = true;
        return loaded;
      }
    }
  }
  auto probe = LoadProbe(compiler);
  if (!probe.ok()) return probe.error();
  facts.memory_bandwidth_gbs = probe->bandwidth(BandwidthArrayBytes(facts.llc_bytes), kBandwidthRepetitions);
  for (int i = 0; i < kFlopRepetitions; ++i) {
    facts.fp32_gflops = std::max(facts.fp32_gflops, probe->gflops(kFlopIterations));
  }
  facts.measured_at = CurrentTime();
  (void)WriteFileAtomic(cache_path, facts.ToJson().dump(2));
  return facts;
}

}  // namespace ksmith
