// The worker's request loop, run in a thread of the test over a real socketpair. No candidate is
// loaded and no sandbox applied here (that would wall in the test process itself); the supervisor
// tests run the real ksmith-worker for those.
#include "backends/cpu/worker/cpu_worker.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "sandbox/layout.h"
#include "sandbox/protocol.h"
#include "sandbox/shared_memory.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

CaseLayout SmallLayout() {
  CaseLayout layout;
  layout.scalars = {0, 0, 4};
  layout.tensors = {{0, 16, false}, {1, 16, true}};
  layout.guard_bytes = 64;
  return layout;
}

class WorkerLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0);
    exit_code_ = std::async(std::launch::async, [fd = fds_[1]] { return RunWorker(fd); });
  }
  void TearDown() override {
    if (fds_[0] >= 0) ::close(fds_[0]);  // end of stream: the loop returns
    if (exit_code_.valid()) exit_code_.wait();
    ::close(fds_[1]);
  }

  Message Ask(nlohmann::json header, int descriptor = -1) {
    EXPECT_TRUE(WriteMessage(fds_[0], Message{std::move(header), {}}).ok());
    if (descriptor >= 0) {
      EXPECT_TRUE(SendDescriptor(fds_[0], descriptor).ok());
    }
    auto reply = ReadMessage(fds_[0], Clock::now() + milliseconds(5000));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? std::move(reply.value()) : Message{{{"type", "none"}}, {}};
  }

  int LoopExitCode() {
    EXPECT_EQ(exit_code_.wait_for(std::chrono::seconds(5)), std::future_status::ready);
    return exit_code_.get();
  }

  int fds_[2] = {-1, -1};  // [0]: the evaluator's end, [1]: the worker's
  std::future<int> exit_code_;
};

TEST_F(WorkerLoopTest, UnknownRequestGetsAnErrorThatEchoesTheNonce) {
  const Message reply = Ask({{"type", "dance"}, {"nonce", 987654321u}});
  EXPECT_EQ(reply.type(), "error");
  EXPECT_EQ(reply.header.value("nonce", uint64_t{0}), 987654321u);
  EXPECT_NE(reply.header.value("message", std::string()).find("unknown request 'dance'"), std::string::npos);
}

TEST_F(WorkerLoopTest, ByeIsAnsweredThenTheLoopEndsCleanly) {
  const Message reply = Ask({{"type", "bye"}, {"nonce", 5}});
  EXPECT_EQ(reply.type(), "goodbye");
  EXPECT_EQ(reply.header.value("nonce", 0), 5);
  EXPECT_EQ(LoopExitCode(), 0);
}

TEST_F(WorkerLoopTest, EndOfStreamEndsTheLoopCleanly) {
  ::close(fds_[0]);
  fds_[0] = -1;
  EXPECT_EQ(LoopExitCode(), 0);
}

TEST_F(WorkerLoopTest, GarbageEndsTheLoopWithAnError) {
  const std::string junk = "this is not a frame at all";
  ASSERT_EQ(::write(fds_[0], junk.data(), junk.size()), static_cast<ssize_t>(junk.size()));
  EXPECT_NE(LoopExitCode(), 0);
}

TEST_F(WorkerLoopTest, RunBeforeSetupHasNoKernel) {
  nlohmann::json header = SmallLayout().ToJson();
  header["type"] = "run";
  const Message reply = Ask(header);
  EXPECT_EQ(reply.type(), "error");
  EXPECT_NE(reply.header.value("message", std::string()).find("no such kernel"), std::string::npos);
}

TEST_F(WorkerLoopTest, SharedArenaIsAcceptedForAValidLayout) {
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(SmallLayout()));
  ASSERT_TRUE(memory.ok());
  nlohmann::json header = SmallLayout().ToJson();
  header["type"] = "arena";
  const Message reply = Ask(header, (*memory)->fd());
  EXPECT_EQ(reply.type(), "arena_ready") << reply.header.dump();
}

TEST_F(WorkerLoopTest, SharedArenaWithABadLayoutIsRefused) {
  auto memory = SharedMemory::Create(4096);
  ASSERT_TRUE(memory.ok());
  const Message reply = Ask({{"type", "arena"}, {"scalars", {1}}, {"tensors", "none"}, {"guard_bytes", 64}},
                            (*memory)->fd());
  EXPECT_EQ(reply.type(), "error");
  EXPECT_NE(reply.header.value("message", std::string()).find("bad case layout"), std::string::npos);
  // The loop is still serving.
  EXPECT_EQ(Ask({{"type", "bye"}}).type(), "goodbye");
}

TEST_F(WorkerLoopTest, TimingWithoutKernelsReportsAnError) {
  auto memory = SharedMemory::Create(4096);
  ASSERT_TRUE(memory.ok());
  nlohmann::json header = SmallLayout().ToJson();
  header["type"] = "time_setup";
  header["sets"] = 1;
  header["tolerance"] = nlohmann::json::object();
  const Message reply = Ask(header, (*memory)->fd());
  EXPECT_EQ(reply.type(), "error");
  EXPECT_NE(reply.header.value("message", std::string()).find("kernels not loaded"), std::string::npos)
      << reply.header.dump();
  // A timed call before a successful setup is refused too.
  EXPECT_EQ(Ask({{"type", "time_call"}, {"target", "candidate"}}).type(), "error");
}

TEST_F(WorkerLoopTest, SetupWithAMissingCandidateIsALoadError) {
  const Message reply = Ask({{"type", "setup"},
                             {"candidate", "/nonexistent/ksmith/candidate.so"},
                             {"sandbox", false}});
  EXPECT_EQ(reply.type(), "load_error");
  EXPECT_NE(reply.header.value("message", std::string()).find("/nonexistent/ksmith/candidate.so"), std::string::npos);
}

TEST_F(WorkerLoopTest, SetupWithAMissingBaselineIsALoadError) {
  const Message reply = Ask({{"type", "setup"},
                             {"baseline", "/nonexistent/ksmith/baseline.so"},
                             {"candidate", "/nonexistent/ksmith/candidate.so"},
                             {"sandbox", false}});
  EXPECT_EQ(reply.type(), "load_error");
  EXPECT_NE(reply.header.value("message", std::string()).find("baseline.so"), std::string::npos);
}

TEST_F(WorkerLoopTest, AnswersSeveralRequestsInOrder) {
  for (int i = 0; i < 5; ++i) {
    const Message reply = Ask({{"type", "ping"}, {"nonce", i}});
    EXPECT_EQ(reply.header.value("nonce", -1), i);
  }
}

TEST(CpuWorker, DefaultExecutableHonoursKsmithWorker) {
  const char* saved = std::getenv("KSMITH_WORKER");
  const std::optional<std::string> previous = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("KSMITH_WORKER", "/opt/ksmith/bin/ksmith-worker", 1);
  EXPECT_EQ(DefaultCpuWorkerExecutable(), std::filesystem::path("/opt/ksmith/bin/ksmith-worker"));
  ::unsetenv("KSMITH_WORKER");
  EXPECT_EQ(DefaultCpuWorkerExecutable().filename(), "ksmith-worker");
  if (previous) ::setenv("KSMITH_WORKER", previous->c_str(), 1);
}

}  // namespace
}  // namespace ksmith
