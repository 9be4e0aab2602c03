// What `ksmith serve` does behind its HTTP routes: it turns a client's candidates into jobs of an
// evaluation service (local devices, or Redis Streams workers: service/broker_registry.h), keeps
// each job's state and events (server/job_table.h), records every job and verdict in the run
// store, and computes rewards. One thread reads the service's verdict stream.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "eval/eval_options.h"
#include "server/job_request.h"
#include "server/job_table.h"
#include "server/reward.h"
#include "server/served_runs.h"
#include "server/served_tasks.h"
#include "service/eval_service.h"

namespace ksmith {

struct ServeConfig {
  RequestLimits limits;
  size_t queued_per_client = 2048;  // unfinished jobs one client may have
  size_t max_queued = 20000;        // unfinished jobs in all
  size_t max_finished = 20000;      // finished jobs answered from memory (a verdict is about 10 KB)
  std::vector<std::string> backends;  // what the service runs; the first is the default
  EvalOptions base_options;           // ksmith.toml's [eval] under each request's own options
  RewardRule reward;
};

struct SubmittedJob {
  std::string id;
  bool duplicate = false;  // the client's client_id named an earlier job: that one's id
};

class ServeCore {
 public:
  /// `service`, `tasks` and `runs` outlive the core.
  ServeCore(EvalService& service, ServedTasks& tasks, ServedRuns& runs, ServeConfig config);
  /// Stops reading verdicts (StopReading).
  ~ServeCore();
  ServeCore(const ServeCore&) = delete;
  ServeCore& operator=(const ServeCore&) = delete;

  /// Queues every candidate of one request as a job of `client`, all or none: the first that
  /// cannot be judged (unknown task, backend or format, a quota passed) refuses the whole request.
  std::variant<std::vector<SubmittedJob>, ApiError> Submit(const std::string& client,
                                                           const std::vector<CandidateRequest>& candidates);
  /// Queues one candidate against an already resolved task (KernelGYM's reference_code).
  /// `replace` forgets an earlier job of the same client_id first (force_refresh).
  std::variant<SubmittedJob, ApiError> SubmitResolved(const std::string& client, const CandidateRequest& candidate,
                                                      std::shared_ptr<const Task> task, bool replace);

  JobTable& table() { return table_; }
  ServedRuns& runs() { return runs_; }
  ServedTasks& tasks() { return tasks_; }
  const ServeConfig& config() const { return config_; }
  Reward RewardOf(const nlohmann::json& verdict) const { return ComputeReward(config_.reward, verdict); }
  /// Prometheus text: queue depth, jobs by state, verdicts by status, latency, builds, workers.
  std::string MetricsText();

  /// After this, Submit refuses with 503 (the server is stopping).
  void StopAccepting() { accepting_ = false; }
  bool accepting() const { return accepting_; }
  /// Waits until no job is unfinished or `deadline` passes; whether none is.
  bool Drain(std::chrono::steady_clock::time_point deadline);
  /// Stops the thread that reads the service's verdicts. The service's own threads may still call
  /// the jobs' callbacks into the table: destroy the service before the core.
  void StopReading();

 private:
  struct Resolved {
    CandidateRequest request;
    std::shared_ptr<const Task> task;
    CandidateSource source;
  };
  std::variant<Resolved, ApiError> Resolve(const CandidateRequest& candidate, const std::string& where,
                                           std::shared_ptr<const Task> task);
  std::variant<SubmittedJob, ApiError> Enqueue(const std::string& client, Resolved resolved);
  void ReadVerdicts();

  EvalService& service_;
  ServedTasks& tasks_;
  ServedRuns& runs_;
  ServeConfig config_;
  JobTable table_;
  std::atomic<bool> accepting_{true};
  std::atomic<bool> stopping_{false};
  std::mutex candidates_mutex_;
  std::map<std::string, int64_t> store_ids_;  // guarded by candidates_mutex_: job id -> store candidate id
  std::thread reader_;
};

/// A new job id: "j-" and 16 random hex digits, unique across servers and restarts that share a
/// broker (a reclaimed job's result is keyed by it).
std::string NewJobId();

}  // namespace ksmith
