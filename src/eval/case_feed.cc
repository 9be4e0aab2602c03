#include "eval/case_feed.h"

#include <stdexcept>
#include <utility>

namespace ksmith {

size_t PreparedBytes(const PreparedCase& prepared) {
  size_t bytes = prepared.inputs.size();
  for (const auto* outputs : {&prepared.expected, &prepared.magnitude}) {
    for (const auto& values : *outputs) bytes += values.size() * sizeof(double);
  }
  return bytes;
}

CaseFeed::CaseFeed(std::vector<CaseSpec> specs, Start start, Prepare prepare, Answer answer, size_t ahead_bytes)
    : specs_(std::move(specs)), start_(std::move(start)), prepare_(std::move(prepare)), answer_(std::move(answer)),
      ahead_bytes_(ahead_bytes) {
  thread_ = std::thread([this] { Produce(); });
}

CaseFeed::~CaseFeed() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CaseFeed::Produce() {
  auto stop_with = [this](Error error) {
    std::lock_guard lock(mutex_);
    failed_ = std::move(error);
    changed_.notify_all();
  };
  if (start_) {
    if (Status started = start_(); !started.ok()) return stop_with(started.error());
  }
  for (const CaseSpec& spec : specs_) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || ready_bytes_ < ahead_bytes_; });
      if (stopping_) return;
    }
    PreparedCase prepared = prepare_(spec);
    if (Status answered = answer_(prepared); !answered.ok()) {
      return stop_with(Error{answered.error().kind, spec.label + ": " + answered.error().message});
    }
    prepared.input_rms = InputRms(prepared);
    std::lock_guard lock(mutex_);
    ready_bytes_ += PreparedBytes(prepared);
    ready_.push_back(std::move(prepared));
    changed_.notify_all();
  }
}

Result<PreparedCase> CaseFeed::Next() {
  if (taken_ >= specs_.size()) throw std::logic_error("CaseFeed::Next called past the last case");
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !ready_.empty() || failed_.has_value(); });
  if (ready_.empty()) return *failed_;
  PreparedCase prepared = std::move(ready_.front());
  ready_.pop_front();
  ready_bytes_ -= PreparedBytes(prepared);
  ++taken_;
  changed_.notify_all();
  return prepared;
}

}  // namespace ksmith
