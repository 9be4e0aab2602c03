// The evaluation service: a queue of jobs in, a stream of verdicts out, each tagged with its
// job id. Callers never know where a job runs: LocalEvalService runs them on this machine's
// devices; an HTTP server and a Redis Streams pool of remote workers are to be other
// implementations of this same interface.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "eval/eval_options.h"
#include "eval/verdict.h"
#include "task/task.h"

namespace ksmith {

struct EvalJob {
  std::string id;                    // empty: the service makes one; must be unique otherwise
  std::shared_ptr<const Task> task;
  std::string backend;               // a name in the backend registry
  CandidateSource candidate;
  /// What to check. Its device fields (workers, gate) and `cancel` are the service's to set.
  EvalOptions options;
  /// Called once when a worker takes the job, before it is evaluated (on a thread of the
  /// service's); may be empty. `options.progress` then reports its stages.
  std::function<void()> on_start;
};

/// What a service is doing now, for a server's metrics.
struct ServiceStats {
  size_t queued = 0;            // jobs waiting for a worker
  size_t builds_running = 0;    // compiler processes' builds in flight
  size_t builds_waiting = 0;
  /// Verification workers by device ("cuda:0", "cpu"), where the service knows them.
  std::map<std::string, size_t> workers_by_device;
};

struct JobVerdict {
  std::string job_id;
  Verdict verdict;
};

inline constexpr std::chrono::milliseconds kWaitForever = std::chrono::milliseconds::max();

class EvalService {
 public:
  virtual ~EvalService() = default;

  /// Queues `job` and returns its id. While the queue is full, waits up to `wait` for room
  /// (back-pressure: the queue never grows past its capacity), then fails with kTimeout. A job
  /// the service cannot run (unknown backend, a task with no version for it) fails at once.
  virtual Result<std::string> Submit(EvalJob job, std::chrono::milliseconds wait = kWaitForever) = 0;

  /// Whether a job of `task` on `backend` would be accepted: an explained kInvalidArgument for
  /// a backend the service does not run or a task with no version for it.
  virtual Status CanRun(const Task& task, const std::string& backend) = 0;

  /// The next verdict of any job, in the order jobs finish; nullopt when none came within
  /// `timeout`. Every accepted job gets exactly one verdict, even when it was cancelled.
  virtual std::optional<JobVerdict> NextVerdict(std::chrono::milliseconds timeout) = 0;

  /// The facts of the device a backend's jobs run on (for prompts and reports).
  virtual Result<nlohmann::json> DeviceFacts(const std::string& backend) = 0;

  /// What the service is doing now; a service that cannot tell leaves fields at zero.
  virtual ServiceStats Stats() { return {}; }

  /// Refuses new jobs and cancels the rest: queued ones get a verdict saying so without
  /// running, running ones stop at once (their workers are killed). Idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace ksmith
