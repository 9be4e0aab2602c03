// `ksmith worker --broker redis://...`: takes jobs from the jobs stream through the consumer group,
// judges them on this host's devices (a LocalEvalService), and for each verdict, in one atomic
// step (a Lua script): stores it under the job's id unless a verdict is there already, publishes
// it on the verdict stream only if it was the first, and acknowledges the entry. So a job is
// acknowledged only after its verdict is stored and published, and a job that two workers ran (one
// thought dead, reclaimed) yields one verdict. A dead worker's entries are reclaimed (XAUTOCLAIM)
// once idle for `reclaim_after`; a live worker keeps its own entries fresh (XCLAIM to itself), so a
// long evaluation is never taken from it.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include "service/local_eval_service.h"
#include "service/redis/job_codec.h"
#include "service/redis/redis_connection.h"
#include "service/redis/redis_eval_service.h"

namespace ksmith {

struct RedisWorkerConfig {
  RedisAddress address;
  std::string consumer;  // this worker's name in the group; unique ("host-pid")
  std::chrono::milliseconds reclaim_after{60'000};  // a worker silent this long is dead
  size_t max_in_flight = 4;  // jobs taken and not yet done (builds overlap verification)
  std::chrono::seconds drain{60};  // on stop: how long jobs in flight may still finish
  /// What the heartbeat says of this worker: {"workers_by_device": {...}, "facts": {...}}.
  nlohmann::json description = nlohmann::json::object();
};

class RedisWorker {
 public:
  /// `service`, `registry` and `formats` outlive the worker.
  RedisWorker(RedisWorkerConfig config, LocalEvalService& service, const TaskRegistry& registry, FormatLookup formats);

  /// Serves until `stop` is set, then stops taking jobs, lets those in flight finish for
  /// `drain`, and puts back in the stream, at once, any that did not. Fails only when Redis cannot
  /// be reached at the start; later outages are waited out.
  Status Run(const std::atomic<bool>& stop);

  /// Jobs this worker gave a verdict (the first for their id) since it started.
  size_t completed() const { return completed_; }

 private:
  struct InFlight {
    std::vector<std::string> entry_ids;  // the stream entries that carried it (a requeued copy too)
    std::string encoded;
  };
  /// Takes up to `count` new entries (or reclaimed ones) and submits them.
  void Take(size_t count);
  void Reclaim(size_t count);
  void Start(const std::string& entry_id, const std::string& encoded);
  /// Stores, publishes and acknowledges one verdict; retries while Redis is down.
  void Finish(const std::string& job_id, const std::vector<std::string>& entry_ids, const nlohmann::json& verdict,
              const std::atomic<bool>& give_up);
  void Heartbeat();
  void Event(const std::string& job_id, const std::string& kind, const std::string& line);

  RedisWorkerConfig config_;
  RedisKeys keys_;
  LocalEvalService& service_;
  const TaskRegistry& registry_;
  FormatLookup formats_;
  RedisConnection intake_, results_, events_;
  std::mutex mutex_;
  std::map<std::string, InFlight> in_flight_;  // guarded by mutex_: by job id
  // Guarded by mutex_: jobs judged here whose verdict is being published. Their entries are no
  // longer claimed by the heartbeat, so this worker may reclaim one before the publication
  // acknowledges it; such a copy is left to that publication (its service already ran the job).
  std::set<std::string> finishing_;
  std::atomic<size_t> completed_{0};
  std::string reclaim_cursor_ = "0-0";  // where the next XAUTOCLAIM looks (the intake thread's)
};

}  // namespace ksmith
