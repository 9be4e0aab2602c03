// What `ksmith serve` knows of every job it accepted: its state, its progress as events, its
// verdict, and each client's idempotency keys. Thread-safe: the HTTP handlers read it, the
// service's verdict reader writes it, and waiters (POST /v1/rewards, an event stream) block on it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

enum class JobState { kQueued, kRunning, kDone };
const char* JobStateName(JobState state);

struct JobEvent {
  std::string kind;  // "state", "progress", "verdict"
  nlohmann::json data;
};

struct JobRecord {
  std::string id;
  std::string client;     // who submitted it (the quota's key)
  std::string client_id;  // the client's idempotency key; empty: none
  std::string task;
  std::string backend;
  JobState state = JobState::kQueued;
  std::chrono::system_clock::time_point submitted_at, started_at, finished_at;
  nlohmann::json verdict;  // null until done
  std::vector<JobEvent> events;

  /// GET /v1/evaluations/{id}'s body.
  nlohmann::json ToJson() const;
};

/// Counts for GET /metrics.
struct JobCounts {
  size_t queued = 0;
  size_t running = 0;
  std::map<std::string, uint64_t> verdicts_by_status;
  std::vector<double> latency_bucket_s;        // upper bounds [s]
  std::vector<uint64_t> latency_bucket_count;  // cumulative, as Prometheus wants; one more for +Inf
  double latency_sum_s = 0;
  uint64_t latency_count = 0;
};

class JobTable {
 public:
  /// `max_finished`: finished jobs kept in memory (the run store keeps them all); older ones are
  /// forgotten first. `queued_per_client`: unfinished jobs one client may have.
  JobTable(size_t max_finished, size_t queued_per_client);

  enum class Admission { kNew, kDuplicate, kOverQuota };
  struct Admitted {
    Admission admission = Admission::kNew;
    std::string id;  // the new id, or the earlier job's for a duplicate
  };
  /// Reserves room for `count` new jobs of `client`: false when its unfinished jobs would pass the
  /// quota. Reserved room is used by Add or given back by Release.
  bool Reserve(const std::string& client, size_t count);
  void Release(const std::string& client, size_t count);
  /// The earlier job of (client, client_id), when the key was used before.
  std::optional<std::string> FindByClientId(const std::string& client, const std::string& client_id) const;
  /// Frees `client_id` for a new job (KernelGYM's force_refresh); the earlier job stays.
  void ForgetClientId(const std::string& client, const std::string& client_id);
  /// Records a new job (its room reserved). A client_id already used by `client` returns that
  /// job instead and gives the room back.
  Admitted Add(JobRecord record);
  /// Forgets a job that the service refused after it was added.
  void Remove(const std::string& id);

  void MarkStarted(const std::string& id);
  void AddProgress(const std::string& id, const std::string& line);
  void Finish(const std::string& id, nlohmann::json verdict);

  std::optional<JobRecord> Get(const std::string& id) const;
  /// Waits until every job of `ids` is done or `deadline` passes; whether all are done.
  bool WaitDone(const std::vector<std::string>& ids, std::chrono::steady_clock::time_point deadline) const;
  /// Events of `id` from index `from` on, waiting up to `timeout` for one when there is none yet;
  /// `done` says the job is finished (no more will come). Nullopt for an unknown id.
  std::optional<std::vector<JobEvent>> EventsFrom(const std::string& id, size_t from,
                                                  std::chrono::milliseconds timeout, bool& done) const;
  JobCounts Counts() const;

  static constexpr size_t kMaxProgressEvents = 200;

 private:
  void ForgetKeyOf(const JobRecord& job);  // called locked

  const size_t max_finished_;
  const size_t queued_per_client_;
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::map<std::string, JobRecord> jobs_;                    // guarded by mutex_
  std::map<std::pair<std::string, std::string>, std::string> by_client_id_;  // guarded by mutex_
  std::map<std::string, size_t> unfinished_by_client_;      // guarded by mutex_: reserved and unfinished
  std::deque<std::string> finished_order_;                   // guarded by mutex_: oldest first
  JobCounts counts_;                                         // guarded by mutex_: kept as jobs change state
};

/// ISO 8601 in UTC with milliseconds ("2026-11-29T17:02:03.123Z"); empty for the epoch.
std::string IsoTime(std::chrono::system_clock::time_point time);

}  // namespace ksmith
