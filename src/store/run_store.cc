#include "store/run_store.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"
#include "eval/verdict.h"
#include "store/database.h"
#include "store/migrations.h"
#include "store/stored_json.h"

namespace ksmith {

std::string NowUtcIso8601() {
  const auto now = std::chrono::system_clock::now();
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm parts {};
  gmtime_r(&seconds, &parts);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", parts.tm_year + 1900, parts.tm_mon + 1,
                     parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, ms % 1000);
}

namespace {

namespace fs = std::filesystem;

// How long a writer waits for another process's write to finish before giving up. Writes are
// single small transactions, so waiting this long means the other process is stuck.
constexpr int kBusyTimeoutMs = 5000;
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

// Prompts quote compiler logs and models answer with anything: a byte that is not UTF-8 must
// not lose the record, so it is replaced instead of throwing.
std::string DumpJson(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* PassedStatus() { return VerdictStatusName(VerdictStatus::kPassed); }

// SQLite reads lazily and would report "file is not a database" from whichever statement comes
// first; checking the header up front gives one clear message.
Status CheckLooksLikeSqlite(const fs::path& path) {
  std::error_code error;
  if (!fs::exists(path, error) || fs::is_directory(path, error) || fs::file_size(path, error) == 0) return {};
  std::ifstream in(path, std::ios::binary);
  std::array<char, 16> header{};
  in.read(header.data(), header.size());
  if (in.gcount() == static_cast<std::streamsize>(header.size()) &&
      std::string_view(header.data(), header.size()) == kSqliteMagic) {
    return {};
  }
  return MakeError(ErrorKind::kInvalidArgument,
                   "{}: not an SQLite database, so not a ksmith run store (move it away, or set KSMITH_DB "
                   "to another file)",
                   path.string());
}

// A file another program made must not get our tables added to it.
Status CheckIsOurs(const Database& database) {
  auto application_id = database.QueryInt("PRAGMA application_id");
  if (!application_id.ok()) return application_id.error();
  if (*application_id == kRunStoreApplicationId) return {};
  if (*application_id != 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "{}: an SQLite database of another program (application_id {}), not a ksmith run store",
                     database.path().string(), *application_id);
  }
  auto version = SchemaVersion(database);
  if (!version.ok()) return version.error();
  auto objects = database.QueryInt("SELECT COUNT(*) FROM sqlite_schema");
  if (!objects.ok()) return objects.error();
  if (*version == 0 && *objects > 0) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "{}: an SQLite database with tables of its own, not a ksmith run store",
                     database.path().string());
  }
  return {};
}

Error UnknownRun(const Database& database, const std::string& run_id) {
  return MakeError(ErrorKind::kNotFound, "no run '{}' in {}; `ksmith runs list --db {}` lists the runs it holds",
                   run_id, database.path().string(), database.path().string());
}

Status CheckRunExists(const Database& database, const std::string& run_id) {
  auto count = database.QueryInt("SELECT COUNT(*) FROM runs WHERE id = ?", {run_id});
  if (!count.ok()) return count.error();
  if (*count == 0) return UnknownRun(database, run_id);
  return {};
}

// Candidates and calls point only within their run: a resume must never mix two runs' rows.
Status CheckBelongsToRun(const Database& database, std::string_view table, std::string_view noun, int64_t id,
                         const std::string& run_id) {
  auto owner = database.Query(fmt::format("SELECT run_id FROM {} WHERE id = ?", table), {id});
  if (!owner.ok()) return owner.error();
  auto row = owner->Step();
  if (!row.ok()) return row.error();
  if (!*row) return MakeError(ErrorKind::kNotFound, "no {} {} in {}", noun, id, database.path().string());
  if (owner->Text(0) != run_id) {
    return MakeError(ErrorKind::kInvalidArgument, "{} {} belongs to run '{}', not '{}'", noun, id, owner->Text(0),
                     run_id);
  }
  return {};
}

Result<int64_t> NextSequence(const Database& database, std::string_view table, const std::string& run_id) {
  return database.QueryInt(fmt::format("SELECT COALESCE(MAX(sequence) + 1, 0) FROM {} WHERE run_id = ?", table),
                           {run_id});
}

// The median speedup of `ksmith eval --json`: "speedup" at the top, or timing.speedup.median.
std::optional<double> SpeedupOf(const nlohmann::json& verdict) {
  if (verdict.contains("speedup") && verdict["speedup"].is_number()) return verdict["speedup"].get<double>();
  const auto timing = verdict.value("timing", nlohmann::json::object());
  if (!timing.is_object() || !timing.contains("speedup") || !timing["speedup"].is_object()) return std::nullopt;
  const auto median = timing["speedup"].value("median", nlohmann::json());
  if (median.is_number()) return median.get<double>();
  return std::nullopt;
}

// Columns 0-11 are the run's own; 12-17 the totals; 18-20 its owner. `?1` is the passed status.
constexpr std::string_view kSelectRuns = R"sql(
SELECT r.id, t.name, r.backend, r.strategy, r.provider, r.model, r.config, r.status, r.stop_reason,
       r.created_at, r.finished_at, r.best_candidate_id,
       (SELECT COUNT(*) FROM candidates c JOIN verdicts v ON v.candidate_id = c.id WHERE c.run_id = r.id),
       (SELECT COUNT(*) FROM candidates c JOIN verdicts v ON v.candidate_id = c.id
         WHERE c.run_id = r.id AND v.status = ?1),
       (SELECT COUNT(*) FROM llm_calls l WHERE l.run_id = r.id),
       (SELECT COALESCE(SUM(l.input_tokens + l.output_tokens), 0) FROM llm_calls l WHERE l.run_id = r.id),
       (SELECT COALESCE(SUM(l.cost_dollars), 0.0) FROM llm_calls l WHERE l.run_id = r.id),
       (SELECT MAX(v.speedup) FROM candidates c JOIN verdicts v ON v.candidate_id = c.id
         WHERE c.run_id = r.id AND v.status = ?1),
       r.owner_host, r.owner_pid, r.owner_start_ticks, r.activity
FROM runs r JOIN tasks t ON t.id = r.task_id
)sql";

Result<RunRecord> ReadRunRow(const Database& database, const Statement& row) {
  RunRecord run;
  run.id = row.Text(0);
  run.task = row.Text(1);
  run.backend = row.Text(2);
  run.strategy = row.Text(3);
  run.provider = row.Text(4);
  run.model = row.Text(5);
  auto config = ParseStoredJson(database.path(), row.Text(6), fmt::format("run {}: its settings (runs.config)", run.id),
                                nlohmann::json::value_t::object);
  if (!config.ok()) return config.error();
  run.config = std::move(config).value();
  run.status = row.Text(7);
  run.stop_reason = row.Text(8);
  run.created_at = row.Text(9);
  run.finished_at = row.Text(10);
  run.best_candidate_id = row.OptionalInt(11);
  run.candidates = row.Int(12);
  run.passed = row.Int(13);
  run.llm_calls = row.Int(14);
  run.tokens = row.Int(15);
  run.cost_dollars = row.Double(16);
  run.best_speedup = row.OptionalDouble(17);
  run.owner = {row.Text(18), row.Int(19), row.Int(20)};
  auto activity = ParseStoredJson(database.path(), row.Text(21), fmt::format("run {}: its activity (runs.activity)", run.id),
                                  nlohmann::json::value_t::object);
  if (!activity.ok()) return activity.error();
  run.activity = std::move(activity).value();
  return run;
}

}  // namespace

Result<std::unique_ptr<Database>> OpenStoreDatabase(const fs::path& path) {
  if (Status sqlite = CheckLooksLikeSqlite(path); !sqlite.ok()) return sqlite.error();
  auto opened = Database::Open(path);
  if (!opened.ok()) return opened.error();
  std::unique_ptr<Database> database = std::move(opened).value();
  // First: every statement after this may have to wait for another process's lock.
  if (Status busy = database->Execute(fmt::format("PRAGMA busy_timeout = {}", kBusyTimeoutMs)); !busy.ok()) {
    return busy.error();
  }
  if (Status ours = CheckIsOurs(*database); !ours.ok()) return ours.error();
  auto journal_mode = database->QueryText("PRAGMA journal_mode = WAL");
  if (!journal_mode.ok()) return journal_mode.error();
  if (*journal_mode != "wal") {
    return MakeError(ErrorKind::kIo, "{}: cannot switch to WAL mode (the journal mode stays '{}'); is it on a "
                     "network file system?", path.string(), *journal_mode);
  }
  // FULL, not NORMAL: with NORMAL a power loss may drop the last commits, and a resumed run
  // must find everything that finished.
  for (const char* pragma : {"PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON"}) {
    if (Status set = database->Execute(pragma); !set.ok()) return set.error();
  }
  auto version = ApplyMigrations(*database, RunStoreMigrations());
  if (!version.ok()) return version.error();
  return database;
}

Result<std::unique_ptr<RunStore>> RunStore::Open(const fs::path& path) {
  auto database = OpenStoreDatabase(path);
  if (!database.ok()) return database.error();
  auto version = SchemaVersion(**database);
  if (!version.ok()) return version.error();
  return std::unique_ptr<RunStore>(new RunStore(std::move(database).value(), *version));
}

RunStore::RunStore(std::unique_ptr<Database> database, int schema_version)
    : database_(std::move(database)), schema_version_(schema_version) {}

RunStore::~RunStore() = default;

std::string RunStore::NewRunId() {
  const time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  struct tm parts {};
  gmtime_r(&now, &parts);
  std::random_device random;
  const uint32_t suffix = random() & 0xffffffu;
  return fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}-{:06x}", parts.tm_year + 1900, parts.tm_mon + 1,
                     parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, suffix);
}

int RunStore::schema_version() const { return schema_version_; }

Status RunStore::CheckWritable() const {
  std::lock_guard lock(mutex_);
  if (!database_->ReadOnly()) return {};
  return MakeError(ErrorKind::kInvalidArgument,
                   "the run store {}: the file is read-only to ksmith; make both it and its folder writable (chmod "
                   "u+w), or pass --db with a store in a folder you can write",
                   database_->path().string());
}

Status RunStore::CreateRun(const RunRecord& run, const std::string& task_toml) {
  if (run.id.empty()) return MakeError(ErrorKind::kInvalidArgument, "a run needs an id (RunStore::NewRunId)");
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  auto existing = database.QueryInt("SELECT COUNT(*) FROM runs WHERE id = ?", {run.id});
  if (!existing.ok()) return existing.error();
  if (*existing > 0) {
    return MakeError(ErrorKind::kInvalidArgument, "run '{}' already exists in {}", run.id, database.path().string());
  }
  const std::string now = NowUtcIso8601();
  const ProcessOwner owner = ProcessOwner::Current();
  const std::string task_hash = Sha256Hex(task_toml);
  if (Status task = database.Execute(
          "INSERT OR IGNORE INTO tasks (name, toml, toml_sha256, created_at) VALUES (?, ?, ?, ?)",
          {run.task, task_toml, task_hash, now});
      !task.ok()) {
    return task;
  }
  auto task_id = database.QueryInt("SELECT id FROM tasks WHERE name = ? AND toml_sha256 = ?", {run.task, task_hash});
  if (!task_id.ok()) return task_id.error();
  if (Status inserted = database.Execute(
          "INSERT INTO runs (id, task_id, backend, strategy, provider, model, config, status, stop_reason, "
          "created_at, finished_at, best_candidate_id, owner_host, owner_pid, owner_start_ticks) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?)",
          {run.id, *task_id, run.backend, run.strategy, run.provider, run.model, DumpJson(run.config),
           run.status.empty() ? std::string("running") : run.status, run.stop_reason,
           run.created_at.empty() ? now : run.created_at, SqlOptional(run.best_candidate_id), owner.host, owner.pid,
           owner.start_ticks});
      !inserted.ok()) {
    return inserted;
  }
  return transaction->Commit();
}

Status RunStore::FinishRun(const std::string& run_id, const std::string& status, const std::string& stop_reason,
                           std::optional<int64_t> best_candidate_id) {
  if (status != "finished" && status != "failed" && status != "stopped") {
    return MakeError(ErrorKind::kInvalidArgument, "a run ends 'finished', 'failed' or 'stopped', not '{}'", status);
  }
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  if (Status exists = CheckRunExists(database, run_id); !exists.ok()) return exists;
  if (best_candidate_id) {
    if (Status own = CheckBelongsToRun(database, "candidates", "candidate", *best_candidate_id, run_id); !own.ok()) {
      return own;
    }
  }
  if (Status updated = database.Execute(
          "UPDATE runs SET status = ?, stop_reason = ?, finished_at = ?, best_candidate_id = ? WHERE id = ?",
          {status, stop_reason, NowUtcIso8601(), SqlOptional(best_candidate_id), run_id});
      !updated.ok()) {
    return updated;
  }
  return transaction->Commit();
}

Status RunStore::SetProfile(int64_t candidate_id, const nlohmann::json& verdict) {
  std::lock_guard lock(mutex_);
  auto found = database_->QueryInt("SELECT COUNT(*) FROM candidates WHERE id = ?", {candidate_id});
  if (!found.ok()) return found.error();
  if (*found == 0) return MakeError(ErrorKind::kNotFound, "no candidate {} in {}", candidate_id, database_->path().string());
  return database_->Execute("INSERT OR REPLACE INTO profiles (candidate_id, verdict, profiled_at) VALUES (?, ?, ?)",
                            {candidate_id, DumpJson(verdict), NowUtcIso8601()});
}

Result<std::map<int64_t, nlohmann::json>> RunStore::Profiles(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  auto statement = database_->Query(
      "SELECT p.candidate_id, p.verdict FROM profiles p JOIN candidates c ON c.id = p.candidate_id WHERE c.run_id = ?",
      {run_id});
  if (!statement.ok()) return statement.error();
  std::map<int64_t, nlohmann::json> profiles;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    const int64_t id = statement->Int(0);
    auto verdict = ParseStoredJson(database_->path(), statement->Text(1),
                                   fmt::format("candidate {}: its profiled verdict (profiles.verdict)", id),
                                   nlohmann::json::value_t::object);
    if (!verdict.ok()) return verdict.error();
    profiles[id] = std::move(verdict).value();
  }
  return profiles;
}

namespace {

// Checks and inserts one intervention; the caller holds the store's lock and a transaction.
Result<int64_t> InsertIntervention(Database& database, const InterventionRecord& intervention) {
  static const std::set<std::string> kActions = {"approve", "edit", "constrain", "rollback", "stop"};
  if (!kActions.contains(intervention.action)) {
    return MakeError(ErrorKind::kInvalidArgument, "'{}' is not an intervention (approve, edit, constrain, rollback, stop)",
                     intervention.action);
  }
  if (!intervention.detail.is_object()) return MakeError(ErrorKind::kInvalidArgument, "an intervention's detail is a JSON object");
  const std::string& run_id = intervention.run_id;
  if (Status exists = CheckRunExists(database, run_id); !exists.ok()) return exists.error();
  for (const auto& [table, noun, id] : {std::tuple{"llm_calls", "LLM call", intervention.llm_call_id},
                                        std::tuple{"candidates", "candidate", intervention.candidate_id}}) {
    if (!id) continue;
    if (Status own = CheckBelongsToRun(database, table, noun, *id, run_id); !own.ok()) return own.error();
  }
  auto sequence = NextSequence(database, "interventions", run_id);
  if (!sequence.ok()) return sequence.error();
  if (Status inserted = database.Execute(
          "INSERT INTO interventions (run_id, sequence, action, llm_call_id, candidate_id, attempts_before, detail, "
          "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          {run_id, *sequence, intervention.action, SqlOptional(intervention.llm_call_id),
           SqlOptional(intervention.candidate_id), intervention.attempts_before, DumpJson(intervention.detail),
           intervention.created_at.empty() ? NowUtcIso8601() : intervention.created_at});
      !inserted.ok()) {
    return inserted.error();
  }
  return database.LastInsertRowId();
}

}  // namespace

Result<int64_t> RunStore::AddIntervention(const InterventionRecord& intervention) {
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  auto id = InsertIntervention(database, intervention);
  if (!id.ok()) return id.error();
  if (Status committed = transaction->Commit(); !committed.ok()) return committed.error();
  return id;
}

Result<std::vector<InterventionRecord>> RunStore::Interventions(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  if (Status exists = CheckRunExists(*database_, run_id); !exists.ok()) return exists.error();
  auto statement = database_->Query(
      "SELECT id, sequence, action, llm_call_id, candidate_id, attempts_before, detail, created_at "
      "FROM interventions WHERE run_id = ? ORDER BY sequence",
      {run_id});
  if (!statement.ok()) return statement.error();
  std::vector<InterventionRecord> interventions;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) return interventions;
    const Statement& r = *statement;
    InterventionRecord record;
    record.id = r.Int(0);
    record.run_id = run_id;
    record.sequence = r.Int(1);
    record.action = r.Text(2);
    record.llm_call_id = r.OptionalInt(3);
    record.candidate_id = r.OptionalInt(4);
    record.attempts_before = r.Int(5);
    auto detail = ParseStoredJson(database_->path(), r.Text(6),
                                  fmt::format("intervention {} of run {}: its detail", record.id, run_id),
                                  nlohmann::json::value_t::object);
    if (!detail.ok()) return detail.error();
    record.detail = std::move(detail).value();
    record.created_at = r.Text(7);
    interventions.push_back(std::move(record));
  }
}

Status RunStore::SetRunActivity(const std::string& run_id, const nlohmann::json& activity) {
  if (!activity.is_object()) return MakeError(ErrorKind::kInvalidArgument, "a run's activity is a JSON object");
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  if (Status exists = CheckRunExists(database, run_id); !exists.ok()) return exists;
  return database.Execute("UPDATE runs SET activity = ? WHERE id = ?", {activity.dump(), run_id});
}

Status RunStore::ReopenRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  // The check and the claim in one write transaction: of two resumes at once, the second sees
  // the first's claim.
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  auto run = ReadRun(run_id);
  if (!run.ok()) return run.error();
  const ProcessOwner self = ProcessOwner::Current();
  if (run->status == "running" && !(run->owner == self)) {
    switch (run->owner.Check()) {
      case ProcessOwner::Liveness::kAlive:
        // Since when the owner has had the run: its process's start (a resume takes the run over
        // at once), not the run's creation, which may be days before.
        return MakeError(ErrorKind::kInvalidArgument,
                         "run {} is being run by {}, a process running since {}; wait for it to end, or stop it "
                         "(kill {}) and resume again",
                         run_id, run->owner.Describe(), run->owner.StartedAt(), run->owner.pid);
      case ProcessOwner::Liveness::kElsewhere:
        return MakeError(ErrorKind::kInvalidArgument,
                         "run {} is marked running by {}, which cannot be checked from here; resume it on that host, "
                         "or once that process is surely gone",
                         run_id, run->owner.Describe());
      case ProcessOwner::Liveness::kGone:
      case ProcessOwner::Liveness::kUnknown:
        break;  // killed, or from before owners were recorded: taken over
    }
  }
  if (Status updated = database.Execute(
          "UPDATE runs SET status = 'running', stop_reason = '', finished_at = '', owner_host = ?, owner_pid = ?, "
          "owner_start_ticks = ? WHERE id = ?",
          {self.host, self.pid, self.start_ticks, run_id});
      !updated.ok()) {
    return updated;
  }
  return transaction->Commit();
}

Result<int64_t> RunStore::AddLlmCall(const std::string& run_id, const LlmCall& call) {
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  if (Status exists = CheckRunExists(database, run_id); !exists.ok()) return exists.error();
  auto sequence = NextSequence(database, "llm_calls", run_id);
  if (!sequence.ok()) return sequence.error();
  const std::optional<ChatReply>& reply = call.reply;
  SqlValue no_reply = nullptr;
  if (Status inserted = database.Execute(
          "INSERT INTO llm_calls (run_id, sequence, provider, model, role, request, response_body, http_status, "
          "attempts, latency_s, cached, reply_content, reply_finish_reason, reply_input_tokens, "
          "reply_output_tokens, error, provider_exhausted, input_tokens, output_tokens, cost_dollars, created_at, "
          "retry_reasons) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {run_id, *sequence, call.provider, call.model, call.role, DumpJson(call.request), call.response_body,
           int64_t{call.http_status}, int64_t{call.attempts}, call.latency_s, int64_t{call.cached ? 1 : 0},
           reply ? SqlValue(reply->content) : no_reply, reply ? SqlValue(reply->finish_reason) : no_reply,
           reply ? SqlValue(reply->input_tokens) : no_reply, reply ? SqlValue(reply->output_tokens) : no_reply,
           call.error, int64_t{call.provider_exhausted ? 1 : 0}, call.input_tokens, call.output_tokens,
           call.cost_dollars, NowUtcIso8601(), DumpJson(nlohmann::json(call.retry_reasons))});
      !inserted.ok()) {
    return inserted.error();
  }
  const int64_t id = database.LastInsertRowId();
  if (Status committed = transaction->Commit(); !committed.ok()) return committed.error();
  return id;
}

Result<int64_t> RunStore::AddCandidate(const CandidateRecord& candidate, int64_t* sequence_out,
                                       const InterventionRecord* decision) {
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  const std::string& run_id = candidate.run_id;
  if (Status exists = CheckRunExists(database, run_id); !exists.ok()) return exists.error();
  if (candidate.parent_id) {
    if (Status own = CheckBelongsToRun(database, "candidates", "candidate", *candidate.parent_id, run_id); !own.ok()) {
      return own.error();
    }
  }
  if (candidate.llm_call_id) {
    if (Status own = CheckBelongsToRun(database, "llm_calls", "LLM call", *candidate.llm_call_id, run_id); !own.ok()) {
      return own.error();
    }
  }
  auto sequence = NextSequence(database, "candidates", run_id);
  if (!sequence.ok()) return sequence.error();
  if (Status inserted = database.Execute(
          "INSERT INTO candidates (run_id, sequence, parent_id, origin, role, llm_call_id, source, "
          "extraction_error, knobs, explanation, created_at, job_id, search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {run_id, *sequence, SqlOptional(candidate.parent_id), candidate.origin, candidate.role,
           SqlOptional(candidate.llm_call_id), candidate.source, candidate.extraction_error,
           DumpJson(candidate.knobs), candidate.explanation,
           candidate.created_at.empty() ? NowUtcIso8601() : candidate.created_at, candidate.job_id,
           DumpJson(candidate.search)});
      !inserted.ok()) {
    return inserted.error();
  }
  const int64_t id = database.LastInsertRowId();
  if (decision != nullptr) {
    InterventionRecord made = *decision;
    made.run_id = run_id;
    made.candidate_id = id;
    if (auto added = InsertIntervention(database, made); !added.ok()) return added.error();
  }
  if (Status committed = transaction->Commit(); !committed.ok()) return committed.error();
  if (sequence_out != nullptr) *sequence_out = *sequence;
  return id;
}

Status RunStore::AddVerdict(int64_t candidate_id, const nlohmann::json& verdict) {
  if (!verdict.is_object() || !verdict.contains("status") || !verdict["status"].is_string()) {
    return MakeError(ErrorKind::kInvalidArgument, "the verdict for candidate {} has no string 'status'", candidate_id);
  }
  const std::string status = verdict["status"].get<std::string>();
  std::lock_guard lock(mutex_);
  Database& database = *database_;
  auto transaction = Transaction::Begin(database);
  if (!transaction.ok()) return transaction.error();
  auto candidate = database.Query("SELECT extraction_error FROM candidates WHERE id = ?", {candidate_id});
  if (!candidate.ok()) return candidate.error();
  auto found = candidate->Step();
  if (!found.ok()) return found.error();
  if (!*found) {
    return MakeError(ErrorKind::kNotFound, "no candidate {} in {}", candidate_id, database.path().string());
  }
  if (const std::string extraction_error = candidate->Text(0); !extraction_error.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "candidate {} has no kernel to evaluate ({})", candidate_id,
                     extraction_error);
  }
  auto earlier = database.Query("SELECT status, evaluated_at FROM verdicts WHERE candidate_id = ?", {candidate_id});
  if (!earlier.ok()) return earlier.error();
  auto has_earlier = earlier->Step();
  if (!has_earlier.ok()) return has_earlier.error();
  if (*has_earlier) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "candidate {} already has a verdict ({}, evaluated at {}); a finished evaluation is never "
                     "redone or overwritten",
                     candidate_id, earlier->Text(0), earlier->Text(1));
  }
  if (Status inserted = database.Execute(
          "INSERT INTO verdicts (candidate_id, status, speedup, verdict, evaluated_at) VALUES (?, ?, ?, ?, ?)",
          {candidate_id, status, SqlOptional(SpeedupOf(verdict)), DumpJson(verdict), NowUtcIso8601()});
      !inserted.ok()) {
    return inserted;
  }
  return transaction->Commit();
}

Result<RunRecord> RunStore::ReadRun(const std::string& run_id) const {
  auto statement = database_->Query(std::string(kSelectRuns) + " WHERE r.id = ?2", {PassedStatus(), run_id});
  if (!statement.ok()) return statement.error();
  auto row = statement->Step();
  if (!row.ok()) return row.error();
  if (!*row) return UnknownRun(*database_, run_id);
  return ReadRunRow(*database_, *statement);
}

Result<std::vector<RunRecord>> RunStore::ListRuns() const {
  std::lock_guard lock(mutex_);
  // rowid breaks ties between runs created within one millisecond: the later insert is newer.
  auto statement =
      database_->Query(std::string(kSelectRuns) + " ORDER BY r.created_at DESC, r.rowid DESC", {PassedStatus()});
  if (!statement.ok()) return statement.error();
  std::vector<RunRecord> runs;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) return runs;
    auto run = ReadRunRow(*database_, *statement);
    if (!run.ok()) return run.error();
    runs.push_back(std::move(run).value());
  }
}

Result<RunRecord> RunStore::GetRun(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  return ReadRun(run_id);
}

namespace {

constexpr const char* kCandidateColumns =
    "SELECT c.id, c.run_id, c.sequence, c.parent_id, c.origin, c.role, c.llm_call_id, c.source, "
    "c.extraction_error, c.knobs, c.explanation, c.created_at, v.status, v.speedup, v.verdict, c.job_id, c.search "
    "FROM candidates c LEFT JOIN verdicts v ON v.candidate_id = c.id ";

// One row of kCandidateColumns; a JSON column that reads back wrong is a damaged store.
Result<CandidateRecord> CandidateFromRow(const Statement& r, const fs::path& database_path) {
  CandidateRecord candidate;
  candidate.id = r.Int(0);
  candidate.run_id = r.Text(1);
  candidate.sequence = r.Int(2);
  candidate.parent_id = r.OptionalInt(3);
  candidate.origin = r.Text(4);
  candidate.role = r.Text(5);
  candidate.llm_call_id = r.OptionalInt(6);
  candidate.source = r.Text(7);
  candidate.extraction_error = r.Text(8);
  const std::string what = fmt::format("candidate {} of run {}", candidate.id, candidate.run_id);
  auto knobs = ParseStoredJson(database_path, r.Text(9), what + ": its knobs", nlohmann::json::value_t::object);
  if (!knobs.ok()) return knobs.error();
  candidate.knobs = std::move(knobs).value();
  candidate.explanation = r.Text(10);
  candidate.created_at = r.Text(11);
  candidate.job_id = r.Text(15);
  auto search = ParseStoredJson(database_path, r.Text(16), what + ": its search placement", nlohmann::json::value_t::object);
  if (!search.ok()) return search.error();
  candidate.search = std::move(search).value();
  if (auto verdict_status = r.OptionalText(12)) {
    candidate.status = *verdict_status;
    candidate.speedup = r.OptionalDouble(13);
    auto verdict = ParseStoredVerdict(database_path, r.Text(14), what + ": its verdict");
    if (!verdict.ok()) return verdict.error();
    candidate.verdict = std::move(verdict).value();
  } else {
    candidate.status = candidate.extraction_error.empty() ? "pending" : "extraction_failed";
  }
  return candidate;
}

}  // namespace

Result<std::vector<CandidateRecord>> RunStore::Candidates(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  if (Status exists = CheckRunExists(*database_, run_id); !exists.ok()) return exists.error();
  auto statement = database_->Query(std::string(kCandidateColumns) + "WHERE c.run_id = ? ORDER BY c.sequence", {run_id});
  if (!statement.ok()) return statement.error();
  std::vector<CandidateRecord> candidates;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) return candidates;
    auto candidate = CandidateFromRow(*statement, database_->path());
    if (!candidate.ok()) return candidate.error();
    candidates.push_back(std::move(candidate.value()));
  }
}

Result<std::optional<CandidateRecord>> RunStore::CandidateByJobId(const std::string& job_id) const {
  if (job_id.empty()) return std::optional<CandidateRecord>();
  std::lock_guard lock(mutex_);
  auto statement =
      database_->Query(std::string(kCandidateColumns) + "WHERE c.job_id = ? ORDER BY c.id DESC LIMIT 1", {job_id});
  if (!statement.ok()) return statement.error();
  auto row = statement->Step();
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<CandidateRecord>();
  auto candidate = CandidateFromRow(*statement, database_->path());
  if (!candidate.ok()) return candidate.error();
  return std::optional<CandidateRecord>(std::move(candidate.value()));
}

Result<std::vector<LlmCallRecord>> RunStore::LlmCalls(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  if (Status exists = CheckRunExists(*database_, run_id); !exists.ok()) return exists.error();
  auto statement = database_->Query(
      "SELECT id, run_id, sequence, provider, model, role, request, response_body, http_status, attempts, "
      "latency_s, cached, reply_content, reply_finish_reason, reply_input_tokens, reply_output_tokens, error, "
      "provider_exhausted, input_tokens, output_tokens, cost_dollars, created_at, retry_reasons "
      "FROM llm_calls WHERE run_id = ? ORDER BY sequence",
      {run_id});
  if (!statement.ok()) return statement.error();
  std::vector<LlmCallRecord> calls;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) return calls;
    const Statement& r = *statement;
    LlmCallRecord record;
    record.id = r.Int(0);
    record.run_id = r.Text(1);
    record.sequence = r.Int(2);
    LlmCall& call = record.call;
    call.provider = r.Text(3);
    call.model = r.Text(4);
    call.role = r.Text(5);
    const std::string what = fmt::format("model call {} of run {}", record.id, run_id);
    auto request = ParseStoredJson(database_->path(), r.Text(6), what + ": its request", nlohmann::json::value_t::object);
    if (!request.ok()) return request.error();
    call.request = std::move(request).value();
    call.response_body = r.Text(7);
    call.http_status = static_cast<int>(r.Int(8));
    call.attempts = static_cast<int>(r.Int(9));
    call.latency_s = r.Double(10);
    call.cached = r.Int(11) != 0;
    if (auto content = r.OptionalText(12)) {
      call.reply = ChatReply{*content, r.Text(13), r.Int(14), r.Int(15)};
    }
    call.error = r.Text(16);
    call.provider_exhausted = r.Int(17) != 0;
    call.input_tokens = r.Int(18);
    call.output_tokens = r.Int(19);
    call.cost_dollars = r.Double(20);
    record.created_at = r.Text(21);
    auto reasons =
        ParseStoredJson(database_->path(), r.Text(22), what + ": its retry reasons", nlohmann::json::value_t::array);
    if (!reasons.ok()) return reasons.error();
    for (const auto& reason : *reasons) {
      if (reason.is_string()) call.retry_reasons.push_back(reason.get<std::string>());
    }
    calls.push_back(std::move(record));
  }
}

Result<std::string> RunStore::TaskToml(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  auto toml = database_->QueryText("SELECT t.toml FROM runs r JOIN tasks t ON t.id = r.task_id WHERE r.id = ?",
                                   {run_id});
  if (!toml.ok() && toml.error().kind == ErrorKind::kNotFound) return UnknownRun(*database_, run_id);
  return toml;
}

Result<fs::path> DefaultStorePath() {
  if (const char* explicit_path = std::getenv("KSMITH_DB"); explicit_path && *explicit_path) {
    return fs::path(explicit_path);
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) return cache.error();
  return *cache / "runs.db";
}

Result<fs::path> StorePathFromFlag(const std::string& db_flag) {
  if (db_flag.empty()) return DefaultStorePath();
  const fs::path path(db_flag);
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--db {}: the folder {} does not exist; create it first (mkdir -p {}) or name a store in an "
                     "existing folder",
                     db_flag, folder.string(), folder.string());
  }
  // WAL needs its -wal and -shm files beside the store, readers too: a folder ksmith cannot write
  // is said here, with the cause, rather than as SQLite's "unable to open database file".
  if (Status writable = CheckWritableFolder(folder); !writable.ok()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--db {}: the folder {} cannot be written ({}); make it writable (chmod u+w {}) or name a store "
                     "in a folder you can write",
                     db_flag, folder.string(), writable.error().message, folder.string());
  }
  return path;
}

std::map<int64_t, int64_t> CandidateNumbers(const std::vector<CandidateRecord>& candidates) {
  std::map<int64_t, int64_t> numbers;
  for (const CandidateRecord& candidate : candidates) numbers[candidate.id] = candidate.number();
  return numbers;
}

std::string DisplayStatus(const RunRecord& run) {
  if (run.status == "running" && run.owner.Check() == ProcessOwner::Liveness::kGone) return "interrupted";
  return run.status;
}

}  // namespace ksmith
