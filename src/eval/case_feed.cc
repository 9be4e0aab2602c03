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
  size_t last_bytes = 0;
  for (const CaseSpec& spec : specs_) {
    PreparedCase spare;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopping_ || ready_bytes_ < ahead_bytes_; });
      if (last_bytes >= ahead_bytes_) {
        // One case being called, one being checked: a third waits for the memory of the first
        // judged, unless the taker already waits for it.
        changed_.wait(lock, [this] { return stopping_ || spare_ || taken_ < returned_ + 2 || takers_waiting_ > 0; });
      }
      if (stopping_) return;
      ++started_;
      if (spare_) {
        spare = std::move(*spare_);
        spare_.reset();
      }
    }
    PreparedCase prepared = prepare_(spec, std::move(spare));
    if (Status answered = answer_(prepared); !answered.ok()) {
      return stop_with(Error{answered.error().kind, spec.label + ": " + answered.error().message});
    }
    prepared.input_rms = InputRms(prepared);
    last_bytes = PreparedBytes(prepared);
    std::lock_guard lock(mutex_);
    ready_bytes_ += last_bytes;
    ready_.push_back(std::move(prepared));
    changed_.notify_all();
  }
}

void CaseFeed::Recycle(PreparedCase judged) {
  {
    std::lock_guard lock(mutex_);
    ++returned_;
    // Kept only for a case not yet started: one handed back while the last is prepared would
    // hold gigabytes through timing for nothing.
    if (!spare_ && started_ < specs_.size()) {
      spare_ = std::move(judged);
      changed_.notify_all();
      return;
    }
    changed_.notify_all();
  }
  // Not wanted: `judged` is freed here, outside the lock.
}

size_t CaseFeed::SpareBytes() {
  std::lock_guard lock(mutex_);
  return spare_ ? PreparedBytes(*spare_) : 0;
}

Result<PreparedCase> CaseFeed::Next() {
  std::unique_lock lock(mutex_);
  if (taken_ >= specs_.size()) throw std::logic_error("CaseFeed::Next called past the last case");
  ++takers_waiting_;
  changed_.notify_all();
  changed_.wait(lock, [this] { return !ready_.empty() || failed_.has_value(); });
  --takers_waiting_;
  if (ready_.empty()) return *failed_;
  PreparedCase prepared = std::move(ready_.front());
  ready_.pop_front();
  ready_bytes_ -= PreparedBytes(prepared);
  ++taken_;
  changed_.notify_all();
  return prepared;
}

}  // namespace ksmith
