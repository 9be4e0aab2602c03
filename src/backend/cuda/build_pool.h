// A fixed pool of threads that run nvcc builds, so that compiling the next candidates overlaps
// with timing the current one on the GPU. nvcc is a process per build; the threads only wait
// for it, so one thread per core keeps every core compiling.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "backend/cuda/nvcc_compiler.h"

namespace ksmith {

class CudaBuildPool {
 public:
  /// `threads` == 0: one per hardware thread (at least one).
  explicit CudaBuildPool(NvccCompiler compiler, size_t threads = 0);
  /// Drains: every build already submitted runs to completion before the threads stop.
  ~CudaBuildPool();
  CudaBuildPool(const CudaBuildPool&) = delete;
  CudaBuildPool& operator=(const CudaBuildPool&) = delete;

  /// Queues a build of `request` for `task` (both copied). The future holds what
  /// NvccCompiler::Build returned, or a kInternal Error if the build threw.
  std::future<Result<CudaBuildOutput>> Submit(const Task& task, BuildRequest request);

  size_t threads() const { return threads_.size(); }
  const NvccCompiler& compiler() const { return compiler_; }

 private:
  void Work();

  const NvccCompiler compiler_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool stopping_ = false;                     // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace ksmith
