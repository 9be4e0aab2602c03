#include "service/local_eval_service.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ksmith {
namespace {

// The verdict of a job the service ended without evaluating it, or whose evaluation escaped.
Verdict UnrunVerdict(const EvalJob& job, std::string reason) {
  Verdict verdict;
  verdict.task = job.task ? job.task->name : "";
  verdict.backend = job.backend;
  verdict.candidate = job.candidate.path;
  verdict.status = VerdictStatus::kInfraError;
  verdict.reason = std::move(reason);
  return verdict;
}

constexpr const char* kCancelledBeforeStart =
    "the evaluation was cancelled before it started (the service shut down)";

}  // namespace

LocalEvalService::LocalEvalService(LocalServiceConfig config) : config_(std::move(config)) {}

Result<std::unique_ptr<LocalEvalService>> LocalEvalService::Start(LocalServiceConfig config) {
  if (config.devices.empty()) return MakeError(ErrorKind::kInvalidArgument, "the evaluation service needs at least one device");
  if (config.queue_capacity == 0) return MakeError(ErrorKind::kInvalidArgument, "the queue capacity must be at least 1");
  const BackendRegistry& registry = config.registry ? *config.registry : BackendRegistry::Global();
  std::unique_ptr<LocalEvalService> service(new LocalEvalService(config));
  // No more builds at once than the machine's memory holds at the build's memory limit each.
  service->pool_ = std::make_unique<CompilePool>(
      config.compile_threads, BuildMemorySlots(config.backend_config.build_limits, PhysicalMemoryBytes()));
  for (const auto& device_config : config.devices) {
    BackendConfig backend_config = config.backend_config;
    backend_config.device = device_config.device;
    auto backend = registry.Create(device_config.backend, backend_config);
    if (!backend.ok()) return backend.error();
    auto device = std::make_unique<Device>();
    device->config = device_config;
    device->config.workers = std::max<size_t>(1, device_config.workers);
    device->backend = std::move(backend.value());
    device->pipeline = std::make_unique<Pipeline>(*device->backend, *service->pool_);
    service->devices_.push_back(std::move(device));
  }
  for (auto& device : service->devices_) {
    for (size_t i = 0; i < device->config.workers; ++i) {
      service->workers_.emplace_back([raw = service.get(), &device = *device] { raw->Work(device); });
    }
  }
  return service;
}

LocalEvalService::~LocalEvalService() {
  Shutdown();
  for (auto& worker : workers_) worker.join();
  // Builds still queued call into the devices' backends: they finish before the devices go.
  pool_.reset();
}

LocalEvalService::Device* LocalEvalService::FindDevice(const std::string& backend) {
  for (auto& device : devices_) {
    if (device->config.backend == backend) return device.get();
  }
  return nullptr;
}

Result<std::string> LocalEvalService::Submit(EvalJob job, std::chrono::milliseconds wait) {
  if (!job.task) return MakeError(ErrorKind::kInvalidArgument, "job '{}' has no task", job.id);
  auto device = DeviceFor(*job.task, job.backend);
  if (!device.ok()) return device.error();
  std::unique_lock lock(mutex_);
  if (job.id.empty()) {
    do {
      job.id = fmt::format("job-{}", next_id_++);
    } while (known_ids_.count(job.id) > 0);
  } else if (known_ids_.count(job.id) > 0) {
    return MakeError(ErrorKind::kInvalidArgument, "job id '{}' was submitted already", job.id);
  }
  const auto has_room = [this] { return stopping_ || queue_.size() < config_.queue_capacity; };
  if (wait == kWaitForever) {
    room_.wait(lock, has_room);
  } else if (!room_.wait_for(lock, wait, has_room)) {
    return MakeError(ErrorKind::kTimeout, "the evaluation queue is full ({} jobs wait); job '{}' was not queued",
                     queue_.size(), job.id);
  }
  if (stopping_) return MakeError(ErrorKind::kUnsupported, "the evaluation service is shutting down; job '{}' was not queued", job.id);
  known_ids_.insert(job.id);
  QueuedJob queued;
  // The build starts now and overlaps earlier jobs' verification, unless that would disturb
  // their timing (the build runs when the job starts instead).
  if (!(*device)->backend->traits().times_on_host_cores) {
    queued.build = (*device)->pipeline->StartBuild(*job.task, job.candidate);
  }
  queued.job = std::move(job);
  const std::string id = queued.job.id;
  queue_.push_back(std::move(queued));
  lock.unlock();
  job_ready_.notify_all();
  return id;
}

Result<LocalEvalService::Device*> LocalEvalService::DeviceFor(const Task& task, const std::string& backend) {
  Device* device = FindDevice(backend);
  if (device == nullptr) {
    std::vector<std::string> names;
    for (const auto& known : devices_) names.push_back(known->config.backend);
    return MakeError(ErrorKind::kInvalidArgument, "no device of this service runs backend '{}' (it has: {})", backend,
                     fmt::join(names, ", "));
  }
  if (auto supported = device->backend->Supports(device->backend->View(task)); !supported.ok()) {
    return supported.error();
  }
  return device;
}

Status LocalEvalService::CanRun(const Task& task, const std::string& backend) {
  auto device = DeviceFor(task, backend);
  if (!device.ok()) return device.error();
  return {};
}

std::optional<LocalEvalService::QueuedJob> LocalEvalService::TakeJob(const Device& device,
                                                                     std::unique_lock<std::mutex>& lock) {
  while (true) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->job.backend != device.config.backend) continue;
      QueuedJob job = std::move(*it);
      queue_.erase(it);
      room_.notify_one();
      return job;
    }
    if (stopping_) return std::nullopt;
    job_ready_.wait(lock);
  }
}

void LocalEvalService::Work(Device& device) {
  while (true) {
    std::optional<QueuedJob> queued;
    {
      std::unique_lock lock(mutex_);
      queued = TakeJob(device, lock);
    }
    if (!queued) return;
    EvalJob& job = queued->job;
    EvalOptions options = job.options;
    options.cancel = &cancel_;
    options.gpu_gate = device.config.workers > 1 ? &device.gate : nullptr;
    JobVerdict result{job.id, {}};
    if (cancel_.load()) {
      result.verdict = UnrunVerdict(job, kCancelledBeforeStart);
    } else {
      // A worker thread must never die of a job: whatever escapes becomes the job's verdict.
      try {
        if (job.on_start) job.on_start();
        result.verdict = device.pipeline->Evaluate(*job.task, job.candidate, options, std::move(queued->build));
        if (!device.config.device.empty()) result.verdict.provenance["device"] = device.config.device;
      } catch (const std::exception& error) {
        result.verdict = UnrunVerdict(job, fmt::format("internal error in the evaluation service: {}", error.what()));
      }
    }
    Publish(std::move(result));
  }
}

void LocalEvalService::Publish(JobVerdict verdict) {
  {
    std::lock_guard lock(mutex_);
    verdicts_.push_back(std::move(verdict));
  }
  verdict_ready_.notify_one();
}

std::optional<JobVerdict> LocalEvalService::NextVerdict(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!verdict_ready_.wait_for(lock, timeout, [this] { return !verdicts_.empty(); })) return std::nullopt;
  JobVerdict verdict = std::move(verdicts_.front());
  verdicts_.pop_front();
  return verdict;
}

Result<nlohmann::json> LocalEvalService::DeviceFacts(const std::string& backend) {
  Device* device = FindDevice(backend);
  if (device == nullptr) return MakeError(ErrorKind::kInvalidArgument, "no device of this service runs backend '{}'", backend);
  return device->backend->DeviceFacts();
}

void LocalEvalService::Shutdown() {
  std::deque<QueuedJob> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    cancel_ = true;
    abandoned.swap(queue_);
  }
  job_ready_.notify_all();
  room_.notify_all();
  for (auto& queued : abandoned) Publish({queued.job.id, UnrunVerdict(queued.job, kCancelledBeforeStart)});
}

ServiceStats LocalEvalService::Stats() {
  ServiceStats stats;
  stats.queued = queued();
  stats.builds_running = pool_->running();
  stats.builds_waiting = pool_->waiting();
  for (const auto& device : devices_) {
    const std::string name = device->config.device.empty() ? device->config.backend
                                                            : device->config.backend + ":" + device->config.device;
    stats.workers_by_device[name] += device->config.workers;
  }
  return stats;
}

size_t LocalEvalService::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace ksmith
