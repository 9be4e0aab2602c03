#include "service/redis/redis_eval_service.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/backend_registry.h"
#include "core/json_text.h"
#include "service/redis/job_codec.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

// A stream entry's fields as a map: [id, [field, value, field, value...]].
std::map<std::string, std::string> Fields(const RedisValue& entry) {
  std::map<std::string, std::string> fields;
  const RedisValue& list = entry.at(1);
  for (size_t i = 0; i + 1 < list.elements.size(); i += 2) fields[list.elements[i].text] = list.elements[i + 1].text;
  return fields;
}

Verdict StoppedVerdict(const std::string& task, const std::string& backend, const std::string& candidate,
                       std::string reason) {
  Verdict verdict;
  verdict.status = VerdictStatus::kInfraError;
  verdict.task = task;
  verdict.backend = backend;
  verdict.candidate = candidate;
  verdict.reason = std::move(reason);
  return verdict;
}

}  // namespace

RedisEvalService::RedisEvalService(const RedisAddress& address, std::vector<std::string> backends)
    : address_(address), keys_(address), backends_(std::move(backends)), commands_(address), reader_connection_(address) {}

Result<std::unique_ptr<RedisEvalService>> RedisEvalService::Connect(const RedisAddress& address,
                                                                    std::vector<std::string> backends) {
  std::unique_ptr<RedisEvalService> service(new RedisEvalService(address, std::move(backends)));
  // From the stream's start: a group made after jobs were queued still hands them out.
  auto group = service->commands_.Command({"XGROUP", "CREATE", service->keys_.jobs, service->keys_.group, "0", "MKSTREAM"});
  if (!group.ok() && group.error().message.find("BUSYGROUP") == std::string::npos) return group.error();
  // The epoch marks this Redis's data: kept by every server that shares it, lost with the data.
  std::random_device device;
  const std::string token = fmt::format("{:08x}{:08x}", device(), device());
  (void)service->commands_.Command({"SET", service->keys_.epoch, token, "NX"});
  auto epoch = service->commands_.Command({"GET", service->keys_.epoch});
  if (!epoch.ok()) return epoch.error();
  service->epoch_ = epoch->text;
  // Verdicts from here on: what came before belongs to jobs this service never queued.
  for (auto [stream, last] : {std::pair{service->keys_.verdicts, &service->last_verdict_id_},
                              std::pair{service->keys_.events, &service->last_event_id_}}) {
    auto newest = service->commands_.Command({"XREVRANGE", stream, "+", "-", "COUNT", "1"});
    if (!newest.ok()) return newest.error();
    if (!newest->elements.empty()) *last = newest->at(0).at(0).text;
  }
  service->reader_ = std::thread([raw = service.get()] { raw->Read(); });
  return service;
}

RedisEvalService::~RedisEvalService() {
  Shutdown();
  if (reader_.joinable()) reader_.join();
}

Status RedisEvalService::CanRun(const Task&, const std::string& backend) {
  if (std::find(backends_.begin(), backends_.end(), backend) == backends_.end()) {
    return MakeError(ErrorKind::kInvalidArgument, "this service's workers run {}, not '{}'", fmt::join(backends_, ", "),
                     backend);
  }
  return {};
}

Result<std::string> RedisEvalService::Submit(EvalJob job, std::chrono::milliseconds wait) {
  if (!job.task) return MakeError(ErrorKind::kInvalidArgument, "job '{}' has no task", job.id);
  if (Status runnable = CanRun(*job.task, job.backend); !runnable.ok()) return runnable.error();
  if (job.id.empty()) return MakeError(ErrorKind::kInvalidArgument, "a job for Redis needs its id (unique across servers)");
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return MakeError(ErrorKind::kUnsupported, "the evaluation service is shutting down; job '{}' was not queued", job.id);
    if (pending_.count(job.id) > 0) return MakeError(ErrorKind::kInvalidArgument, "job id '{}' was submitted already", job.id);
    // Before the job is in the stream: its first event may come at once.
    pending_[job.id] = {job.on_start, job.options.progress, job.task->name, job.backend, job.candidate.path, ""};
  }
  const std::string encoded = JsonText(EncodeJob(job));
  {
    std::lock_guard lock(mutex_);
    if (auto found = pending_.find(job.id); found != pending_.end()) found->second.encoded = encoded;
  }
  const auto give_up = std::chrono::steady_clock::now() +
                       (wait == kWaitForever ? std::chrono::milliseconds(30'000) : wait);
  while (true) {
    auto added = commands_.Command({"XADD", keys_.jobs, "*", "job", encoded});
    if (added.ok()) return job.id;
    if (std::chrono::steady_clock::now() >= give_up || stopping_) {
      std::lock_guard lock(mutex_);
      pending_.erase(job.id);
      return MakeError(ErrorKind::kTimeout, "job '{}' was not queued: {}", job.id, added.error().message);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

void RedisEvalService::Deliver(const std::string& job_id, const std::string& verdict_text) {
  Pending pending;
  {
    std::lock_guard lock(mutex_);
    const auto found = pending_.find(job_id);
    if (found == pending_.end()) return;  // another server's job, or one delivered already
    pending = std::move(found->second);
    pending_.erase(found);
  }
  const json parsed = json::parse(verdict_text, nullptr, false);
  auto verdict = Verdict::FromJson(parsed);
  JobVerdict result{job_id, verdict.ok() ? std::move(verdict.value())
                                         : StoppedVerdict(pending.task, pending.backend, pending.candidate,
                                                          "a worker's verdict could not be read: " + verdict.error().message)};
  {
    std::lock_guard lock(mutex_);
    verdicts_.push_back(std::move(result));
  }
  verdict_ready_.notify_one();
}

void RedisEvalService::Read() {
  auto last_sweep = std::chrono::steady_clock::now();
  while (!stopping_) {
    auto reply = reader_connection_.Command({"XREAD", "COUNT", "500", "BLOCK", "1000", "STREAMS", keys_.verdicts,
                                             keys_.events, last_verdict_id_, last_event_id_},
                                            std::chrono::seconds(5));
    if (!reply.ok()) {
      // Redis is down or restarting: the streams keep what was added meanwhile.
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    for (const RedisValue& stream : reply->elements) {
      const std::string& name = stream.at(0).text;
      for (const RedisValue& entry : stream.at(1).elements) {
        auto fields = Fields(entry);
        if (name == keys_.verdicts) {
          last_verdict_id_ = entry.at(0).text;
          Deliver(fields["job"], fields["verdict"]);
          continue;
        }
        last_event_id_ = entry.at(0).text;
        std::function<void()> on_start;
        std::function<void(const std::string&)> progress;
        {
          std::lock_guard lock(mutex_);
          const auto found = pending_.find(fields["job"]);
          if (found == pending_.end()) continue;
          on_start = found->second.on_start;
          progress = found->second.progress;
        }
        if (fields["kind"] == "started" && on_start) on_start();
        if (fields["kind"] == "progress" && progress) progress(fields["line"]);
      }
    }
    if (std::chrono::steady_clock::now() - last_sweep > std::chrono::seconds(10)) {
      SweepResults();
      last_sweep = std::chrono::steady_clock::now();
    }
  }
}

void RedisEvalService::SweepResults() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, pending] : pending_) ids.push_back(id);
  }
  if (ids.empty()) return;
  // The epoch gone: Redis came back without its data (a worker may have made the group again
  // since). The jobs it lost are queued again; one that ran meanwhile is only acknowledged by the
  // worker that takes it, its result being there.
  auto epoch = reader_connection_.Command({"GET", keys_.epoch});
  if (epoch.ok() && epoch->text != epoch_) {
    (void)reader_connection_.Command({"SET", keys_.epoch, epoch_});
    (void)reader_connection_.Command({"XGROUP", "CREATE", keys_.jobs, keys_.group, "0", "MKSTREAM"});
    std::vector<std::pair<std::string, std::string>> again;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [id, pending] : pending_) again.emplace_back(id, pending.encoded);
    }
    std::fprintf(stderr, "ksmith serve: Redis at %s lost its jobs stream; queueing %zu unfinished jobs again\n",
                 address_.ToString().c_str(), again.size());
    for (const auto& [id, encoded] : again) {
      if (!encoded.empty()) (void)reader_connection_.Command({"XADD", keys_.jobs, "*", "job", encoded});
    }
  }
  for (size_t start = 0; start < ids.size(); start += 500) {
    std::vector<std::string> command = {"MGET"};
    const size_t end = std::min(ids.size(), start + 500);
    for (size_t i = start; i < end; ++i) command.push_back(keys_.result_prefix + ids[i]);
    auto reply = reader_connection_.Command(command);
    if (!reply.ok()) return;
    for (size_t i = start; i < end; ++i) {
      const RedisValue& value = reply->at(i - start);
      if (value.type == RedisValue::Type::kString) Deliver(ids[i], value.text);
    }
  }
}

std::optional<JobVerdict> RedisEvalService::NextVerdict(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!verdict_ready_.wait_for(lock, timeout, [this] { return !verdicts_.empty(); })) return std::nullopt;
  JobVerdict verdict = std::move(verdicts_.front());
  verdicts_.pop_front();
  return verdict;
}

std::vector<json> RedisEvalService::Heartbeats() {
  std::vector<json> beats;
  auto names = commands_.Command({"SMEMBERS", keys_.worker_names});
  if (!names.ok()) return beats;
  for (const RedisValue& name : names->elements) {
    auto value = commands_.Command({"GET", keys_.worker_prefix + name.text});
    if (!value.ok()) continue;
    if (value->type != RedisValue::Type::kString) {
      (void)commands_.Command({"SREM", keys_.worker_names, name.text});  // its heartbeat expired: gone
      continue;
    }
    json beat = json::parse(value->text, nullptr, false);
    if (beat.is_object()) beats.push_back(std::move(beat));
  }
  return beats;
}

Result<nlohmann::json> RedisEvalService::DeviceFacts(const std::string& backend) {
  // Each worker's heartbeat carries its devices' facts.
  for (const json& heartbeat : Heartbeats()) {
    if (heartbeat.contains("facts") && heartbeat["facts"].contains(backend)) return heartbeat["facts"][backend];
  }
  return MakeError(ErrorKind::kNotFound, "no live worker runs backend '{}' at {}", backend, address_.ToString());
}

ServiceStats RedisEvalService::Stats() {
  ServiceStats stats;
  if (auto groups = commands_.Command({"XINFO", "GROUPS", keys_.jobs}); groups.ok()) {
    for (const RedisValue& group : groups->elements) {
      std::map<std::string, const RedisValue*> fields;
      for (size_t i = 0; i + 1 < group.elements.size(); i += 2) fields[group.elements[i].text] = &group.elements[i + 1];
      if (fields.count("name") == 0 || fields["name"]->text != keys_.group) continue;
      if (fields.count("lag") > 0) stats.queued = static_cast<size_t>(std::max<int64_t>(0, fields["lag"]->integer));
    }
  }
  for (const json& heartbeat : Heartbeats()) {
    const json by_device = heartbeat.value("workers_by_device", json::object());
    for (const auto& [device, workers] : by_device.items()) {
      if (workers.is_number_unsigned()) stats.workers_by_device[device] += workers.get<size_t>();
    }
    stats.builds_running += heartbeat.value("builds_running", size_t{0});
    stats.builds_waiting += heartbeat.value("builds_waiting", size_t{0});
  }
  return stats;
}

void RedisEvalService::Shutdown() {
  std::map<std::string, Pending> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    abandoned.swap(pending_);
    for (auto& [id, pending] : abandoned) {
      verdicts_.push_back({id, StoppedVerdict(pending.task, pending.backend, pending.candidate,
                                              "the server stopped before this job's verdict came; the job stays in "
                                              "Redis and a worker finishes it (its verdict: " +
                                                  keys_.result_prefix + id + ")")});
    }
  }
  verdict_ready_.notify_all();
}

}  // namespace ksmith
