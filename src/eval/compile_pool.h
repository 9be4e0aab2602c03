// A fixed pool of threads that run builds for any backend, so that compiling the next
// candidates overlaps with verifying and timing the current ones. Compilers are processes; the
// threads only wait for them, so one thread per core keeps every core compiling.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/build.h"
#include "core/result.h"

namespace ksmith {

class CompilePool {
 public:
  /// `threads` == 0: one per hardware thread (at least one).
  explicit CompilePool(size_t threads = 0);
  /// Drains: every build already submitted runs to completion before the threads stop.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// Queues `build`. The future holds what it returned, or a kInternal Error if it threw.
  std::future<Result<BuildOutput>> Submit(std::function<Result<BuildOutput>()> build);

  size_t threads() const { return threads_.size(); }

 private:
  void Work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool stopping_ = false;                     // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace ksmith
