// The supervisor against the real ksmith-worker: replies, errors, and every way a worker can
// fail (crash, hang, exit, garbage on the channel) turned into a WorkerFailure.
#include "sandbox/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"
#include "testing/shared_object.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr uint32_t kCanary = 0x5a5b5c5du;

using testing::BuildSharedObject;

// Each kernel binds like vector_add: pointers[0], [1] inputs, [2] output, scalars[3] = n.
std::string Kernel(const std::string& body, const std::string& preamble = "") {
  return "#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n" + preamble +
         "extern \"C\" void ksmith_entry(void* const* p, const int64_t* s) {\n"
         "  const float* a = static_cast<const float*>(p[0]);\n"
         "  const float* b = static_cast<const float*>(p[1]);\n"
         "  float* c = static_cast<float*>(p[2]);\n  const int64_t n = s[3];\n" +
         body + "\n}\n";
}

CaseLayout VectorAddLayout(size_t n) {
  CaseLayout layout;
  layout.scalars = {0, 0, 0, static_cast<int64_t>(n)};
  layout.tensors = {{0, n * 4, false}, {1, n * 4, false}, {2, n * 4, true}};
  layout.guard_bytes = 64;
  return layout;
}

// A vector_add case in memory shared with the worker: a[i] = i, b[i] = 100.
struct SharedCase {
  explicit SharedCase(size_t n) : layout(VectorAddLayout(n)) {
    auto created = SharedMemory::Create(GuardedArena::RequiredBytes(layout));
    if (!created.ok()) return;
    memory = std::move(created.value());
    arena = std::make_unique<GuardedArena>(layout, memory->data());
    std::vector<float> inputs(2 * n);
    for (size_t i = 0; i < n; ++i) {
      inputs[i] = static_cast<float>(i);
      inputs[n + i] = 100.0f;
    }
    prepared = arena->Prepare(std::string_view(reinterpret_cast<const char*>(inputs.data()),
                                               inputs.size() * sizeof(float)),
                              kCanary).ok();
  }

  Message Announce() const {
    Message message;
    message.header = layout.ToJson();
    message.header["type"] = "arena";
    return message;
  }
  Message Run() const {
    Message message;
    message.header = layout.ToJson();
    message.header["type"] = "run";
    message.header["target"] = "candidate";
    return message;
  }
  std::vector<float> Output() const {
    const size_t n = static_cast<size_t>(layout.scalars[3]);
    const float* c = static_cast<const float*>(arena->pointers()[2]);
    return std::vector<float>(c, c + n);
  }

  CaseLayout layout;
  std::unique_ptr<SharedMemory> memory;
  std::unique_ptr<GuardedArena> arena;
  bool prepared = false;
};

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    ASSERT_TRUE(fs::exists(KSMITH_WORKER_PATH)) << KSMITH_WORKER_PATH;
    auto worker = WorkerProcess::Start({KSMITH_WORKER_PATH, scratch_.path(), 1});
    ASSERT_TRUE(worker.ok()) << worker.error().message;
    worker_ = std::move(worker.value());
  }

  // Builds `body` as the candidate and loads it, with or without the sandbox.
  void LoadCandidate(const std::string& body, bool sandbox = false, const std::string& preamble = "") {
    const std::string log = BuildSharedObject(build_.path(), "candidate", Kernel(body, preamble));
    ASSERT_TRUE(log.empty()) << log;
    Message setup;
    setup.header = {{"type", "setup"},
                    {"candidate", (build_.path() / "candidate.so").string()},
                    {"sandbox", sandbox},
                    {"scratch", scratch_.path().string()},
                    {"readable", {build_.path().string()}},
                    {"limits", {{"cpu_seconds", 60}, {"memory_bytes", uint64_t{8} << 30}}}};
    auto reply = worker_->Request(setup, "ready", milliseconds(10'000), "loading the candidate");
    ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
    ASSERT_EQ(reply->type(), "ready") << reply->header.dump();
    ready_ = reply->header;
  }

  // Hands the case's memory to the worker.
  void Share(const SharedCase& shared) {
    ASSERT_TRUE(shared.prepared);
    auto reply = worker_->Request(shared.Announce(), "arena_ready", milliseconds(5000),
                                  "sharing case memory", shared.memory->fd());
    ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
    ASSERT_EQ(reply->type(), "arena_ready") << reply->header.dump();
  }

  std::optional<Message> Send(Message message, milliseconds timeout, const std::string& activity,
                              const std::string& expected = "result") {
    return worker_->Request(std::move(message), expected, timeout, activity);
  }

  ScopedTempDir scratch_{"ksmith-supervisor"};
  ScopedTempDir build_{"ksmith-supervisor-build"};
  std::unique_ptr<WorkerProcess> worker_;
  nlohmann::json ready_;
};

TEST_F(SupervisorTest, UnknownRequestTypeGetsAnErrorReply) {
  auto reply = Send(Message{{{"type", "nonsense"}}, {}}, milliseconds(5000), "testing");
  ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
  EXPECT_EQ(reply->type(), "error");
  EXPECT_NE(reply->header.value("message", std::string()).find("unknown request 'nonsense'"), std::string::npos);
  EXPECT_FALSE(worker_->failure().has_value());
}

TEST_F(SupervisorTest, RunWithABogusLayoutGetsAnErrorReply) {
  auto reply = Send(Message{{{"type", "run"}, {"scalars", "bogus"}}, {}}, milliseconds(5000), "running a case");
  ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
  EXPECT_EQ(reply->type(), "error");
  EXPECT_NE(reply->header.value("message", std::string()).find("bad case layout"), std::string::npos);
}

TEST_F(SupervisorTest, RunBeforeSetupGetsAnErrorReply) {
  const SharedCase shared(4);
  auto reply = Send(shared.Run(), milliseconds(5000), "running a case");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->type(), "error");
  EXPECT_NE(reply->header.value("message", std::string()).find("no such kernel"), std::string::npos);
}

TEST_F(SupervisorTest, RunWithoutSharedMemoryGetsAnErrorReply) {
  LoadCandidate("for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];");
  const SharedCase shared(4);
  auto reply = Send(shared.Run(), milliseconds(5000), "running a case");
  ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
  EXPECT_EQ(reply->type(), "error");
  EXPECT_NE(reply->header.value("message", std::string()).find("no arena"), std::string::npos);
}

TEST_F(SupervisorTest, SandboxedRunComputesInTheSharedMemory) {
  LoadCandidate("for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];", /*sandbox=*/true);
  EXPECT_TRUE(ready_["protections"].value("seccomp", false)) << ready_.dump();
  EXPECT_EQ(ready_.value("pid", 0), worker_->pid());
  const size_t n = 9;
  const SharedCase shared(n);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(5000), "running a case");
  ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
  ASSERT_EQ(reply->type(), "result") << reply->header.dump();
  EXPECT_GE(reply->header.value("elapsed_ns", int64_t{-1}), 0);
  const std::vector<float> c = shared.Output();
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(c[i], static_cast<float>(i) + 100.0f) << i;
  // The guards around every tensor are intact.
  const std::string snapshot = shared.arena->Snapshot();
  const GuardPattern guards(kCanary);
  size_t offset = 0;
  for (size_t i = 0; i < shared.layout.tensors.size(); ++i) {
    const size_t bytes = shared.layout.tensors[i].bytes;
    EXPECT_FALSE(guards.Inspect(std::string_view(snapshot).substr(offset, 64), i, GuardSide::kBefore).any()) << i;
    EXPECT_FALSE(guards.Inspect(std::string_view(snapshot).substr(offset + 64 + bytes, 64), i, GuardSide::kAfter).any())
        << i;
    offset += bytes + 128;
  }
}

TEST_F(SupervisorTest, WorkerKilledMidRequestIsACrash) {
  LoadCandidate("usleep(5'000'000); c[0] = a[0] + b[0] + n;");
  const SharedCase shared(4);
  Share(shared);
  const pid_t pid = worker_->pid();
  std::thread killer([pid] {
    std::this_thread::sleep_for(milliseconds(200));
    ::kill(pid, SIGKILL);
  });
  const auto start = std::chrono::steady_clock::now();
  auto reply = Send(shared.Run(), milliseconds(10'000), "running case 3");
  killer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
  ASSERT_FALSE(reply.has_value());
  ASSERT_TRUE(worker_->failure().has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kCrashed);
  EXPECT_NE(worker_->failure()->description.find("SIGKILL"), std::string::npos) << worker_->failure()->description;
  EXPECT_NE(worker_->failure()->description.find("running case 3"), std::string::npos);
}

TEST_F(SupervisorTest, CrashingKernelIsACrashNamingTheSignal) {
  // Sandboxed: RLIMIT_CORE = 0, so the crash leaves no core file behind.
  LoadCandidate("volatile float* nowhere = nullptr; *nowhere = a[0] + b[0] + c[0] + n;", true);
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(10'000), "running a case");
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kCrashed);
  EXPECT_NE(worker_->failure()->description.find("SIGSEGV"), std::string::npos) << worker_->failure()->description;
}

TEST_F(SupervisorTest, HangingKernelTimesOutAndTheWorkerIsKilled) {
  LoadCandidate("for (volatile int64_t spin = 0;; spin = spin + n) {}", true);
  const SharedCase shared(4);
  Share(shared);
  const pid_t pid = worker_->pid();
  const auto start = std::chrono::steady_clock::now();
  auto reply = Send(shared.Run(), milliseconds(300), "running a case");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2000));
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kTimedOut);
  EXPECT_NE(worker_->failure()->description.find("no answer within 0.3 s"), std::string::npos)
      << worker_->failure()->description;
  EXPECT_NE(::kill(pid, 0), 0) << "the hung worker is still alive";
}

TEST_F(SupervisorTest, ExitingKernelIsAnExitWithItsCode) {
  LoadCandidate("std::exit(3);");
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(10'000), "running a case");
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kExited);
  EXPECT_NE(worker_->failure()->description.find("exit code 3"), std::string::npos) << worker_->failure()->description;
}

TEST_F(SupervisorTest, GarbageOnTheChannelIsAProtocolFailure) {
  // Even sandboxed, the kernel shares the worker's process and can write on the channel (fd 3).
  LoadCandidate("const char junk[] = \"HTTP/1.1 200 OK\\r\\n\\r\\n\"; (void)!write(3, junk, sizeof(junk)); c[0] = n;", true);
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(10'000), "running a case");
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kProtocol);
}

TEST_F(SupervisorTest, ForgedWellFormedReplyWithoutTheNonceIsAProtocolFailure) {
  // A complete, valid "result" frame written by the kernel before the worker's own reply.
  LoadCandidate(R"(
  const char header[] = "{\"type\":\"result\",\"elapsed_ns\":1}";
  unsigned char frame[16 + sizeof(header) - 1] = {'K', 'S', 'M', '1'};
  const unsigned header_bytes = sizeof(header) - 1;
  __builtin_memcpy(frame + 4, &header_bytes, 4);
  __builtin_memcpy(frame + 16, header, sizeof(header) - 1);
  (void)!write(3, frame, sizeof(frame));
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];)", true);
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(10'000), "running a case");
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kProtocol);
  EXPECT_NE(worker_->failure()->description.find("does not answer the request"), std::string::npos)
      << worker_->failure()->description;
}

TEST_F(SupervisorTest, ReplyOfAnotherTypeThanExpectedIsAProtocolFailure) {
  auto reply = Send(Message{{{"type", "bye"}}, {}}, milliseconds(5000), "closing", "result");
  ASSERT_FALSE(reply.has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kProtocol);
}

TEST_F(SupervisorTest, AfterAFailureEveryRequestFailsAtOnce) {
  ::kill(worker_->pid(), SIGKILL);
  EXPECT_FALSE(Send(Message{{{"type", "nonsense"}}, {}}, milliseconds(5000), "first").has_value());
  ASSERT_TRUE(worker_->failure().has_value());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(Send(Message{{{"type", "nonsense"}}, {}}, milliseconds(5000), "second").has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(100));
  EXPECT_NE(worker_->failure()->description.find("first"), std::string::npos);
}

TEST_F(SupervisorTest, CloseEndsAnIdleWorkerCleanly) {
  const pid_t pid = worker_->pid();
  EXPECT_TRUE(worker_->Close(milliseconds(5000)));
  EXPECT_FALSE(worker_->failure().has_value());
  EXPECT_NE(::kill(pid, 0), 0) << "the worker is still alive after Close";
}

TEST_F(SupervisorTest, CloseCatchesAFrameWrittenAfterTheLastReply) {
  // A static object's destructor runs at exit, after the worker's last reply.
  LoadCandidate("c[0] = a[0] + b[0] + n;", true, R"(
struct LateWriter {
  ~LateWriter() {
    const char header[] = "{\"type\":\"result\"}";
    unsigned char frame[16 + sizeof(header) - 1] = {'K', 'S', 'M', '1'};
    const unsigned header_bytes = sizeof(header) - 1;
    __builtin_memcpy(frame + 4, &header_bytes, 4);
    __builtin_memcpy(frame + 16, header, sizeof(header) - 1);
    (void)!write(3, frame, sizeof(frame));
  }
} late_writer;
)");
  EXPECT_FALSE(worker_->Close(milliseconds(5000)));
  ASSERT_TRUE(worker_->failure().has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kProtocol);
}

TEST_F(SupervisorTest, CandidateOutputLandsInTheLogNotOnTheChannel) {
  LoadCandidate("std::printf(\"hello from the kernel\\n\"); std::fflush(stdout); for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];");
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(5000), "running a case");
  ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
  EXPECT_EQ(reply->type(), "result");
  EXPECT_NE(worker_->OutputTail(1000).find("hello from the kernel"), std::string::npos) << worker_->OutputTail(1000);
}

TEST_F(SupervisorTest, CpuTicksIsReadableForALiveWorker) {
  EXPECT_TRUE(worker_->CpuTicks().has_value());
}

// --- Forbidden calls (call_watch.h): an attempt the sandbox denies fails the candidate -----------

TEST_F(SupervisorTest, AForkTheSandboxDeniedFailsTheCandidateNamingTheCall) {
  LoadCandidate("const pid_t child = fork(); if (child == 0) _exit(0);\n"
                "for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];",
                true);
  if (!ready_["protections"].value("attempts_reported", false)) GTEST_SKIP() << ready_.dump();
  const SharedCase shared(4);
  Share(shared);
  auto reply = Send(shared.Run(), milliseconds(10'000), "running case 3");
  ASSERT_FALSE(reply.has_value()) << "the kernel computed after a denied fork and was not failed";
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kForbiddenCall);
  const std::string& description = worker_->failure()->description;
  EXPECT_NE(description.find("the candidate tried fork (clone), denied by the sandbox"), std::string::npos) << description;
  EXPECT_NE(description.find("running case 3"), std::string::npos) << description;
}

TEST_F(SupervisorTest, SystemWithEverySignalBlockedIsCaughtToo) {
  // glibc's posix_spawn blocks every signal around its clone: a signal trap would kill the worker.
  LoadCandidate("sigset_t all; sigfillset(&all); sigprocmask(SIG_BLOCK, &all, nullptr);\n"
                "const int status = std::system(\"true\");\n"
                "for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i] + (status == 0 ? 1.0f : 0.0f);",
                true, "#include <signal.h>\n");
  if (!ready_["protections"].value("attempts_reported", false)) GTEST_SKIP() << ready_.dump();
  const SharedCase shared(4);
  Share(shared);
  ASSERT_FALSE(Send(shared.Run(), milliseconds(10'000), "running a case").has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kForbiddenCall);
  EXPECT_NE(worker_->failure()->description.find("system/posix_spawn"), std::string::npos)
      << worker_->failure()->description;
}

TEST_F(SupervisorTest, AForbiddenCallWhileTheCandidateLoadsFailsTheSetup) {
  const std::string log = BuildSharedObject(build_.path(), "candidate", Kernel("c[0] = a[0] + b[0] + n;", R"(
__attribute__((constructor)) static void Early() { if (fork() == 0) _exit(0); }
)"));
  ASSERT_TRUE(log.empty()) << log;
  Message setup;
  setup.header = {{"type", "setup"},
                  {"candidate", (build_.path() / "candidate.so").string()},
                  {"scratch", scratch_.path().string()},
                  {"readable", {build_.path().string()}},
                  {"limits", {{"cpu_seconds", 60}, {"memory_bytes", uint64_t{8} << 30}}}};
  ASSERT_FALSE(worker_->Request(setup, "ready", milliseconds(10'000), "loading the candidate").has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kForbiddenCall) << worker_->failure()->description;
  EXPECT_NE(worker_->failure()->description.find("loading the candidate"), std::string::npos);
}

TEST_F(SupervisorTest, WhatTheSandboxDeniesTheBaselineStaysQuiet) {
  // Trusted code (an imported task's torch) may probe a call and go on without it.
  const std::string fork_and_add = "const pid_t child = fork(); if (child == 0) _exit(0);\n"
                                   "for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];";
  std::string log = BuildSharedObject(build_.path(), "baseline", Kernel(fork_and_add, R"(
__attribute__((constructor)) static void Probe() { if (fork() == 0) _exit(0); }
)"));
  ASSERT_TRUE(log.empty()) << log;
  log = BuildSharedObject(build_.path(), "candidate", Kernel("for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];"));
  ASSERT_TRUE(log.empty()) << log;
  Message setup;
  setup.header = {{"type", "setup"},
                  {"candidate", (build_.path() / "candidate.so").string()},
                  {"baseline", (build_.path() / "baseline.so").string()},
                  {"scratch", scratch_.path().string()},
                  {"readable", {build_.path().string()}},
                  {"limits", {{"cpu_seconds", 60}, {"memory_bytes", uint64_t{8} << 30}}}};
  auto ready = worker_->Request(setup, "ready", milliseconds(10'000), "loading the kernels");
  ASSERT_TRUE(ready.has_value()) << worker_->failure()->description;
  ASSERT_EQ(ready->type(), "ready") << ready->header.dump();
  if (!ready->header["protections"].value("attempts_reported", false)) GTEST_SKIP() << ready->header.dump();
  const SharedCase shared(4);
  Share(shared);
  Message on_baseline = shared.Run();
  on_baseline.header["target"] = "baseline";
  for (const Message& run : {on_baseline, shared.Run()}) {
    auto reply = Send(run, milliseconds(10'000), "running a case");
    ASSERT_TRUE(reply.has_value()) << worker_->failure()->description;
    EXPECT_EQ(reply->type(), "result") << reply->header.dump();
  }
  const std::vector<DeniedCall> denied = worker_->DeniedCalls();
  ASSERT_EQ(denied.size(), 2u) << "the baseline's load and its call each tried one fork";
  for (const auto& call : denied) {
    EXPECT_EQ(call.call, "fork (clone)");
    EXPECT_EQ(call.window, CodeWindow::kTrusted);
    EXPECT_FALSE(call.candidate);
  }
  EXPECT_TRUE(worker_->Close(milliseconds(5000))) << worker_->failure()->description;
}

TEST_F(SupervisorTest, AForkFromAThreadTheCandidateLeftIsCaughtAtTheNextReply) {
  LoadCandidate("static bool started = false;\n"
                "if (!started) { started = true; std::thread([] { usleep(100'000); if (fork() == 0) _exit(0); }).detach(); }\n"
                "for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];",
                true, "#include <thread>\n");
  if (!ready_["protections"].value("attempts_reported", false)) GTEST_SKIP() << ready_.dump();
  const SharedCase shared(4);
  Share(shared);
  auto first = Send(shared.Run(), milliseconds(10'000), "running the first case");
  ASSERT_TRUE(first.has_value()) << worker_->failure()->description;
  std::this_thread::sleep_for(milliseconds(500));  // the thread tries while no call runs
  ASSERT_FALSE(Send(shared.Run(), milliseconds(10'000), "running the second case").has_value());
  EXPECT_EQ(worker_->failure()->kind, WorkerFailureKind::kForbiddenCall);
  EXPECT_NE(worker_->failure()->description.find("from a thread it left running"), std::string::npos)
      << worker_->failure()->description;
}

TEST(WorkerProcess, StartWithAMissingExecutableIsNotFound) {
  ScopedTempDir scratch("ksmith-supervisor");
  auto worker = WorkerProcess::Start({"/nonexistent/ksmith-worker", scratch.path(), 1});
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(worker.error().message.find("KSMITH_WORKER"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
