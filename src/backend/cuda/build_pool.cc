#include "backend/cuda/build_pool.h"

#include <algorithm>
#include <exception>
#include <memory>

namespace ksmith {

CudaBuildPool::CudaBuildPool(NvccCompiler compiler, size_t threads) : compiler_(std::move(compiler)) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

CudaBuildPool::~CudaBuildPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

std::future<Result<CudaBuildOutput>> CudaBuildPool::Submit(const Task& task, BuildRequest request) {
  auto promise = std::make_shared<std::promise<Result<CudaBuildOutput>>>();
  auto future = promise->get_future();
  auto job = [this, promise, task, request = std::move(request)] {
    // A build thread must never die of a candidate: whatever escapes becomes that job's Error.
    try {
      promise->set_value(compiler_.Build(task, request));
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

void CudaBuildPool::Work() {
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
