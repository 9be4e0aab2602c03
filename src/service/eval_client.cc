#include "service/eval_client.h"

#include <chrono>

namespace ksmith {
namespace {

constexpr std::chrono::milliseconds kPollInterval{100};

}  // namespace

EvalClient::EvalClient(EvalService& service) : service_(service), reader_([this] { Read(); }) {}

EvalClient::~EvalClient() {
  stopping_ = true;
  reader_.join();
  std::lock_guard lock(mutex_);
  for (auto& [id, promise] : pending_) {
    Verdict verdict;
    verdict.status = VerdictStatus::kInfraError;
    verdict.reason = "the evaluation client closed before job " + id + " finished";
    promise.set_value(std::move(verdict));
  }
}

Result<std::future<Verdict>> EvalClient::Submit(EvalJob job) {
  // A fast job's verdict may come before its promise is in place: the reader keeps it in early_.
  auto id = service_.Submit(std::move(job));
  if (!id.ok()) return id.error();
  std::lock_guard lock(mutex_);
  std::promise<Verdict> promise;
  auto future = promise.get_future();
  if (auto early = early_.find(*id); early != early_.end()) {
    promise.set_value(std::move(early->second));
    early_.erase(early);
  } else {
    pending_.emplace(*id, std::move(promise));
  }
  return future;
}

void EvalClient::Read() {
  while (!stopping_.load()) {
    auto next = service_.NextVerdict(kPollInterval);
    if (!next) continue;
    std::lock_guard lock(mutex_);
    if (auto found = pending_.find(next->job_id); found != pending_.end()) {
      found->second.set_value(std::move(next->verdict));
      pending_.erase(found);
    } else {
      early_.emplace(next->job_id, std::move(next->verdict));
    }
  }
}

}  // namespace ksmith
