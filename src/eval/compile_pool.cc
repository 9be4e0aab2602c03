#include "eval/compile_pool.h"

#include <algorithm>
#include <exception>
#include <memory>

namespace ksmith {

CompilePool::CompilePool(size_t threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
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

std::future<Result<BuildOutput>> CompilePool::Submit(std::function<Result<BuildOutput>()> build) {
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
    queue_.emplace_back(std::move(job));
  }
  ready_.notify_one();
  return future;
}

void CompilePool::Work() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Stop only once the queue is empty: the destructor drains.
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace ksmith
