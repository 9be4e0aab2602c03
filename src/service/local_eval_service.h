// The evaluation service on this machine: a compile pool sized to the cores, and verification
// workers per device, each running the pipeline driver (eval/pipeline.h). Builds start when a
// job is queued, so compiling overlaps verifying. The devices are configuration: a list of
// {backend, device, workers}.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "eval/backend_registry.h"
#include "eval/compile_pool.h"
#include "eval/gpu_gate.h"
#include "eval/pipeline.h"
#include "service/eval_service.h"

namespace ksmith {

struct DeviceConfig {
  std::string backend;  // a name in the registry
  std::string device;   // which device of that backend ("0"); empty: its default
  /// Evaluations at once on this device. They share it for correctness and take turns to time
  /// (eval/gpu_gate.h): on a GPU the device; on the cpu the cores, which builds share too.
  size_t workers = 1;
};

struct LocalServiceConfig {
  std::vector<DeviceConfig> devices;
  size_t compile_threads = 0;    // 0: one per core; fewer build at once where memory is short (CompilePool)
  size_t queue_capacity = 64;    // jobs waiting for a worker before Submit waits
  BackendConfig backend_config;  // the cache folder and the like; `device` comes from each DeviceConfig
  const BackendRegistry* registry = nullptr;  // null: BackendRegistry::Global()
};

class LocalEvalService : public EvalService {
 public:
  /// Creates every device's backend and starts the workers. Fails, saying which device, when a
  /// backend cannot run here (no GPU, no compiler).
  static Result<std::unique_ptr<LocalEvalService>> Start(LocalServiceConfig config);
  ~LocalEvalService() override;

  Result<std::string> Submit(EvalJob job, std::chrono::milliseconds wait = kWaitForever) override;
  Status CanRun(const Task& task, const std::string& backend) override;
  std::optional<JobVerdict> NextVerdict(std::chrono::milliseconds timeout) override;
  Result<nlohmann::json> DeviceFacts(const std::string& backend) override;
  ServiceStats Stats() override;
  void Shutdown() override;

  /// Jobs waiting for a worker now (not those running).
  size_t queued() const;

 private:
  struct Device {
    DeviceConfig config;
    std::unique_ptr<EvalBackend> backend;
    std::unique_ptr<Pipeline> pipeline;
    GpuGate gate;
  };
  struct QueuedJob {
    EvalJob job;
    std::future<Result<BuildOutput>> build;  // started when queued
  };

  explicit LocalEvalService(LocalServiceConfig config);
  void Work(Device& device);
  /// The next queued job `device` can run, or none once the service stops. Called locked.
  std::optional<QueuedJob> TakeJob(const Device& device, std::unique_lock<std::mutex>& lock);
  void Publish(JobVerdict verdict);
  Device* FindDevice(const std::string& backend);
  /// The device that runs `backend`, when it can run `task`; the error says why not.
  Result<Device*> DeviceFor(const Task& task, const std::string& backend);

  LocalServiceConfig config_;
  std::unique_ptr<CompilePool> pool_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::thread> workers_;
  std::atomic<bool> cancel_{false};

  mutable std::mutex mutex_;
  std::condition_variable job_ready_;       // a job was queued, or the service stops
  std::condition_variable room_;            // a queued job was taken
  std::condition_variable verdict_ready_;
  std::deque<QueuedJob> queue_;             // guarded by mutex_
  std::deque<JobVerdict> verdicts_;         // guarded by mutex_
  std::set<std::string> known_ids_;         // guarded by mutex_: every id accepted so far
  size_t next_id_ = 1;                      // guarded by mutex_
  bool stopping_ = false;                   // guarded by mutex_
};

}  // namespace ksmith
