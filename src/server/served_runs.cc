#include "server/served_runs.h"

#include "core/files.h"

namespace ksmith {

Result<std::string> ServedRuns::RunFor(const Task& task, const std::string& backend) {
  const auto key = std::make_pair(task.name, backend);
  if (const auto found = runs_.find(key); found != runs_.end()) return found->second;
  auto toml = ReadFile(task.toml_path, size_t{1} << 20);
  if (!toml.ok()) return toml.error();
  RunRecord run;
  run.id = RunStore::NewRunId();
  run.task = task.name;
  run.backend = backend;
  run.strategy = "serve";
  run.config = {{"served_by", "ksmith serve"}};
  if (Status created = store_->CreateRun(run, *toml); !created.ok()) return created.error();
  runs_[key] = run.id;
  return run.id;
}

Result<int64_t> ServedRuns::AddJob(const Task& task, const std::string& backend, const std::string& job_id,
                                   const std::string& client, const std::string& source) {
  if (store_ == nullptr) return int64_t{0};
  std::lock_guard lock(mutex_);
  auto run = RunFor(task, backend);
  if (!run.ok()) return run.error();
  CandidateRecord candidate;
  candidate.run_id = *run;
  candidate.origin = "serve";
  candidate.role = client;
  candidate.source = source;
  candidate.job_id = job_id;
  return store_->AddCandidate(candidate);
}

Status ServedRuns::AddVerdict(int64_t candidate_id, const nlohmann::json& verdict) {
  if (store_ == nullptr || candidate_id == 0) return {};
  return store_->AddVerdict(candidate_id, verdict);
}

Result<std::optional<nlohmann::json>> ServedRuns::StoredJob(const std::string& job_id) {
  if (store_ == nullptr) return std::optional<nlohmann::json>();
  auto candidate = store_->CandidateByJobId(job_id);
  if (!candidate.ok()) return candidate.error();
  if (!candidate->has_value()) return std::optional<nlohmann::json>();
  const CandidateRecord& record = **candidate;
  auto run = store_->GetRun(record.run_id);
  if (!run.ok()) return run.error();
  nlohmann::json job = {{"id", job_id},
                        {"state", record.verdict ? "done" : "unfinished"},
                        {"task", run->task},
                        {"backend", run->backend},
                        {"submitted_at", record.created_at},
                        {"from_store", {{"run", record.run_id}, {"candidate", record.number()}}}};
  if (record.verdict) job["verdict"] = *record.verdict;
  return std::optional<nlohmann::json>(std::move(job));
}

void ServedRuns::FinishAll(const std::string& reason) {
  if (store_ == nullptr) return;
  std::lock_guard lock(mutex_);
  for (const auto& [key, run_id] : runs_) (void)store_->FinishRun(run_id, "finished", reason, std::nullopt);
  runs_.clear();
}

}  // namespace ksmith
