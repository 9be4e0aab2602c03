// A fixed pool of threads that run builds for any backend, so that compiling the next
// candidates overlaps with verifying and timing the current ones. Compilers are processes; the
// threads only wait for them, so one thread per core keeps every core compiling. The machine's
// memory bounds them too: each build may reach the build's memory limit (compile/build.h), so
// no more run at once than the memory holds at that limit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "compile/build.h"
#include "core/result.h"

namespace ksmith {

class CompilePool {
 public:
  /// `threads` == 0: one per hardware thread (at least one). `memory_slots`: half build-memory
  /// limits that fit in memory at once (BuildMemorySlots); 0: a build's for every thread.
  explicit CompilePool(size_t threads = 0, size_t memory_slots = 0);
  /// Drains: every build already submitted runs to completion before the threads stop.
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  /// Queues `build`, which takes `slots` of the memory slots (kMemorySlotsPerBuild for a build of
  /// one process at the limit, more for one whose processes together may hold more; never more
  /// than all). Builds start in the order
  /// queued, each once its slots are free. The future holds what it returned, or a kInternal
  /// Error if it threw.
  std::future<Result<BuildOutput>> Submit(std::function<Result<BuildOutput>()> build,
                                          size_t slots = kMemorySlotsPerBuild);

  size_t threads() const { return threads_.size(); }
  size_t memory_slots() const { return memory_slots_; }
  /// Builds running now and builds waiting for a thread or slots (for a service's metrics).
  size_t running() const;
  size_t waiting() const;

 private:
  void Work();

  struct Queued {
    std::function<void()> run;
    size_t slots = 1;
  };

  size_t memory_slots_ = 1;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Queued> queue_;    // guarded by mutex_
  size_t slots_in_use_ = 0;     // guarded by mutex_
  size_t running_ = 0;          // guarded by mutex_
  bool stopping_ = false;       // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace ksmith
