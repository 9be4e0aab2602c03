#include "service/service_setup.h"

#include <algorithm>
#include <cstdio>

#include "core/files.h"

namespace ksmith {

size_t DefaultVerificationWorkers(const BackendTraits& traits) {
  return std::max<size_t>(1, traits.default_verifications_per_device);
}

BuildLimits BuildLimitsFrom(std::optional<double> memory_gib, std::optional<double> cpu_s) {
  BuildLimits limits;
  if (memory_gib && *memory_gib > 0) limits.memory_bytes = static_cast<uint64_t>(*memory_gib * double(uint64_t{1} << 30));
  if (cpu_s && *cpu_s > 0) limits.cpu_s = *cpu_s;
  return limits;
}

Result<std::unique_ptr<LocalEvalService>> StartLocalService(const LocalServiceRequest& request) {
  auto traits = BackendRegistry::Global().Traits(request.backend);
  if (!traits.ok()) return traits.error();
  if (!traits->selects_devices && !request.devices.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--devices is for GPU backends: the {} backend has one device, this machine", request.backend);
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) return cache.error();
  LocalServiceConfig config;
  config.backend_config.cache_directory = *cache;
  config.backend_config.arch = request.arch;
  config.backend_config.build_limits = request.build_limits;
  config.backend_config.spare_workers = request.spare_workers;
  config.backend_config.report_error = [](const std::string& line) {
    std::fprintf(stderr, "ksmith: error: %s\n", line.c_str());
  };
  if (request.queue_capacity > 0) config.queue_capacity = request.queue_capacity;
  const size_t workers = request.workers > 0 ? request.workers : DefaultVerificationWorkers(*traits);
  for (const auto& device : request.devices.empty() ? std::vector<std::string>{""} : request.devices) {
    config.devices.push_back({request.backend, device, workers});
  }
  return LocalEvalService::Start(std::move(config));
}

}  // namespace ksmith
