#include "eval/gpu_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ksmith {
namespace {

using namespace std::chrono_literals;

TEST(GpuGateTest, SharedHoldersOverlapButNeverWithAnExclusiveOne) {
  GpuGate gate;
  std::atomic<int> shared_inside{0};
  std::atomic<int> most_shared{0};
  std::atomic<bool> overlap_with_exclusive{false};
  std::atomic<bool> exclusive_inside{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        GpuGate::Shared hold(&gate);
        const int now = ++shared_inside;
        most_shared = std::max(most_shared.load(), now);
        if (exclusive_inside) overlap_with_exclusive = true;
        std::this_thread::sleep_for(200us);
        --shared_inside;
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) {
      GpuGate::Exclusive hold(&gate);
      exclusive_inside = true;
      if (shared_inside != 0) overlap_with_exclusive = true;
      std::this_thread::sleep_for(300us);
      exclusive_inside = false;
    }
  });
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(overlap_with_exclusive);
  EXPECT_GT(most_shared.load(), 1) << "shared holders never overlapped";
}

TEST(GpuGateTest, AWaitingExclusiveHolderIsNotStarvedBySharedOnes) {
  GpuGate gate;
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        GpuGate::Shared hold(&gate);
        std::this_thread::sleep_for(1ms);
      }
    });
  }
  std::this_thread::sleep_for(5ms);
  const auto start = std::chrono::steady_clock::now();
  { GpuGate::Exclusive hold(&gate); }
  const auto waited = std::chrono::steady_clock::now() - start;
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_LT(waited, 500ms) << "readers kept the writer out";
}

}  // namespace
}  // namespace ksmith
