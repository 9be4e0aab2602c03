// `ksmith serve`: the evaluation and reward service over HTTP (docs/serve.md).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/device_flags.h"
#include "cli/optimize_settings.h"
#include "cli/setting_ranges.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "server/http_server.h"
#include "server/serve_core.h"
#include "service/broker_registry.h"
#include "store/run_store.h"

namespace ksmith {
namespace {

std::atomic<bool> g_serve_stop{false};
extern "C" void RequestServeStop(int) { g_serve_stop.store(true); }

struct ServeFlags {
  std::string listen = "127.0.0.1:8080";
  std::string broker = "local";
  DeviceFlags device;
  bool no_auth = false;
  std::string port_file;
  std::string db;
  std::string config;
  std::string kernelgym_backend;
  double max_body_mib = 16;
  size_t max_candidates = 256;
  size_t max_unfinished_per_client = 2048;
  double drain_s = 60;
  int read_timeout_s = 10;
  std::optional<double> build_memory_gib, build_cpu_s;
};

Result<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return MakeError(ErrorKind::kInvalidArgument, "--listen '{}': write HOST:PORT, e.g. 127.0.0.1:8080 (port 0: any free port)", listen);
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char* end = nullptr;
  const long port = std::strtol(listen.c_str() + colon + 1, &end, 10);
  if (end == listen.c_str() + colon + 1 || *end != '\0' || port < 0 || port > 65535) {
    return MakeError(ErrorKind::kInvalidArgument, "--listen '{}': the port must be a number from 0 to 65535", listen);
  }
  return std::make_pair(host, static_cast<int>(port));
}

int RunServe(const ServeFlags& flags) {
  auto listen = ParseListen(flags.listen);
  if (!listen.ok()) {
    PrintError(listen.error().message);
    return kExitUsage;
  }
  const char* token_env = std::getenv("KSMITH_SERVE_TOKEN");
  const std::string token = token_env != nullptr ? token_env : "";
  const bool loopback = IsLoopbackHost(listen->first);
  if (token.empty() && !(loopback && flags.no_auth)) {
    PrintError(loopback ? "no KSMITH_SERVE_TOKEN in the environment: set one (clients send 'Authorization: Bearer "
                          "<token>'), or pass --no-auth to serve this machine's loopback without one"
                        : fmt::format("--listen {} is reachable from other machines: set KSMITH_SERVE_TOKEN (--no-auth "
                                      "is for loopback only)", flags.listen));
    return kExitUsage;
  }
  OptimizeSettings settings;
  RewardRule reward;
  if (const auto config = ConfigFilePath(flags.config); !config.empty()) {
    if (Status applied = ApplyConfigFile(config, settings); !applied.ok()) {
      PrintError(applied.error().message);
      return kExitUsage;
    }
    auto rule = RewardRule::FromConfigFile(config);
    if (!rule.ok()) {
      PrintError(rule.error().message);
      return kExitUsage;
    }
    reward = *rule;
  }
  auto traits = BackendRegistry::Global().Traits(flags.device.backend);
  if (!traits.ok()) {
    PrintError(traits.error().message);
    return kExitUsage;
  }
  auto store_path = StorePathFromFlag(flags.db);
  if (!store_path.ok()) {
    PrintError(store_path.error().message);
    return kExitUsage;
  }
  auto store = RunStore::Open(*store_path);
  if (!store.ok()) {
    PrintError(store.error().message);
    return StoreExitCode(store.error());
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) {
    PrintError(cache.error().message);
    return kExitInfra;
  }
  BrokerRequest broker;
  broker.url = flags.broker;
  broker.local = {flags.device.backend, flags.device.arch.empty() ? settings.arch : flags.device.arch, static_cast<size_t>(std::max(0, flags.device.jobs)),
                  flags.device.devices, BuildLimitsFrom(flags.build_memory_gib ? flags.build_memory_gib : std::optional(settings.build_memory_gib),
                                                 flags.build_cpu_s ? flags.build_cpu_s : std::optional(settings.build_cpu_s))};
  ServeConfig config;
  config.limits.candidates_per_request = flags.max_candidates;
  config.queued_per_client = flags.max_unfinished_per_client;
  broker.local.queue_capacity = config.max_queued;
  auto service = StartBroker(broker);
  if (!service.ok()) {
    PrintError(service.error().message);
    return service.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  config.backends = {flags.device.backend};
  config.base_options.seeds = settings.seeds;
  config.base_options.timing_budget_s = settings.timing_budget_s;
  config.base_options.call_timeout = std::chrono::milliseconds(settings.eval_timeout_ms);
  config.reward = reward;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  ServedTasks tasks(TaskRegistry::Default(), *cache, self);
  ServedRuns runs(store->get());
  auto core = std::make_unique<ServeCore>(**service, tasks, runs, config);
  HttpServerConfig http;
  http.host = listen->first;
  http.port = listen->second;
  http.token = token;
  http.read_timeout_s = flags.read_timeout_s;
  http.body_bytes = static_cast<size_t>(flags.max_body_mib * double(size_t{1} << 20));
  http.kernelgym_backend = flags.kernelgym_backend.empty() ? flags.device.backend : flags.kernelgym_backend;
  struct sigaction action {};
  action.sa_handler = RequestServeStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A peer that closes its socket mid-write (a client, Redis restarting) is an error, not the end.
  ::signal(SIGPIPE, SIG_IGN);
  auto server = HttpServer::Start(http, *core);
  if (!server.ok()) {
    PrintError(server.error().message);
    return kExitUsage;
  }
  const int port = (*server)->port();
  if (!flags.port_file.empty()) {
    if (Status written = WriteFileAtomic(flags.port_file, std::to_string(port) + "\n"); !written.ok()) {
      PrintError(written.error().message);
      return kExitInfra;
    }
  }
  std::fprintf(stderr, "ksmith serve: listening on http://%s:%d (backend %s, broker %s, %s; store %s)\n",
               listen->first.c_str(), port, flags.device.backend.c_str(), flags.broker.c_str(),
               token.empty() ? "no authentication" : "bearer token required", store_path->c_str());
  while (!g_serve_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Stop taking jobs, let those accepted finish (their clients may be waiting), then stop.
  core->StopAccepting();
  const JobCounts counts = core->table().Counts();
  if (counts.queued + counts.running > 0) {
    std::fprintf(stderr, "ksmith serve: stopping; %zu jobs unfinished, waiting up to %.0f s for them\n",
                 counts.queued + counts.running, flags.drain_s);
  }
  const bool drained = core->Drain(std::chrono::steady_clock::now() +
                                   std::chrono::milliseconds(static_cast<int64_t>(flags.drain_s * 1000)));
  (*service)->Shutdown();  // what is left gets a verdict saying so (on redis: the job stays queued)
  // The cancelled jobs' verdicts reach the table and the store before the server goes.
  core->Drain(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  (*server)->Stop();
  // In this order: the service's threads call into the core's table until they are joined.
  core->StopReading();
  service->reset();
  core.reset();
  runs.FinishAll(drained ? "the server stopped" : "the server stopped before every job finished");
  std::fprintf(stderr, "ksmith serve: stopped%s\n", drained ? "" : " (unfinished jobs were cancelled)");
  return kExitOk;
}

}  // namespace

CommandHandler AddServeCommand(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  app.add_option("--listen", flags->listen, "HOST:PORT to serve on (port 0: any free port; see --port-file)")
      ->capture_default_str();
  app.add_option("--broker", flags->broker,
                 "Where jobs run: local (this machine's devices) or redis://HOST[:PORT][/PREFIX] (`ksmith worker` "
                 "processes on any host)")
      ->capture_default_str();
  AddDeviceOptions(app, flags->device, "The backend jobs run on (a local broker's devices; a redis broker's workers)");
  app.add_flag("--no-auth", flags->no_auth, "Serve without a bearer token (only on a loopback address)");
  app.add_option("--port-file", flags->port_file, "Write the port served on to this file once listening");
  app.add_option("--db", flags->db, "Run store to record every job and verdict in (default: $KSMITH_DB or the cache's runs.db)");
  app.add_option("--config", flags->config, "Settings file: [eval] defaults for every job, [reward] the reward rule "
                                            "(default ./ksmith.toml when present)")
      ->check(CLI::ExistingFile);
  app.add_option("--kernelgym-backend", flags->kernelgym_backend,
                 "The backend KernelGYM's /evaluate requests run on (their 'cuda' and 'triton'); default: --backend");
  app.add_option("--max-body-mib", flags->max_body_mib, "Largest request body [MiB]")->check(CLI::Range(0.01, 1024.0))->capture_default_str();
  app.add_option("--max-candidates", flags->max_candidates, "Candidates in one request")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--max-unfinished-per-client", flags->max_unfinished_per_client,
                 "Unfinished jobs one client (X-Ksmith-Client header) may have")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--drain-s", flags->drain_s, "On SIGTERM: seconds unfinished jobs may take before they are cancelled")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--read-timeout-s", flags->read_timeout_s,
                 "A client that sends nothing for this long is disconnected (a slow or stuck client holds no thread)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  return [flags] { return RunServe(*flags); };
}

}  // namespace ksmith
