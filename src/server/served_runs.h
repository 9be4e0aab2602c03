// Every job `ksmith serve` accepts goes into the run store as it is accepted, and its verdict as it
// comes: one run per task and backend for the server's life (strategy "serve"), each job a
// candidate that keeps its job id, so that a served run is a dataset like any other
// (`ksmith runs show`, `ksmith export`).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "store/run_store.h"
#include "task/task.h"

namespace ksmith {

class ServedRuns {
 public:
  /// `store` outlives this; null: nothing is recorded.
  explicit ServedRuns(RunStore* store) : store_(store) {}

  /// Records a new job's candidate (its run made on first use). Returns the store's candidate id,
  /// or 0 without a store.
  Result<int64_t> AddJob(const Task& task, const std::string& backend, const std::string& job_id,
                         const std::string& client, const std::string& source);
  Status AddVerdict(int64_t candidate_id, const nlohmann::json& verdict);
  /// GET /v1/evaluations/{id}'s body for a job the store holds and the table does not (finished
  /// long ago, or before a restart): its state and verdict as recorded; nullopt when unknown.
  Result<std::optional<nlohmann::json>> StoredJob(const std::string& job_id);
  /// Marks every run this server made finished, saying why.
  void FinishAll(const std::string& reason);

 private:
  Result<std::string> RunFor(const Task& task, const std::string& backend);  // called locked

  RunStore* store_;
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::string> runs_;  // (task, backend) -> run id
};

}  // namespace ksmith
