#include "backends/cuda/gpu_facts.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string_view>

#include "core/files.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// --describe pays for CUDA initialization only (well under a second on an H100); a minute for
// --probe leaves room for a slow GPU, a busy machine and cuBLAS's first load.
constexpr std::chrono::seconds kDescribeTimeout{30};
constexpr std::chrono::seconds kProbeTimeout{60};
constexpr size_t kOutputTailBytes = 2000;

std::string CurrentTime() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

// The worker's stdout and stderr arrive mixed (RunCommand), and the CUDA runtime may print
// warnings: the JSON is the first object that parses, starting at a line that opens with '{'.
std::optional<Json> ExtractJson(std::string_view output) {
  const size_t last_brace = output.rfind('}');
  if (last_brace == std::string_view::npos) return std::nullopt;
  size_t start = 0;
  while (start < last_brace) {
    if (output[start] == '{') {
      Json json = Json::parse(output.substr(start, last_brace + 1 - start), nullptr, false);
      if (!json.is_discarded() && json.is_object()) return json;
    }
    const size_t newline = output.find('\n', start);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  return std::nullopt;
}

Result<Json> RunWorker(const fs::path& worker, const char* mode, std::chrono::seconds timeout) {
  SpawnOptions options;
  options.argv = {worker.string(), mode};
  options.inherit_environment = true;  // CUDA_VISIBLE_DEVICES and the loader path matter here
  auto run = RunCommand(options, timeout);
  if (!run.ok()) return run.error();
  const std::string command = worker.filename().string() + " " + mode;
  if (run->timed_out) {
    return MakeError(ErrorKind::kTimeout, "{} {}", command, run->Describe());
  }
  std::optional<Json> json = ExtractJson(run->output);
  // A worker that found no GPU still prints {"error": ...}; trust the JSON over the exit code.
  if (json) return *json;
  return MakeError(ErrorKind::kInternal, "{} failed ({}) without printing JSON: {}", command,
                   run->Describe(), Tail(run->output, kOutputTailBytes));
}

// A uuid from the worker goes into a file name: keep it to characters that cannot escape the
// cache folder.
std::string FileNameSafe(std::string_view text) {
  std::string safe;
  for (const char c : text) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    safe += keep ? c : '_';
  }
  return safe;
}

void CopyMeasurements(const GpuFacts& from, GpuFacts& to) {
  to.copy_bandwidth_gbps = from.copy_bandwidth_gbps;
  to.fp32_tflops = from.fp32_tflops;
  to.bf16_tensor_tflops = from.bf16_tensor_tflops;
  to.probe_errors = from.probe_errors;
  to.measured_at = from.measured_at;
}

Error NoGpu(const std::string& reason) {
  return MakeError(ErrorKind::kUnsupported, "no CUDA GPU: {}", reason);
}

}  // namespace

bool GpuFacts::measured() const {
  return copy_bandwidth_gbps > 0 && fp32_tflops > 0 && bf16_tensor_tflops > 0;
}

Json GpuFacts::ToJson() const {
  return {{"name", name},
          {"uuid", uuid},
          {"compute_capability", compute_capability},
          {"sm_count", sm_count},
          {"l2_bytes", l2_bytes},
          {"persisting_l2_max_bytes", persisting_l2_max_bytes},
          {"shared_memory_per_block_bytes", shared_memory_per_block_bytes},
          {"shared_memory_per_block_default_bytes", shared_memory_per_block_default_bytes},
          {"shared_memory_per_sm_bytes", shared_memory_per_sm_bytes},
          {"registers_per_sm", registers_per_sm},
          {"max_threads_per_sm", max_threads_per_sm},
          {"memory_bytes", memory_bytes},
          {"memory_bus_width_bits", memory_bus_width_bits},
          {"sm_clock_max_mhz", sm_clock_max_mhz},
          {"memory_clock_mhz", memory_clock_mhz},
          {"theoretical_bandwidth_gbps", theoretical_bandwidth_gbps},
          {"ecc_enabled", ecc_enabled},
          {"driver_version", driver_version},
          {"runtime_version", runtime_version},
          {"copy_bandwidth_gbps", copy_bandwidth_gbps},
          {"fp32_tflops", fp32_tflops},
          {"bf16_tensor_tflops", bf16_tensor_tflops},
          {"probe_errors", probe_errors},
          {"measured_at", measured_at},
          {"from_cache", from_cache}};
}

Result<GpuFacts> GpuFacts::FromJson(const Json& json) {
  if (!json.is_object()) return MakeError(ErrorKind::kParse, "GPU facts: not a JSON object");
  // value() throws when a key holds the wrong type; a corrupt cache file is a value, not a crash.
  try {
    GpuFacts facts;
    facts.name = json.value("name", "");
    facts.uuid = json.value("uuid", "");
    facts.compute_capability = json.value("compute_capability", "");
    facts.sm_count = json.value("sm_count", 0);
    facts.l2_bytes = json.value("l2_bytes", uint64_t{0});
    facts.persisting_l2_max_bytes = json.value("persisting_l2_max_bytes", uint64_t{0});
    facts.shared_memory_per_block_bytes = json.value("shared_memory_per_block_bytes", uint64_t{0});
    facts.shared_memory_per_block_default_bytes =
        json.value("shared_memory_per_block_default_bytes", uint64_t{0});
    facts.shared_memory_per_sm_bytes = json.value("shared_memory_per_sm_bytes", uint64_t{0});
    facts.registers_per_sm = json.value("registers_per_sm", 0);
    facts.max_threads_per_sm = json.value("max_threads_per_sm", 0);
    facts.memory_bytes = json.value("memory_bytes", uint64_t{0});
    facts.memory_bus_width_bits = json.value("memory_bus_width_bits", 0);
    facts.sm_clock_max_mhz = json.value("sm_clock_max_mhz", 0);
    facts.memory_clock_mhz = json.value("memory_clock_mhz", 0);
    facts.theoretical_bandwidth_gbps = json.value("theoretical_bandwidth_gbps", 0.0);
    facts.ecc_enabled = json.value("ecc_enabled", false);
    facts.driver_version = json.value("driver_version", "");
    facts.runtime_version = json.value("runtime_version", "");
    facts.copy_bandwidth_gbps = json.value("copy_bandwidth_gbps", 0.0);
    facts.fp32_tflops = json.value("fp32_tflops", 0.0);
    facts.bf16_tensor_tflops = json.value("bf16_tensor_tflops", 0.0);
    facts.probe_errors = json.value("probe_errors", std::vector<std::string>{});
    facts.measured_at = json.value("measured_at", "");
    if (facts.uuid.empty()) return MakeError(ErrorKind::kParse, "GPU facts: no uuid");
    return facts;
  } catch (const Json::exception& error) {
    return MakeError(ErrorKind::kParse, "GPU facts: {}", error.what());
  }
}

Result<GpuFacts> GpuFacts::FromWorkerJson(const Json& json) {
  if (!json.is_object()) return MakeError(ErrorKind::kParse, "ksmith-cuda-worker: not a JSON object");
  const Json& describe = json.contains("describe") ? json["describe"] : json;
  for (const Json* part : {&json, &describe}) {
    if (part->is_object() && part->contains("error")) {
      const Json& error = (*part)["error"];
      return NoGpu(error.is_string() ? error.get<std::string>() : error.dump());
    }
  }
  auto facts = FromJson(describe);
  if (!facts.ok()) return facts.error();
  facts->copy_bandwidth_gbps = 0;  // measurements come from "peaks" only
  facts->fp32_tflops = 0;
  facts->bf16_tensor_tflops = 0;
  const Json peaks = json.value("peaks", Json::object());
  if (!peaks.is_object()) return MakeError(ErrorKind::kParse, "ksmith-cuda-worker: \"peaks\" is not an object");
  try {
    auto best = [&](const char* measurement, const char* key) {
      const Json part = peaks.value(measurement, Json::object());
      return part.is_object() ? part.value(key, 0.0) : 0.0;
    };
    facts->copy_bandwidth_gbps = best("copy", "best_gbps");
    facts->fp32_tflops = best("fp32_fma", "best_tflops");
    facts->bf16_tensor_tflops = best("bf16_gemm", "best_tflops");
    facts->probe_errors = peaks.value("errors", std::vector<std::string>{});
  } catch (const Json::exception& error) {
    return MakeError(ErrorKind::kParse, "ksmith-cuda-worker peaks: {}", error.what());
  }
  return facts;
}

Result<GpuFacts> LoadGpuFacts(const fs::path& worker_executable, const fs::path& cache_dir,
                              bool refresh) {
  std::error_code error;
  if (!fs::exists(worker_executable, error)) {
    return MakeError(ErrorKind::kNotFound,
                     "ksmith-cuda-worker was not built: nvcc not found at configure time "
                     "(looked for {}; KSMITH_CUDA_WORKER names another)",
                     worker_executable.string());
  }
  auto described = RunWorker(worker_executable, "--describe", kDescribeTimeout);
  if (!described.ok()) return described.error();
  auto facts = GpuFacts::FromWorkerJson(*described);
  if (!facts.ok()) return facts.error();

  const fs::path cache_path = cache_dir / ("gpu-" + FileNameSafe(facts->uuid) + ".json");
  if (!refresh) {
    if (auto cached_text = ReadFile(cache_path); cached_text.ok()) {
      // Parse failures fall through to a new measurement: a corrupt cache is not an error.
      const Json json = Json::parse(*cached_text, nullptr, false);
      auto cached = GpuFacts::FromJson(json.is_discarded() ? Json() : json);
      if (cached.ok() && cached->uuid == facts->uuid && cached->measured()) {
        CopyMeasurements(*cached, *facts);
        facts->from_cache = true;
        return facts;
      }
    }
  }

  auto probed = RunWorker(worker_executable, "--probe", kProbeTimeout);
  if (!probed.ok()) return probed.error();
  auto measured = GpuFacts::FromWorkerJson(*probed);
  if (!measured.ok()) return measured.error();
  CopyMeasurements(*measured, *facts);
  facts->measured_at = CurrentTime();
  // A partial measurement is returned (its errors say what is missing) but never cached, so
  // that the next run tries again.
  if (facts->measured()) (void)WriteFileAtomic(cache_path, facts->ToJson().dump(2) + "\n");
  return facts;
}

fs::path DefaultCudaWorkerExecutable() { return HelperExecutable("KSMITH_CUDA_WORKER", "ksmith-cuda-worker"); }

}  // namespace ksmith
