#include "service/redis/redis_worker.h"

#include <thread>

#include <fmt/format.h>

#include "core/json_text.h"

namespace ksmith {
namespace {

using json = nlohmann::json;

// Stores the verdict unless one is there, publishes it only if it was the first, acknowledges the
// entry and deletes it (a job's source stays in Redis no longer than it is needed): one step, so no
// crash can leave a verdict published and its job unacknowledged.
constexpr const char* kFinishScript = R"lua(
local first = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[4])
if first then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'job', ARGV[2], 'verdict', ARGV[1])
end
for i = 6, #ARGV do
  redis.call('XACK', KEYS[3], ARGV[3], ARGV[i])
  redis.call('XDEL', KEYS[3], ARGV[i])
end
if first then return 1 else return 0 end
)lua";

// Puts a job back at the stream's end and acknowledges the entry it came in (a worker stopping).
constexpr const char* kRequeueScript = R"lua(
redis.call('XADD', KEYS[1], '*', 'job', ARGV[1])
for i = 3, #ARGV do
  redis.call('XACK', KEYS[1], ARGV[2], ARGV[i])
  redis.call('XDEL', KEYS[1], ARGV[i])
end
return 1
)lua";

std::map<std::string, std::string> EntryFields(const RedisValue& entry) {
  std::map<std::string, std::string> fields;
  const RedisValue& list = entry.at(1);
  for (size_t i = 0; i + 1 < list.elements.size(); i += 2) fields[list.elements[i].text] = list.elements[i + 1].text;
  return fields;
}

json UnreadableJobVerdict(const std::string& reason) {
  Verdict verdict;
  verdict.status = VerdictStatus::kInfraError;
  verdict.reason = reason;
  return verdict.ToJson();
}

}  // namespace

RedisWorker::RedisWorker(RedisWorkerConfig config, LocalEvalService& service, const TaskRegistry& registry,
                         FormatLookup formats)
    : config_(std::move(config)),
      keys_(config_.address),
      service_(service),
      registry_(registry),
      formats_(std::move(formats)),
      intake_(config_.address),
      results_(config_.address),
      events_(config_.address) {}

void RedisWorker::Event(const std::string& job_id, const std::string& kind, const std::string& line) {
  // Progress is best effort: a lost line costs a client one progress event, never a verdict.
  (void)events_.Command({"XADD", keys_.events, "MAXLEN", "~", std::to_string(kStreamMaxLength), "*", "job", job_id,
                         "kind", kind, "line", line});
}

void RedisWorker::Start(const std::string& entry_id, const std::string& encoded) {
  const json parsed = json::parse(encoded, nullptr, false);
  const std::string job_id = parsed.is_object() ? parsed.value("id", std::string()) : std::string();
  if (job_id.empty()) {
    // Nothing to answer to: acknowledge it, so that no worker takes it again.
    (void)intake_.Command({"XACK", keys_.jobs, keys_.group, entry_id});
    (void)intake_.Command({"XDEL", keys_.jobs, entry_id});
    std::fprintf(stderr, "ksmith worker: warning: entry %s of %s is not a job; acknowledged and dropped\n",
                 entry_id.c_str(), keys_.jobs.c_str());
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (auto found = in_flight_.find(job_id); found != in_flight_.end()) {
      found->second.entry_ids.push_back(entry_id);  // a second copy of a job this worker is running
      return;
    }
    if (finishing_.contains(job_id)) return;
  }
  // A reclaimed job that another worker finished before it died is only acknowledged.
  if (auto done = intake_.Command({"EXISTS", keys_.result_prefix + job_id}); done.ok() && done->integer > 0) {
    (void)intake_.Command({"XACK", keys_.jobs, keys_.group, entry_id});
    (void)intake_.Command({"XDEL", keys_.jobs, entry_id});
    return;
  }
  auto job = DecodeJob(parsed, registry_, formats_);
  if (!job.ok()) {
    const std::atomic<bool> never{false};
    Finish(job_id, {entry_id}, UnreadableJobVerdict(job.error().message), never);
    return;
  }
  job->on_start = [this, job_id] { Event(job_id, "started", ""); };
  job->options.progress = [this, job_id](const std::string& line) { Event(job_id, "progress", line); };
  {
    std::lock_guard lock(mutex_);
    in_flight_[job_id] = {{entry_id}, encoded};
  }
  auto submitted = service_.Submit(std::move(job.value()));
  if (!submitted.ok()) {
    {
      std::lock_guard lock(mutex_);
      in_flight_.erase(job_id);
    }
    const std::atomic<bool> never{false};
    Finish(job_id, {entry_id}, UnreadableJobVerdict("this worker could not queue the job: " + submitted.error().message),
           never);
  }
}

void RedisWorker::Take(size_t count) {
  auto reply = intake_.Command({"XREADGROUP", "GROUP", keys_.group, config_.consumer, "COUNT", std::to_string(count),
                                "BLOCK", "1000", "STREAMS", keys_.jobs, ">"},
                               std::chrono::seconds(5));
  if (!reply.ok()) {
    if (reply.error().message.find("NOGROUP") != std::string::npos) {
      // Redis came back without the group (a restart without persistence): make it again.
      (void)intake_.Command({"XGROUP", "CREATE", keys_.jobs, keys_.group, "0", "MKSTREAM"});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return;
  }
  for (const RedisValue& stream : reply->elements) {
    for (const RedisValue& entry : stream.at(1).elements) Start(entry.at(0).text, EntryFields(entry)["job"]);
  }
}

void RedisWorker::Reclaim(size_t count) {
  // From where the last call stopped: Redis looks at no more than ten times COUNT entries a call.
  auto reply = intake_.Command({"XAUTOCLAIM", keys_.jobs, keys_.group, config_.consumer,
                                std::to_string(config_.reclaim_after.count()), reclaim_cursor_, "COUNT",
                                std::to_string(count)});
  if (!reply.ok()) return;
  reclaim_cursor_ = reply->at(0).type == RedisValue::Type::kString ? reply->at(0).text : "0-0";
  for (const RedisValue& entry : reply->at(1).elements) {
    if (entry.type != RedisValue::Type::kArray) continue;  // an entry trimmed away meanwhile
    std::fprintf(stderr, "ksmith worker: reclaimed %s from a worker silent for %lld ms\n", entry.at(0).text.c_str(),
                 static_cast<long long>(config_.reclaim_after.count()));
    Start(entry.at(0).text, EntryFields(entry)["job"]);
  }
}

void RedisWorker::Finish(const std::string& job_id, const std::vector<std::string>& entry_ids, const json& verdict,
                         const std::atomic<bool>& give_up) {
  // ARGV: the verdict, the job id, the group, the result's TTL, the verdict stream's length, then
  // every entry that carried the job.
  std::vector<std::string> command = {"EVAL", kFinishScript, "3", keys_.result_prefix + job_id, keys_.verdicts, keys_.jobs,
                                      JsonText(verdict), job_id, keys_.group, std::to_string(kResultTtlS),
                                      std::to_string(kStreamMaxLength)};
  command.insert(command.end(), entry_ids.begin(), entry_ids.end());
  for (int attempt = 0;; ++attempt) {
    auto done = results_.Command(command);
    if (done.ok()) {
      if (done->integer == 1) ++completed_;
      return;
    }
    // Redis is away: the verdict waits here, unacknowledged, until it is back.
    if (attempt % 20 == 0) {
      std::fprintf(stderr, "ksmith worker: the verdict of job %s waits for Redis: %s\n", job_id.c_str(),
                   done.error().message.c_str());
    }
    if (give_up) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void RedisWorker::Heartbeat() {
  json beat = config_.description;
  const ServiceStats stats = service_.Stats();
  beat["consumer"] = config_.consumer;
  beat["builds_running"] = stats.builds_running;
  beat["builds_waiting"] = stats.builds_waiting;
  beat["completed"] = completed_.load();
  std::vector<std::string> own;
  {
    std::lock_guard lock(mutex_);
    beat["in_flight"] = in_flight_.size();
    for (const auto& [id, job] : in_flight_) own.insert(own.end(), job.entry_ids.begin(), job.entry_ids.end());
  }
  (void)intake_.Command({"SET", keys_.worker_prefix + config_.consumer, JsonText(beat), "EX", "30"});
  (void)intake_.Command({"SADD", keys_.worker_names, config_.consumer});
  if (own.empty()) return;
  // Claiming its own entries resets their idle time: a long evaluation is not a dead worker's.
  std::vector<std::string> claim = {"XCLAIM", keys_.jobs, keys_.group, config_.consumer, "0"};
  claim.insert(claim.end(), own.begin(), own.end());
  claim.push_back("JUSTID");
  (void)intake_.Command(claim);
}

Status RedisWorker::Run(const std::atomic<bool>& stop) {
  auto group = intake_.Command({"XGROUP", "CREATE", keys_.jobs, keys_.group, "0", "MKSTREAM"});
  if (!group.ok() && group.error().message.find("BUSYGROUP") == std::string::npos) return group.error();
  std::atomic<bool> taking{true}, requeue{false}, give_up{false};
  std::thread finisher([&] {
    while (true) {
      {
        std::lock_guard lock(mutex_);
        if (!taking && in_flight_.empty()) return;
      }
      auto next = service_.NextVerdict(std::chrono::milliseconds(200));
      if (!next) continue;
      InFlight job;
      bool put_back = false;
      {
        std::lock_guard lock(mutex_);
        const auto found = in_flight_.find(next->job_id);
        if (found == in_flight_.end()) continue;
        job = std::move(found->second);
        in_flight_.erase(found);
        put_back = requeue && next->verdict.status == VerdictStatus::kInfraError;
        if (!put_back) finishing_.insert(next->job_id);
      }
      if (put_back) {
        // Cancelled by this worker's stop, not judged: back in the stream for another worker.
        std::vector<std::string> command = {"EVAL", kRequeueScript, "1", keys_.jobs, job.encoded, keys_.group};
        command.insert(command.end(), job.entry_ids.begin(), job.entry_ids.end());
        if (auto put = results_.Command(command); !put.ok()) {
          std::fprintf(stderr, "ksmith worker: job %s could not be put back (%s); it is reclaimed after %lld ms\n",
                       next->job_id.c_str(), put.error().message.c_str(),
                       static_cast<long long>(config_.reclaim_after.count()));
        }
        continue;
      }
      // Which worker judged it: a served run's dataset says where each verdict came from.
      next->verdict.provenance["worker"] = config_.consumer;
      Finish(next->job_id, job.entry_ids, next->verdict.ToJson(), give_up);
      std::lock_guard lock(mutex_);
      finishing_.erase(next->job_id);
    }
  });
  auto last_heartbeat = std::chrono::steady_clock::time_point{};
  auto last_reclaim = std::chrono::steady_clock::time_point{};
  const auto reclaim_every = std::max(std::chrono::milliseconds(250), config_.reclaim_after / 4);
  while (!stop) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_heartbeat > std::chrono::seconds(5)) {
      Heartbeat();
      last_heartbeat = now;
    }
    size_t room = 0;
    {
      std::lock_guard lock(mutex_);
      room = config_.max_in_flight > in_flight_.size() ? config_.max_in_flight - in_flight_.size() : 0;
    }
    if (room > 0 && now - last_reclaim > reclaim_every) {
      Reclaim(room);
      last_reclaim = now;
      std::lock_guard lock(mutex_);
      room = config_.max_in_flight > in_flight_.size() ? config_.max_in_flight - in_flight_.size() : 0;
    }
    if (room > 0) {
      Take(room);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  taking = false;
  const auto deadline = std::chrono::steady_clock::now() + config_.drain;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.empty()) break;
    }
    if (std::chrono::steady_clock::now() - last_heartbeat > std::chrono::seconds(5)) {
      Heartbeat();
      last_heartbeat = std::chrono::steady_clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  requeue = true;
  service_.Shutdown();  // what did not finish is cancelled, and put back by the finisher
  const auto cancel_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < cancel_deadline) {
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  give_up = true;
  {
    std::lock_guard lock(mutex_);
    in_flight_.clear();  // what is left is reclaimed by another worker after reclaim_after
  }
  finisher.join();
  (void)intake_.Command({"DEL", keys_.worker_prefix + config_.consumer});
  return {};
}

}  // namespace ksmith
