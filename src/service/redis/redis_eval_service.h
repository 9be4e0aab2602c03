// The evaluation service as a Redis Streams queue (`ksmith serve --broker redis://...`): Submit
// adds the job to the jobs stream, where `ksmith worker` processes on any host take it through a
// consumer group (service/redis/redis_worker.h); verdicts and progress come back on two streams
// this service reads. Redis keeps the queue: a server that stops leaves its unfinished jobs there,
// and workers go on with them. Design and keys: docs/serve.md.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "service/eval_service.h"
#include "service/redis/redis_connection.h"

namespace ksmith {

/// The keys both sides use, under the address's prefix.
struct RedisKeys {
  explicit RedisKeys(const RedisAddress& address)
      : jobs(address.Key("jobs")),
        group(address.Key("workers")),
        verdicts(address.Key("verdicts")),
        events(address.Key("events")),
        result_prefix(address.Key("result:")),
        worker_prefix(address.Key("worker:")),
        worker_names(address.Key("worker-names")),
        epoch(address.Key("epoch")) {}
  std::string jobs, group, verdicts, events, result_prefix, worker_prefix;
  std::string worker_names;  // a set: every worker that wrote a heartbeat (its key expires; its name stays until read)
  std::string epoch;         // a token the server writes once: gone or changed, Redis lost its data
};

/// How long a result stays in Redis after its verdict [s]: a week, for a server that restarts.
inline constexpr int kResultTtlS = 7 * 24 * 3600;
/// Entries kept in the verdict and event streams (approximately; older ones are trimmed).
inline constexpr int kStreamMaxLength = 100000;

class RedisEvalService : public EvalService {
 public:
  /// Connects (failing when Redis cannot be reached), makes the consumer group, and starts reading
  /// verdicts. `backends`: the backends the workers run, for CanRun.
  static Result<std::unique_ptr<RedisEvalService>> Connect(const RedisAddress& address,
                                                           std::vector<std::string> backends);
  ~RedisEvalService() override;

  Result<std::string> Submit(EvalJob job, std::chrono::milliseconds wait = kWaitForever) override;
  Status CanRun(const Task& task, const std::string& backend) override;
  std::optional<JobVerdict> NextVerdict(std::chrono::milliseconds timeout) override;
  Result<nlohmann::json> DeviceFacts(const std::string& backend) override;
  ServiceStats Stats() override;
  /// Stops reading: jobs still pending get a verdict saying the server stopped before theirs came
  /// (the jobs themselves stay in Redis, and workers finish them).
  void Shutdown() override;

 private:
  struct Pending {
    std::function<void()> on_start;
    std::function<void(const std::string&)> progress;
    std::string task, backend, candidate;
    std::string encoded;  // the job as queued: queued again if Redis lost it
  };

  RedisEvalService(const RedisAddress& address, std::vector<std::string> backends);
  void Read();
  void Deliver(const std::string& job_id, const std::string& verdict_text);
  /// Results stored while this service missed their stream entry (a trimmed stream); and, where
  /// Redis lost the jobs stream itself (a restart without persistence), every pending job queued
  /// again, so that each still gets its verdict.
  void SweepResults();
  /// The heartbeats of the workers alive now.
  std::vector<nlohmann::json> Heartbeats();

  RedisAddress address_;
  RedisKeys keys_;
  std::vector<std::string> backends_;
  RedisConnection commands_;  // Submit, Stats
  RedisConnection reader_connection_;
  std::string last_verdict_id_ = "0-0", last_event_id_ = "0-0";  // the reader's own
  std::string epoch_;  // the epoch token this service saw at the start
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable verdict_ready_;
  std::map<std::string, Pending> pending_;  // guarded by mutex_
  std::deque<JobVerdict> verdicts_;         // guarded by mutex_
  std::thread reader_;
};

}  // namespace ksmith
