#include "store/migrations.h"

#include <fmt/format.h>

namespace ksmith {
namespace {

// Times are ISO 8601 UTC text ("2026-11-21T10:35:12.345Z"), JSON columns are JSON text, and
// booleans are 0/1. Empty text rather than NULL wherever the record's field is a plain string;
// NULL only where the record's field is optional.
// The application id is kRunStoreApplicationId ("ksmt") in decimal.
constexpr std::string_view kInitialSchema = R"sql(
PRAGMA application_id = 1802726772;

-- A task's definition as the run saw it; runs of an unchanged task.toml share one row.
CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  toml TEXT NOT NULL,
  toml_sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (name, toml_sha256)
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES tasks (id),
  backend TEXT NOT NULL,
  strategy TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  stop_reason TEXT NOT NULL,
  created_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  best_candidate_id INTEGER REFERENCES candidates (id)
);
CREATE INDEX runs_by_created_at ON runs (created_at);

-- Every LlmCall field. reply_* are NULL when no usable reply came.
CREATE TABLE llm_calls (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (id),
  sequence INTEGER NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  role TEXT NOT NULL,
  request TEXT NOT NULL,
  response_body TEXT NOT NULL,
  http_status INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  latency_s REAL NOT NULL,
  cached INTEGER NOT NULL,
  reply_content TEXT,
  reply_finish_reason TEXT,
  reply_input_tokens INTEGER,
  reply_output_tokens INTEGER,
  error TEXT NOT NULL,
  provider_exhausted INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cost_dollars REAL NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX llm_calls_by_run ON llm_calls (run_id, sequence);

CREATE TABLE candidates (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (id),
  sequence INTEGER NOT NULL,
  parent_id INTEGER REFERENCES candidates (id),
  origin TEXT NOT NULL,
  role TEXT NOT NULL,
  llm_call_id INTEGER REFERENCES llm_calls (id),
  source TEXT NOT NULL,
  extraction_error TEXT NOT NULL,
  knobs TEXT NOT NULL,
  explanation TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX candidates_by_run ON candidates (run_id, sequence);
CREATE INDEX candidates_by_parent ON candidates (parent_id);

-- At most one per candidate: a finished evaluation is never redone or overwritten.
CREATE TABLE verdicts (
  candidate_id INTEGER PRIMARY KEY REFERENCES candidates (id),
  status TEXT NOT NULL,
  speedup REAL,
  verdict TEXT NOT NULL,
  evaluated_at TEXT NOT NULL
);
)sql";

Status CheckNumbering(const std::vector<Migration>& migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return MakeError(ErrorKind::kInternal, "migration {} ('{}') is numbered {}; steps are numbered 1, 2, 3...",
                       i, migrations[i].description, migrations[i].version);
    }
  }
  return {};
}

}  // namespace

const std::vector<Migration>& RunStoreMigrations() {
  static const std::vector<Migration> migrations = {
      {1, "tasks, runs, llm_calls, candidates, verdicts", kInitialSchema},
      // The process that runs a run: a run left "running" by a killed process is told from one
      // still running, and a second resume of a running run is refused.
      {2, "runs: owner_host, owner_pid, owner_start_ticks",
       "ALTER TABLE runs ADD COLUMN owner_host TEXT NOT NULL DEFAULT '';\n"
       "ALTER TABLE runs ADD COLUMN owner_pid INTEGER NOT NULL DEFAULT 0;\n"
       "ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER NOT NULL DEFAULT 0;\n"},
      // Why each retried attempt of a model call failed, so that `runs show` and the report can say.
      {3, "llm_calls: retry_reasons", "ALTER TABLE llm_calls ADD COLUMN retry_reasons TEXT NOT NULL DEFAULT '[]';\n"},
      // A candidate that `ksmith serve` judged keeps the job id its client was given, so that a
      // served run's dataset can be joined with what the trainer recorded.
      {4, "candidates: job_id", "ALTER TABLE candidates ADD COLUMN job_id TEXT NOT NULL DEFAULT '';\n"
                                "CREATE INDEX candidates_job_id ON candidates(job_id);\n"},
      // Where a search placed a candidate (evolve: its island, generation, operator and parents),
      // so that a run's search is part of its dataset.
      {5, "candidates: search", "ALTER TABLE candidates ADD COLUMN search TEXT NOT NULL DEFAULT '{}';\n"},
      // How a run spent its time (seconds with evaluations in flight, with model calls in flight,
      // with both), so that `runs show` can say how busy the evaluator was while models wrote.
      {6, "runs: activity", "ALTER TABLE runs ADD COLUMN activity TEXT NOT NULL DEFAULT '{}';\n"},
      // The knowledge base (store/knowledge_store.h): notes on techniques and experience from runs,
      // searched by full text. Only title, body, tags and hardware are indexed.
      {7, "knowledge", "CREATE VIRTUAL TABLE knowledge USING fts5(title, body, tags, hardware, kind UNINDEXED, "
                       "origin UNINDEXED, created_at UNINDEXED, tokenize = 'porter unicode61');\n"},
      // A run's best kernels evaluated again under the profiler (the optimize loop's profiler
      // facts): the whole verdict of that evaluation, whose "profile" stage feeds the prompts.
      {8, "profiles", "CREATE TABLE profiles (candidate_id INTEGER PRIMARY KEY REFERENCES candidates (id), "
                      "verdict TEXT NOT NULL, profiled_at TEXT NOT NULL);\n"},
      // What the person did at each review of an interactive run (approve, edit, constrain, roll
      // back, stop), so that a resumed run keeps their constraints and a dataset shows their hand.
      {9, "interventions",
       "CREATE TABLE interventions (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id), "
       "sequence INTEGER NOT NULL, action TEXT NOT NULL, llm_call_id INTEGER REFERENCES llm_calls (id), "
       "candidate_id INTEGER REFERENCES candidates (id), attempts_before INTEGER NOT NULL, detail TEXT NOT NULL, "
       "created_at TEXT NOT NULL, UNIQUE (run_id, sequence));\n"},
  };
  return migrations;
}

Result<int> SchemaVersion(const Database& database) {
  auto version = database.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.error();
  return static_cast<int>(*version);
}

Result<int> ApplyMigrations(Database& database, const std::vector<Migration>& migrations) {
  if (Status numbered = CheckNumbering(migrations); !numbered.ok()) return numbered.error();
  const int latest = static_cast<int>(migrations.size());
  auto version = SchemaVersion(database);
  if (!version.ok()) return version.error();
  if (*version > latest) {
    return MakeError(ErrorKind::kUnsupported, "{}: written by a newer ksmith (schema {}, this build knows {})",
                     database.path().string(), *version, latest);
  }
  for (const Migration& migration : migrations) {
    if (migration.version <= *version) continue;
    auto transaction = Transaction::Begin(database);
    if (!transaction.ok()) return transaction.error();
    // Another process may have applied this step while we waited for the write lock.
    auto current = SchemaVersion(database);
    if (!current.ok()) return current.error();
    if (*current >= migration.version) {
      *version = *current;
      continue;  // the transaction rolls back: nothing was written in it
    }
    if (Status applied = database.ExecuteScript(migration.sql); !applied.ok()) {
      return MakeError(applied.error().kind, "schema step {} ({}): {}", migration.version, migration.description,
                       applied.error().message);
    }
    // PRAGMA takes no bound parameters; the version is our own integer.
    if (Status marked = database.Execute(fmt::format("PRAGMA user_version = {}", migration.version)); !marked.ok()) {
      return marked.error();
    }
    if (Status committed = transaction->Commit(); !committed.ok()) return committed.error();
    *version = migration.version;
  }
  return *version;
}

}  // namespace ksmith
