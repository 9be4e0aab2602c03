// `ksmith worker --broker redis://...`: judges jobs from Redis Streams on this host's devices
// (service/redis/redis_worker.h; docs/serve.md: one per GPU host, under systemd or Slurm).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/device_flags.h"
#include "cli/setting_ranges.h"
#include "eval/backend_registry.h"
#include "formats/format_registry.h"
#include "service/redis/redis_worker.h"
#include "service/service_setup.h"
#include "task/registry.h"

namespace ksmith {
namespace {

std::atomic<bool> g_worker_stop{false};
extern "C" void RequestWorkerStop(int) { g_worker_stop.store(true); }

struct WorkerFlags {
  std::string broker;
  DeviceFlags device;
  std::string name;
  double reclaim_after_s = 60;
  double drain_s = 60;
  std::optional<double> build_memory_gib, build_cpu_s;
};

int RunWorker(const WorkerFlags& flags) {
  auto address = RedisAddress::Parse(flags.broker);
  if (!address.ok()) {
    PrintError(fmt::format("--broker: {}", address.error().message));
    return kExitUsage;
  }
  auto service = StartLocalService({.backend = flags.device.backend,
                                    .arch = flags.device.arch,
                                    .workers = static_cast<size_t>(std::max(0, flags.device.jobs)),
                                    .devices = flags.device.devices,
                                    .build_limits = BuildLimitsFrom(flags.build_memory_gib, flags.build_cpu_s),
                                    .spare_workers = true});
  if (!service.ok()) {
    PrintError(service.error().message);
    return service.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  RedisWorkerConfig config;
  config.address = *address;
  config.consumer = flags.name.empty() ? fmt::format("{}-{}", host, ::getpid()) : flags.name;
  config.reclaim_after = std::chrono::milliseconds(static_cast<int64_t>(flags.reclaim_after_s * 1000));
  config.drain = std::chrono::seconds(static_cast<int64_t>(flags.drain_s));
  const ServiceStats stats = (*service)->Stats();
  size_t workers = 0;
  for (const auto& [device, count] : stats.workers_by_device) workers += count;
  // Builds of the next jobs overlap the verification of these (on a GPU; the cpu builds in turn).
  config.max_in_flight = std::max<size_t>(1, workers * 2);
  nlohmann::json by_device = stats.workers_by_device;
  config.description = {{"host", host}, {"pid", ::getpid()}, {"backend", flags.device.backend}, {"workers_by_device", by_device}};
  if (auto facts = (*service)->DeviceFacts(flags.device.backend); facts.ok()) config.description["facts"][flags.device.backend] = *facts;
  struct sigaction action {};
  action.sa_handler = RequestWorkerStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // Redis closing a socket mid-write (a restart) is an error to retry, not the end of the worker.
  ::signal(SIGPIPE, SIG_IGN);
  TaskRegistry registry = TaskRegistry::Default();
  FormatLookup formats = [](std::string_view name) -> const CandidateFormat* {
    auto found = FormatRegistry::Global().Find(name);
    return found.ok() ? &(*found)->format() : nullptr;
  };
  if (auto ping = RedisConnection(*address).Command({"PING"}); !ping.ok()) {
    PrintError(fmt::format("--broker {}: {} (is redis-server running there?)", flags.broker, ping.error().message));
    return kExitInfra;
  }
  RedisWorker worker(config, **service, registry, formats);
  std::fprintf(stderr, "ksmith worker %s: taking jobs from %s (backend %s, %zu at once)\n", config.consumer.c_str(),
               address->ToString().c_str(), flags.device.backend.c_str(), config.max_in_flight);
  const Status ran = worker.Run(g_worker_stop);
  // The service's threads call the worker's callbacks until they are joined: the service goes first.
  service->reset();
  if (!ran.ok()) {
    PrintError(fmt::format("--broker {}: {} (is redis-server running there?)", flags.broker, ran.error().message));
    return kExitInfra;
  }
  std::fprintf(stderr, "ksmith worker %s: stopped after %zu verdicts\n", config.consumer.c_str(), worker.completed());
  return kExitOk;
}

}  // namespace

CommandHandler AddWorkerCommand(CLI::App& app) {
  auto flags = std::make_shared<WorkerFlags>();
  app.add_option("--broker", flags->broker, "The Redis that `ksmith serve --broker` queues on: redis://HOST[:PORT][/PREFIX]")
      ->required();
  AddDeviceOptions(app, flags->device, "The backend this worker runs");
  app.add_option("--name", flags->name, "This worker's name in the consumer group (default: HOST-PID)");
  app.add_option("--reclaim-after-s", flags->reclaim_after_s,
                 "Take over another worker's job once that worker has been silent this long (it refreshes its jobs "
                 "every 5 s while alive)")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  app.add_option("--drain-s", flags->drain_s, "On SIGTERM: seconds jobs in flight may take; the rest go back in the queue")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  return [flags] { return RunWorker(*flags); };
}

}  // namespace ksmith
