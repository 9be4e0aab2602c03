// The run store: every run, prompt, response, candidate and verdict, in one SQLite file (WAL mode,
// versioned migrations). Each record is committed when it is made, so a run killed at any moment
// loses nothing that finished, and `optimize --resume` picks it up from here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/process_owner.h"
#include "llm/provider.h"

namespace ksmith {

class Database;

struct RunRecord {
  std::string id;          // "20261121-103512-3fa9c1": sortable, unique
  std::string task;
  std::string backend;     // "cpu" or "cuda"
  std::string strategy;    // "refine", "sample", "tune"
  std::string provider;    // "openai", "anthropic", "replay", "" for tune
  std::string model;
  nlohmann::json config = nlohmann::json::object();  // the settings the run started with (no keys)
  std::string status = "running";  // "running", "finished", "failed", "stopped" (interrupted; resumable)
  std::string stop_reason;         // why it ended ("budget: 20 candidates evaluated")
  std::string created_at;          // ISO 8601, UTC
  std::string finished_at;
  std::optional<int64_t> best_candidate_id;
  /// How the optimize loop spent its time, summed over the run's sessions (agent/activity_clock.h):
  /// {"wall_s", "evaluating_s", "proposing_s", "overlapped_s", "proposals", "proposals_while_evaluating"}.
  nlohmann::json activity = nlohmann::json::object();
  ProcessOwner owner;  // the process that created or last resumed it (set by the store)
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
  std::string job_id;             // the job id `ksmith serve` gave its client; empty elsewhere
  /// Where the strategy placed it: evolve's {"island", "generation", "operator", "parents"}; empty
  /// for strategies without a search structure.
  nlohmann::json search = nlohmann::json::object();
  // From its verdict, when evaluated (read-only here; AddVerdict sets them):
  std::optional<nlohmann::json> verdict;  // exactly what `ksmith eval --json` prints
  std::string status;                     // the verdict's status, "extraction_failed", or "pending"
  std::optional<double> speedup;          // the verdict's median speedup when timed

  /// 1, 2, 3... within the run: the one number people see for a candidate (progress, summary,
  /// report.md, `runs show`, export). `id` runs across every run in the store and stays internal.
  int64_t number() const { return sequence + 1; }
};

/// What the person did at one review of an interactive run (`ksmith optimize --interactive`).
struct InterventionRecord {
  int64_t id = 0;                        // assigned by the store
  std::string run_id;
  int64_t sequence = 0;                  // assigned by the store: 0, 1, 2... within the run
  std::string action;                    // "approve", "edit", "constrain", "rollback", "stop"
  std::optional<int64_t> llm_call_id;    // the call that proposed the kernel under review, if a model did
  std::optional<int64_t> candidate_id;   // the candidate the proposal became (approve, edit)
  int64_t attempts_before = 0;           // the run's candidates when it was done: where it falls among them
  /// constrain: {"constraint"}; edit: {"diff"} (unified, the proposal against the edit);
  /// rollback: {"to_candidate": its number, "set_aside": the proposal's source}; stop: {"set_aside"}.
  nlohmann::json detail = nlohmann::json::object();
  std::string created_at;                // assigned by the store when empty
};

/// Each candidate's store id mapped to its number in the run (CandidateRecord::number), to show a
/// parent by its number.
std::map<int64_t, int64_t> CandidateNumbers(const std::vector<CandidateRecord>& candidates);

/// Now as the store writes its timestamps: "2026-11-29T23:15:02.123Z".
std::string NowUtcIso8601();

/// The store's SQLite file opened as every reader of it needs: checked to be a ksmith store, WAL,
/// a busy timeout, full sync, foreign keys, and migrated to this build's schema. RunStore and
/// KnowledgeStore (store/knowledge_store.h) each hold a connection of their own.
Result<std::unique_ptr<Database>> OpenStoreDatabase(const std::filesystem::path& path);

/// Thread-safe: calls are serialized on one connection. Several processes may open the same file
/// (a running optimize and `ksmith runs list`): WAL lets readers read while one writes, and a
/// writer waits up to a busy timeout for another's write to end. Every Add/Create/Finish call is
/// one transaction, durable (synchronous=FULL) when it returns.
class RunStore {
 public:
  /// Opens or creates the file, switches to WAL, applies pending migrations. An unreadable file
  /// or one written by a newer ksmith is an error that says so.
  static Result<std::unique_ptr<RunStore>> Open(const std::filesystem::path& path);
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  /// A new sortable id from the time and randomness: "YYYYMMDD-HHMMSS-" (UTC) + 6 hex digits.
  static std::string NewRunId();
  /// The file's PRAGMA user_version after migrating: the number of schema steps applied.
  int schema_version() const;
  /// For a command that will write (optimize, bench), before it starts: a file SQLite opened
  /// read-only (it does so silently, and only the first write would fail) is kInvalidArgument,
  /// naming the file and the fix. Readers (runs, export) need no write.
  Status CheckWritable() const;

  /// Records the run and the task's definition (task.toml's text) it ran on; identical task
  /// texts are stored once. `run.id` must be new (kInvalidArgument otherwise); an empty
  /// created_at is set to now. The totals and finished_at are ignored.
  Status CreateRun(const RunRecord& run, const std::string& task_toml);
  /// `status` is "finished", "failed" or "stopped"; finished_at becomes now. `best_candidate_id` must be one
  /// of the run's candidates. kNotFound for an unknown run.
  Status FinishRun(const std::string& run_id, const std::string& status, const std::string& stop_reason,
                   std::optional<int64_t> best_candidate_id);
  /// Records the verdict of a candidate evaluated again under the profiler (replacing an earlier
  /// one). kNotFound for an unknown candidate.
  Status SetProfile(int64_t candidate_id, const nlohmann::json& verdict);
  /// The run's profiled verdicts by candidate id.
  Result<std::map<int64_t, nlohmann::json>> Profiles(const std::string& run_id) const;
  /// Replaces the run's activity (RunRecord::activity). kNotFound for an unknown run.
  Status SetRunActivity(const std::string& run_id, const nlohmann::json& activity);
  /// Back to "running" for a resume, owned by this process; clears finished_at and
  /// stop_reason. A run still "running" under a live owner (or one on another host, which
  /// nothing here can check) is refused with kInvalidArgument naming that owner: two processes
  /// never work on one run. One whose owner is gone (killed) is taken over.
  Status ReopenRun(const std::string& run_id);

  /// Records the call whole; returns its id. Its sequence is the run's next.
  Result<int64_t> AddLlmCall(const std::string& run_id, const LlmCall& call);
  /// A candidate without a verdict: it is evaluated next. Extraction failures are recorded with
  /// status "extraction_failed" and never evaluated. The store assigns id and sequence (the
  /// fields given are ignored) and created_at when empty; parent_id and llm_call_id must belong
  /// to the same run. Returns the id; `sequence_out`, when given, gets the sequence. `decision`,
  /// when given, is the person's approve or edit that made it (interactive runs): recorded in the
  /// same transaction, with the new candidate's id, so that neither is ever stored without the other.
  Result<int64_t> AddCandidate(const CandidateRecord& candidate, int64_t* sequence_out = nullptr,
                               const InterventionRecord* decision = nullptr);
  /// `verdict` is what `ksmith eval --json` prints: an object with a string "status", and
  /// "speedup" (the median) when it was timed. A second verdict for one candidate, or one for a
  /// candidate whose extraction failed, is kInvalidArgument; an unknown candidate is kNotFound.
  Status AddVerdict(int64_t candidate_id, const nlohmann::json& verdict);

  /// Records what the person did at a review; returns its id. llm_call_id and candidate_id must
  /// belong to the run; an action outside InterventionRecord's list is kInvalidArgument.
  Result<int64_t> AddIntervention(const InterventionRecord& intervention);
  Result<std::vector<InterventionRecord>> Interventions(const std::string& run_id) const;  // by sequence

  Result<std::vector<RunRecord>> ListRuns() const;  // newest first
  Result<RunRecord> GetRun(const std::string& run_id) const;  // kNotFound names the id
  Result<std::vector<CandidateRecord>> Candidates(const std::string& run_id) const;  // by sequence
  /// The candidate `ksmith serve` recorded for job `job_id` (the latest, should a job id repeat);
  /// nullopt when there is none.
  Result<std::optional<CandidateRecord>> CandidateByJobId(const std::string& job_id) const;
  Result<std::vector<LlmCallRecord>> LlmCalls(const std::string& run_id) const;      // by sequence
  Result<std::string> TaskToml(const std::string& run_id) const;

 private:
  RunStore(std::unique_ptr<Database> database, int schema_version);
  Result<RunRecord> ReadRun(const std::string& run_id) const;  // the caller holds mutex_

  mutable std::mutex mutex_;  // one connection, shared by the strategy's threads
  std::unique_ptr<Database> database_;  // guarded by mutex_
  int schema_version_ = 0;
};

/// The status to show: "interrupted" for a run still marked "running" whose owner is gone.
std::string DisplayStatus(const RunRecord& run);

/// The default store: $KSMITH_DB, else <cache directory>/runs.db.
Result<std::filesystem::path> DefaultStorePath();

/// The store a `--db` flag names, or DefaultStorePath() when it is empty. A path given by the
/// user must be in a folder that exists (a typo is not silently made into folders) and that
/// ksmith may write (WAL keeps files beside the store, for readers too); kInvalidArgument says
/// which folder, why and what to do.
Result<std::filesystem::path> StorePathFromFlag(const std::string& db_flag);

}  // namespace ksmith
