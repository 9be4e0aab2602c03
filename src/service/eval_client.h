// A caller's view of an evaluation service: submit a job, get a future of its verdict. One
// thread reads the service's stream of verdicts and hands each to the future of its job id, so
// many callers (a bench's tasks, a sample strategy's proposals) share one service.
#pragma once

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"
#include "service/eval_service.h"

namespace ksmith {

class EvalClient {
 public:
  /// `service` outlives the client; the client must be the only reader of its verdicts.
  explicit EvalClient(EvalService& service);
  /// Stops reading; futures still pending get a verdict that says the client closed.
  ~EvalClient();
  EvalClient(const EvalClient&) = delete;
  EvalClient& operator=(const EvalClient&) = delete;

  /// Queues `job` (waiting while the queue is full); the future holds its verdict.
  Result<std::future<Verdict>> Submit(EvalJob job);

  EvalService& service() { return service_; }

 private:
  void Read();

  EvalService& service_;
  std::mutex mutex_;
  std::map<std::string, std::promise<Verdict>> pending_;  // guarded by mutex_
  /// Verdicts that arrived before Submit recorded their id (a fast job). Guarded by mutex_.
  std::map<std::string, Verdict> early_;
  std::atomic<bool> stopping_{false};
  std::thread reader_;
};

}  // namespace ksmith
