#include "server/job_table.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

namespace ksmith {
namespace {

using json = nlohmann::json;

// Seconds from submission to verdict: a cached CPU verdict takes one or two, a new KernelBench
// candidate's build a minute or more.
const std::vector<double> kLatencyBuckets = {0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800};

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued: return "queued";
    case JobState::kRunning: return "running";
    case JobState::kDone: return "done";
  }
  return "unknown";
}

std::string IsoTime(std::chrono::system_clock::time_point time) {
  if (time.time_since_epoch().count() == 0) return "";
  const auto since = time.time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since).count();
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", text, static_cast<int>(millis));
}

json JobRecord::ToJson() const {
  json out = {{"id", id},
              {"state", JobStateName(state)},
              {"task", task},
              {"backend", backend},
              {"client_id", client_id},
              {"submitted_at", IsoTime(submitted_at)},
              {"started_at", IsoTime(started_at)},
              {"finished_at", IsoTime(finished_at)}};
  if (state == JobState::kDone) out["verdict"] = verdict;
  return out;
}

JobTable::JobTable(size_t max_finished, size_t queued_per_client)
    : max_finished_(std::max<size_t>(max_finished, 1)), queued_per_client_(queued_per_client) {
  counts_.latency_bucket_s = kLatencyBuckets;
  counts_.latency_bucket_count.assign(kLatencyBuckets.size() + 1, 0);
}

bool JobTable::Reserve(const std::string& client, size_t count) {
  std::lock_guard lock(mutex_);
  size_t& unfinished = unfinished_by_client_[client];
  if (unfinished + count > queued_per_client_) return false;
  unfinished += count;
  return true;
}

void JobTable::Release(const std::string& client, size_t count) {
  std::lock_guard lock(mutex_);
  size_t& unfinished = unfinished_by_client_[client];
  unfinished -= std::min(unfinished, count);
}

std::optional<std::string> JobTable::FindByClientId(const std::string& client, const std::string& client_id) const {
  if (client_id.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  const auto found = by_client_id_.find({client, client_id});
  if (found == by_client_id_.end()) return std::nullopt;
  return found->second;
}

void JobTable::ForgetKeyOf(const JobRecord& job) {
  if (job.client_id.empty()) return;
  // The key may name a later job by now (force_refresh): only this job's own mapping goes.
  const auto found = by_client_id_.find({job.client, job.client_id});
  if (found != by_client_id_.end() && found->second == job.id) by_client_id_.erase(found);
}

void JobTable::ForgetClientId(const std::string& client, const std::string& client_id) {
  std::lock_guard lock(mutex_);
  by_client_id_.erase({client, client_id});
}

JobTable::Admitted JobTable::Add(JobRecord record) {
  std::lock_guard lock(mutex_);
  if (!record.client_id.empty()) {
    const auto found = by_client_id_.find({record.client, record.client_id});
    if (found != by_client_id_.end()) {
      size_t& unfinished = unfinished_by_client_[record.client];
      unfinished -= std::min<size_t>(unfinished, 1);
      return {Admission::kDuplicate, found->second};
    }
    by_client_id_[{record.client, record.client_id}] = record.id;
  }
  record.submitted_at = std::chrono::system_clock::now();
  record.events.push_back({"state", {{"state", "queued"}}});
  const std::string id = record.id;
  jobs_[id] = std::move(record);
  ++counts_.queued;
  changed_.notify_all();
  return {Admission::kNew, id};
}

void JobTable::Remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  ForgetKeyOf(found->second);
  size_t& unfinished = unfinished_by_client_[found->second.client];
  unfinished -= std::min<size_t>(unfinished, 1);
  if (found->second.state == JobState::kQueued) --counts_.queued;
  if (found->second.state == JobState::kRunning) --counts_.running;
  jobs_.erase(found);
}

void JobTable::MarkStarted(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end() || found->second.state != JobState::kQueued) return;
  found->second.state = JobState::kRunning;
  --counts_.queued;
  ++counts_.running;
  found->second.started_at = std::chrono::system_clock::now();
  found->second.events.push_back({"state", {{"state", "running"}}});
  changed_.notify_all();
}

void JobTable::AddProgress(const std::string& id, const std::string& line) {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end() || found->second.state == JobState::kDone) return;
  if (found->second.events.size() >= kMaxProgressEvents) return;  // a stream, not a log: the verdict has it all
  found->second.events.push_back({"progress", {{"line", line}}});
  changed_.notify_all();
}

void JobTable::Finish(const std::string& id, json verdict) {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end() || found->second.state == JobState::kDone) return;  // one verdict per job
  JobRecord& job = found->second;
  if (job.state == JobState::kQueued) --counts_.queued;
  if (job.state == JobState::kRunning) --counts_.running;
  job.state = JobState::kDone;
  job.finished_at = std::chrono::system_clock::now();
  if (job.started_at.time_since_epoch().count() == 0) job.started_at = job.finished_at;
  job.events.push_back({"state", {{"state", "done"}}});
  job.events.push_back({"verdict", nullptr});  // the verdict itself, filled in when read: kept once
  job.verdict = std::move(verdict);
  size_t& unfinished = unfinished_by_client_[job.client];
  unfinished -= std::min<size_t>(unfinished, 1);
  ++counts_.verdicts_by_status[job.verdict.value("status", std::string("unknown"))];
  const double latency_s = std::chrono::duration<double>(job.finished_at - job.submitted_at).count();
  counts_.latency_sum_s += latency_s;
  ++counts_.latency_count;
  for (size_t i = 0; i < counts_.latency_bucket_count.size(); ++i) {
    if (i == kLatencyBuckets.size() || latency_s <= kLatencyBuckets[i]) ++counts_.latency_bucket_count[i];
  }
  finished_order_.push_back(id);
  while (finished_order_.size() > max_finished_) {
    const auto old = jobs_.find(finished_order_.front());
    if (old != jobs_.end()) {
      ForgetKeyOf(old->second);
      jobs_.erase(old);
    }
    finished_order_.pop_front();
  }
  changed_.notify_all();
}

std::optional<JobRecord> JobTable::Get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return std::nullopt;
  return found->second;
}

bool JobTable::WaitDone(const std::vector<std::string>& ids, std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_until(lock, deadline, [&] {
    return std::all_of(ids.begin(), ids.end(), [this](const std::string& id) {
      const auto found = jobs_.find(id);
      // A job forgotten for room was finished long ago.
      return found == jobs_.end() || found->second.state == JobState::kDone;
    });
  });
}

std::optional<std::vector<JobEvent>> JobTable::EventsFrom(const std::string& id, size_t from,
                                                          std::chrono::milliseconds timeout, bool& done) const {
  std::unique_lock lock(mutex_);
  auto ready = [&] {
    const auto found = jobs_.find(id);
    return found == jobs_.end() || found->second.events.size() > from || found->second.state == JobState::kDone;
  };
  changed_.wait_for(lock, timeout, ready);
  const auto found = jobs_.find(id);
  if (found == jobs_.end()) return std::nullopt;
  const auto& events = found->second.events;
  done = found->second.state == JobState::kDone;
  if (from >= events.size()) return std::vector<JobEvent>{};
  std::vector<JobEvent> out(events.begin() + static_cast<std::ptrdiff_t>(from), events.end());
  for (auto& event : out) {
    if (event.kind == "verdict") event.data = found->second.verdict;
  }
  return out;
}

JobCounts JobTable::Counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace ksmith
