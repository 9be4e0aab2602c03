#include "eval/compile_pool.h"

#include <algorithm>
#include <exception>
#include <memory>

namespace ksmith {

CompilePool::CompilePool(size_t threads, size_t memory_slots) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  memory_slots_ = memory_slots == 0 ? kMemorySlotsPerBuild * threads : memory_slots;
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

std::future<Result<BuildOutput>> CompilePool::Submit(std::function<Result<BuildOutput>()> build, size_t slots) {
  auto promise = std::make_shared<std::promise<Result<BuildOutput>>>();
  auto future = promise->get_future();
  auto job = [promise, build = std::move(build)] {
    // A build thread must never die of a candidate: whatever escapes becomes that job's Error.
    try {
      promise->set_value(build());
    } catch (const std::exception& exception) {
      promise->set_value(MakeError(ErrorKind::kInternal, "the build threw: {}", exception.what()));
    } catch (...) {
      promise->set_value(MakeError(ErrorKind::kInternal, "the build threw a non-standard exception"));
    }
  };
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({std::move(job), std::clamp<size_t>(slots, 1, memory_slots_)});
  }
  ready_.notify_all();
  return future;
}

size_t CompilePool::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

size_t CompilePool::waiting() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void CompilePool::Work() {
  while (true) {
    Queued job;
    {
      std::unique_lock lock(mutex_);
      // The first build waits for its slots and those behind it wait too: a large build is
      // never passed over for ever.
      ready_.wait(lock, [this] {
        return (stopping_ && queue_.empty()) ||
               (!queue_.empty() && slots_in_use_ + queue_.front().slots <= memory_slots_);
      });
      // Stop only once the queue is empty: the destructor drains.
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      slots_in_use_ += job.slots;
      ++running_;
    }
    job.run();
    {
      std::lock_guard lock(mutex_);
      slots_in_use_ -= job.slots;
      --running_;
    }
    ready_.notify_all();
  }
}

}  // namespace ksmith
