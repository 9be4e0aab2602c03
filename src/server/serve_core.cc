#include "server/serve_core.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/backend_registry.h"
#include "formats/format_registry.h"

namespace ksmith {

using json = nlohmann::json;

std::string NewJobId() {
  static std::mutex mutex;
  // Seeded with 256 bits: servers that share a broker must not draw the same ids.
  static std::mt19937_64 generator = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  std::lock_guard lock(mutex);
  return fmt::format("j-{:016x}", generator());
}

ServeCore::ServeCore(EvalService& service, ServedTasks& tasks, ServedRuns& runs, ServeConfig config)
    : service_(service),
      tasks_(tasks),
      runs_(runs),
      config_(std::move(config)),
      table_(config_.max_finished, config_.queued_per_client) {
  reader_ = std::thread([this] { ReadVerdicts(); });
}

ServeCore::~ServeCore() { StopReading(); }

void ServeCore::StopReading() {
  stopping_ = true;
  if (reader_.joinable()) reader_.join();
}

void ServeCore::ReadVerdicts() {
  while (!stopping_) {
    auto next = service_.NextVerdict(std::chrono::milliseconds(200));
    if (!next) continue;
    json verdict = next->verdict.ToJson();
    int64_t store_id = 0;
    {
      std::lock_guard lock(candidates_mutex_);
      if (const auto found = store_ids_.find(next->job_id); found != store_ids_.end()) {
        store_id = found->second;
        store_ids_.erase(found);
      }
    }
    // Stored before it is shown: a client that saw the verdict finds it in the store too.
    if (Status stored = runs_.AddVerdict(store_id, verdict); !stored.ok()) {
      std::fprintf(stderr, "ksmith serve: warning: the verdict of job %s was not stored: %s\n", next->job_id.c_str(),
                   stored.error().message.c_str());
    }
    table_.Finish(next->job_id, std::move(verdict));
  }
}

std::variant<ServeCore::Resolved, ApiError> ServeCore::Resolve(const CandidateRequest& candidate,
                                                               const std::string& where,
                                                               std::shared_ptr<const Task> task) {
  Resolved resolved;
  resolved.request = candidate;
  std::string& backend = resolved.request.backend;
  if (backend.empty()) backend = config_.backends.front();
  if (std::find(config_.backends.begin(), config_.backends.end(), backend) == config_.backends.end()) {
    return ApiError{422, "unknown_backend",
                    fmt::format("{}.backend: this server runs {}, not '{}'", where, fmt::join(config_.backends, ", "),
                                backend),
                    where + ".backend"};
  }
  if (!task) {
    auto found = tasks_.Find(candidate.task);
    if (!found.ok()) {
      const bool unknown = found.error().kind == ErrorKind::kNotFound || found.error().kind == ErrorKind::kInvalidArgument;
      return ApiError{unknown ? 404 : 500, unknown ? "unknown_task" : "task_unreadable",
                      fmt::format("{}.task: {}", where, found.error().message), where + ".task"};
    }
    task = *found;
  }
  resolved.task = task;
  const ModelFormat* format = nullptr;
  if (!candidate.format.empty()) {
    auto named = FormatRegistry::Global().Find(candidate.format);
    if (!named.ok()) {
      return ApiError{422, "unknown_format", fmt::format("{}.format: {}", where, named.error().message), where + ".format"};
    }
    format = *named;
  }
  std::string file_name = candidate.file_name;
  if (file_name.empty()) {
    // Named for the format that judges it: a KernelBench ModelNew is Python, ksmith's own the
    // backend's source.
    const bool python = format != nullptr && format->format().ClaimsPath("candidate.py");
    file_name = "candidate" + (python ? std::string(".py") : TraitsOf(backend).source_extension);
  }
  if (format == nullptr) format = &FormatRegistry::Global().ForPath(file_name);
  if (Status usable = format->CheckTask(*task); !usable.ok()) {
    return ApiError{422, "format_mismatch", fmt::format("{}: {}", where, usable.error().message), where};
  }
  if (Status runnable = service_.CanRun(*task, backend); !runnable.ok()) {
    return ApiError{422, "unsupported", fmt::format("{}: {}", where, runnable.error().message), where};
  }
  resolved.source.path = file_name;
  resolved.source.text = candidate.source;
  resolved.source.file_bytes = candidate.source.size();
  resolved.source.format = &format->format();
  return resolved;
}

std::variant<SubmittedJob, ApiError> ServeCore::Enqueue(const std::string& client, Resolved resolved) {
  const CandidateRequest& request = resolved.request;
  JobRecord record;
  record.id = NewJobId();
  record.client = client;
  record.client_id = request.client_id;
  record.task = resolved.task->name;
  record.backend = request.backend;
  const JobTable::Admitted admitted = table_.Add(record);
  if (admitted.admission == JobTable::Admission::kDuplicate) return SubmittedJob{admitted.id, true};
  auto store_id = runs_.AddJob(*resolved.task, request.backend, record.id, client, request.source);
  if (!store_id.ok()) {
    table_.Remove(record.id);
    return ApiError{500, "store_failed", fmt::format("the run store refused the job: {}", store_id.error().message), ""};
  }
  EvalJob job;
  job.id = record.id;
  job.task = resolved.task;
  job.backend = request.backend;
  job.candidate = std::move(resolved.source);
  job.options = config_.base_options;
  request.options.ApplyTo(job.options);
  JobTable* table = &table_;
  const std::string id = record.id;
  job.on_start = [table, id] { table->MarkStarted(id); };
  job.options.progress = [table, id](const std::string& line) { table->AddProgress(id, line); };
  {
    std::lock_guard lock(candidates_mutex_);
    store_ids_[id] = *store_id;
  }
  // The table's limits hold the queue's length, so the service never makes a handler wait long.
  auto submitted = service_.Submit(std::move(job), std::chrono::seconds(5));
  if (!submitted.ok()) {
    table_.Remove(id);
    std::lock_guard lock(candidates_mutex_);
    store_ids_.erase(id);
    return ApiError{503, "busy", fmt::format("the evaluation service did not take the job: {}", submitted.error().message), ""};
  }
  return SubmittedJob{id, false};
}

std::variant<std::vector<SubmittedJob>, ApiError> ServeCore::Submit(const std::string& client,
                                                                     const std::vector<CandidateRequest>& candidates) {
  if (!accepting_) return ApiError{503, "stopping", "the server is shutting down and takes no new jobs", ""};
  std::vector<Resolved> resolved;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string where = candidates.size() == 1 ? "body" : fmt::format("candidates[{}]", i);
    auto one = Resolve(candidates[i], where, nullptr);
    if (auto* error = std::get_if<ApiError>(&one)) return *error;
    resolved.push_back(std::move(std::get<Resolved>(one)));
  }
  const JobCounts counts = table_.Counts();
  if (counts.queued + counts.running + resolved.size() > config_.max_queued) {
    return ApiError{503, "busy", fmt::format("the server holds {} unfinished jobs, its limit is {}; retry later",
                                             counts.queued + counts.running, config_.max_queued), ""};
  }
  if (!table_.Reserve(client, resolved.size())) {
    return ApiError{429, "quota", fmt::format("client '{}' would have more than {} unfinished jobs; wait for some verdicts",
                                              client, config_.queued_per_client), ""};
  }
  std::vector<SubmittedJob> jobs;
  for (size_t i = 0; i < resolved.size(); ++i) {
    auto job = Enqueue(client, std::move(resolved[i]));
    if (auto* error = std::get_if<ApiError>(&job)) {
      // Jobs already queued stay queued (each has its id and will get its verdict); the rest's
      // room goes back.
      table_.Release(client, resolved.size() - i - 1);
      if (jobs.empty()) return *error;
      error->message += fmt::format(" (the request's first {} candidates were queued: ask for them by client_id)", i);
      return *error;
    }
    jobs.push_back(std::get<SubmittedJob>(job));
  }
  return jobs;
}

std::variant<SubmittedJob, ApiError> ServeCore::SubmitResolved(const std::string& client,
                                                              const CandidateRequest& candidate,
                                                              std::shared_ptr<const Task> task, bool replace) {
  if (!accepting_) return ApiError{503, "stopping", "the server is shutting down and takes no new jobs", ""};
  if (!replace) {
    if (auto earlier = table_.FindByClientId(client, candidate.client_id)) return SubmittedJob{*earlier, true};
  }
  auto resolved = Resolve(candidate, "body", std::move(task));
  if (auto* error = std::get_if<ApiError>(&resolved)) return *error;
  if (replace) table_.ForgetClientId(client, candidate.client_id);
  if (const JobCounts counts = table_.Counts(); counts.queued + counts.running + 1 > config_.max_queued) {
    return ApiError{503, "busy", fmt::format("the server holds {} unfinished jobs, its limit is {}; retry later",
                                             counts.queued + counts.running, config_.max_queued), ""};
  }
  if (!table_.Reserve(client, 1)) {
    return ApiError{429, "quota", fmt::format("client '{}' would have more than {} unfinished jobs; wait for some verdicts",
                                              client, config_.queued_per_client), ""};
  }
  return Enqueue(client, std::move(std::get<Resolved>(resolved)));
}

bool ServeCore::Drain(std::chrono::steady_clock::time_point deadline) {
  while (std::chrono::steady_clock::now() < deadline) {
    const JobCounts counts = table_.Counts();
    if (counts.queued + counts.running == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const JobCounts counts = table_.Counts();
  return counts.queued + counts.running == 0;
}

std::string ServeCore::MetricsText() {
  const JobCounts counts = table_.Counts();
  const ServiceStats stats = service_.Stats();
  std::string out;
  auto metric = [&out](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  metric("ksmith_jobs", "gauge", "Jobs this server accepted and has not finished, by state.");
  out += fmt::format("ksmith_jobs{{state=\"queued\"}} {}\nksmith_jobs{{state=\"running\"}} {}\n", counts.queued,
                     counts.running);
  metric("ksmith_queue_depth", "gauge", "Jobs waiting for a verification worker in the evaluation service.");
  out += fmt::format("ksmith_queue_depth {}\n", stats.queued);
  metric("ksmith_verdicts_total", "counter", "Verdicts given, by status.");
  for (const auto& [status, count] : counts.verdicts_by_status) {
    out += fmt::format("ksmith_verdicts_total{{status=\"{}\"}} {}\n", status, count);
  }
  metric("ksmith_verdict_latency_seconds", "histogram", "Seconds from a job's submission to its verdict.");
  for (size_t i = 0; i < counts.latency_bucket_count.size(); ++i) {
    const std::string bound = i < counts.latency_bucket_s.size() ? fmt::format("{}", counts.latency_bucket_s[i]) : "+Inf";
    out += fmt::format("ksmith_verdict_latency_seconds_bucket{{le=\"{}\"}} {}\n", bound, counts.latency_bucket_count[i]);
  }
  out += fmt::format("ksmith_verdict_latency_seconds_sum {}\nksmith_verdict_latency_seconds_count {}\n",
                     counts.latency_sum_s, counts.latency_count);
  metric("ksmith_builds_in_flight", "gauge", "Candidate builds running now and waiting for a compile slot.");
  out += fmt::format("ksmith_builds_in_flight{{phase=\"running\"}} {}\nksmith_builds_in_flight{{phase=\"waiting\"}} {}\n",
                     stats.builds_running, stats.builds_waiting);
  metric("ksmith_workers", "gauge", "Verification workers by device.");
  for (const auto& [device, workers] : stats.workers_by_device) {
    out += fmt::format("ksmith_workers{{device=\"{}\"}} {}\n", device, workers);
  }
  return out;
}

}  // namespace ksmith
