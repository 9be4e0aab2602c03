// Workers started ahead (backends/cuda/worker_spares.h), with the CPU worker standing in for the CUDA
// one: what is tested is which processes a verification gets, not what they run.
#include "backends/cuda/worker_spares.h"

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <vector>
#include <thread>

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/child_processes.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

class WorkerSpares : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(KSMITH_WORKER_PATH)) << KSMITH_WORKER_PATH;
    options_.worker_executable = KSMITH_WORKER_PATH;
    options_.scratch_parent = scratch_.path();
    options_.worker_environment = {"CUDA_VISIBLE_DEVICES=0"};
  }

  static bool Running(pid_t pid) { return ::kill(pid, 0) == 0; }

  // The workers this test started, once `count` of them run the worker's program.
  static std::map<pid_t, uint64_t> Workers(size_t count) {
    auto running = testing::ChildProcessesRunning(KSMITH_WORKER_PATH);
    for (int i = 0; i < 100 && running.size() < count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      running = testing::ChildProcessesRunning(KSMITH_WORKER_PATH);
    }
    return running;
  }

  ScopedTempDir scratch_{"spares-test"};
  EvalOptions options_;
};

TEST_F(WorkerSpares, EachVerificationGetsTheSpareStartedWhenTheLastTookOneAndNoProcessTwice) {
  CudaWorkerSpares spares;
  CudaWorkers first = spares.Take(options_);  // none held yet: started now, and a spare after it
  ASSERT_TRUE(first.start_error.empty()) << first.start_error;
  EXPECT_EQ(first.started_ahead_s, 0);
  EXPECT_EQ(spares.spares_taken(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CudaWorkers second = spares.Take(options_);
  ASSERT_TRUE(second.start_error.empty()) << second.start_error;
  EXPECT_EQ(spares.spares_taken(), 1);
  EXPECT_GE(second.started_ahead_s, 0.015);
  EXPECT_NE(second.candidate->pid(), first.candidate->pid());
  EXPECT_NE(second.reference->pid(), first.reference->pid());
  EXPECT_NE(second.scratch->path(), first.scratch->path());
  CudaWorkers third = spares.Take(options_);  // the one started as the second was taken
  EXPECT_EQ(spares.spares_taken(), 2);
  for (const pid_t earlier : {first.candidate->pid(), second.candidate->pid(), first.reference->pid(),
                              second.reference->pid()}) {
    EXPECT_NE(third.candidate->pid(), earlier);
    EXPECT_NE(third.reference->pid(), earlier);
  }
  EXPECT_TRUE(third.candidate->Waiting());
}

TEST_F(WorkerSpares, ASpareForAnotherDeviceOrOneThatDiedIsNotHandedOut) {
  CudaWorkerSpares spares;
  spares.Refill(options_);
  EvalOptions other = options_;
  other.worker_environment = {"CUDA_VISIBLE_DEVICES=1"};
  CudaWorkers elsewhere = spares.Take(other);  // started now; a spare for `other` after it
  EXPECT_EQ(spares.spares_taken(), 0);
  EXPECT_EQ(elsewhere.started_ahead_s, 0);
  elsewhere = CudaWorkers{};

  const auto spare = Workers(2);
  ASSERT_EQ(spare.size(), 2u);
  for (const auto& [pid, started] : spare) ::kill(pid, SIGKILL);  // killed while it waited
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CudaWorkers taken = spares.Take(other);
  ASSERT_TRUE(taken.start_error.empty()) << taken.start_error;
  EXPECT_EQ(spares.spares_taken(), 0);
  EXPECT_EQ(taken.started_ahead_s, 0);
  EXPECT_TRUE(taken.candidate->Waiting());
  EXPECT_EQ(spare.count(taken.candidate->pid()), 0u);
  EXPECT_EQ(spare.count(taken.reference->pid()), 0u);
}

TEST_F(WorkerSpares, ASpareNobodyTookEndsWithItsHolder) {
  std::vector<pid_t> spare;
  {
    CudaWorkerSpares spares;
    CudaWorkers taken = spares.Take(options_);
    for (const auto& [pid, started] : Workers(4)) {
      if (pid != taken.candidate->pid() && pid != taken.reference->pid()) spare.push_back(pid);
    }
    ASSERT_EQ(spare.size(), 2u);
  }
  for (const pid_t pid : spare) EXPECT_FALSE(Running(pid)) << pid;
}

}  // namespace
}  // namespace ksmith
