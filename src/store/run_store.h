// The run store: every run, prompt, response, candidate and verdict, in one SQLite file (WAL mode,
// versioned migrations). Each record is committed when it is made, so a run killed at any moment
// loses nothing that finished, and `optimize --resume` picks it up from here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "llm/provider.h"

struct sqlite3;

namespace ksmith {

struct RunRecord {
  std::string id;          // "20261121-103512-3fa9c1": sortable, unique
  std::string task;
  std::string backend;     // "cpu" or "cuda"
  std::string strategy;    // "refine", "sample", "tune"
  std::string provider;    // "openai", "anthropic", "replay", "" for tune
  std::string model;
  nlohmann::json config = nlohmann::json::object();  // the settings the run started with (no keys)
  std::string status = "running";  // "running", "finished", "failed"
  std::string stop_reason;         // why it ended ("budget: 20 candidates evaluated")
  std::string created_at;          // ISO 8601, UTC
  std::string finished_at;
  std::optional<int64_t> best_candidate_id;
  // Totals, computed by the store from the run's rows (read-only):
  int64_t candidates = 0;       // candidates with a verdict
  int64_t passed = 0;
  int64_t llm_calls = 0;
  int64_t tokens = 0;           // input + output over all calls
  double cost_dollars = 0;
  std::optional<double> best_speedup;
};

struct LlmCallRecord {
  int64_t id = 0;
  std::string run_id;
  int64_t sequence = 0;  // 0, 1, 2... in the order the calls were recorded within the run
  LlmCall call;
  std::string created_at;
};

struct CandidateRecord {
  int64_t id = 0;                 // assigned by the store
  std::string run_id;
  int64_t sequence = 0;           // assigned by the store: 0, 1, 2... within the run
  std::optional<int64_t> parent_id;
  std::string origin;             // "llm", "tune", "seed"
  std::string role;               // the role that proposed it ("coder"), empty for tune
  std::optional<int64_t> llm_call_id;
  std::string source;             // empty when no kernel could be extracted
  std::string extraction_error;   // why not: no code, wrong name, truncated, provider failure
  nlohmann::json knobs = nlohmann::json::object();  // tune: {"BLOCK": "128"}
  std::string explanation;        // the model's words around the code
  std::string created_at;
  // From its verdict, when evaluated (read-only here; AddVerdict sets them):
  std::optional<nlohmann::json> verdict;  // exactly what `ksmith eval --json` prints
  std::string status;                     // the verdict's status, "extraction_failed", or "pending"
  std::optional<double> speedup;          // the verdict's median speedup when timed
};

class RunStore {
 public:
  /// Opens or creates the file, switches to WAL, applies pending migrations. An unreadable file
  /// or one written by a newer ksmith is an error that says so.
  static Result<std::unique_ptr<RunStore>> Open(const std::filesystem::path& path);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// A new sortable id from the time and randomness.
  static std::string NewRunId();
  int schema_version() const;

  /// Records the run and the task's definition (task.toml's text) it ran on.
  Status CreateRun(const RunRecord& run, const std::string& task_toml);
  Status FinishRun(const std::string& run_id, const std::string& status, const std::string& stop_reason,
                   std::optional<int64_t> best_candidate_id);
  /// Back to "running" for a resume.
  Status ReopenRun(const std::string& run_id);

  Result<int64_t> AddLlmCall(const std::string& run_id, const LlmCall& call);
  /// A candidate without a verdict: it is evaluated next. Extraction failures are recorded with
  /// status "extraction_failed" and never evaluated.
  Result<int64_t> AddCandidate(const CandidateRecord& candidate);
  Status AddVerdict(int64_t candidate_id, const nlohmann::json& verdict);

  Result<std::vector<RunRecord>> ListRuns() const;  // newest first
  Result<RunRecord> GetRun(const std::string& run_id) const;  // kNotFound names the id
  Result<std::vector<CandidateRecord>> Candidates(const std::string& run_id) const;  // by sequence
  Result<std::vector<LlmCallRecord>> LlmCalls(const std::string& run_id) const;      // by sequence
  Result<std::string> TaskToml(const std::string& run_id) const;

 private:
  explicit RunStore(sqlite3* db, std::filesystem::path path);
  sqlite3* db_;
  std::filesystem::path path_;
};

/// The default store: $KSMITH_DB, else <cache directory>/runs.db.
Result<std::filesystem::path> DefaultStorePath();

}  // namespace ksmith
