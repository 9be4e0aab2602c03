// The evaluation service: verdicts tagged with their job ids, back-pressure, refusals, shutdown,
// and (with the real cpu backend and its sandboxed workers) a worker killed mid-job.
#include "service/local_eval_service.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "core/files.h"
#include "service/eval_client.h"
#include "task/task_loader.h"
#include "testing/child_processes.h"
#include "testing/in_process_backend.h"
#include "testing/small_task.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::shared_ptr<const Task> VectorAdd() {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
  if (!task.ok()) return nullptr;
  return std::make_shared<const Task>(std::move(task.value()));
}

Result<std::unique_ptr<LocalEvalService>> StartInProcess(const fs::path& cache, size_t workers, size_t capacity) {
  testing::RegisterInProcessBackend();
  LocalServiceConfig config;
  config.devices = {{testing::kInProcessBackend, "", workers}};
  config.queue_capacity = capacity;
  config.compile_threads = 2;
  config.backend_config.cache_directory = cache;
  return LocalEvalService::Start(std::move(config));
}

EvalJob Job(std::shared_ptr<const Task> task, const std::string& source, const std::string& id = "") {
  EvalJob job;
  job.id = id;
  job.task = std::move(task);
  job.backend = testing::kInProcessBackend;
  job.candidate = {"candidate.txt", source, 0};
  job.options.call_timeout = milliseconds(60'000);
  return job;
}

class LocalEvalServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    task_ = VectorAdd();
    ASSERT_NE(task_, nullptr);
  }
  ScopedTempDir temp_{"ksmith-service"};
  std::shared_ptr<const Task> task_;
};

TEST_F(LocalEvalServiceTest, EveryVerdictCarriesTheIdOfItsJob) {
  auto service = StartInProcess(temp_.path(), 2, 64);
  ASSERT_TRUE(service.ok()) << service.error().message;
  std::map<std::string, VerdictStatus> expected;
  for (int i = 0; i < 20; ++i) {
    const bool wrong = i % 3 == 0;
    auto id = (*service)->Submit(Job(task_, wrong ? "sub" : "add", i == 5 ? "chosen-id" : ""));
    ASSERT_TRUE(id.ok()) << id.error().message;
    expected[*id] = wrong ? VerdictStatus::kWrongOutput : VerdictStatus::kPassed;
  }
  EXPECT_EQ(expected.count("chosen-id"), 1u);
  EXPECT_EQ(expected.size(), 20u);
  std::set<std::string> seen;
  for (size_t i = 0; i < expected.size(); ++i) {
    auto verdict = (*service)->NextVerdict(milliseconds(30'000));
    ASSERT_TRUE(verdict.has_value());
    ASSERT_EQ(expected.count(verdict->job_id), 1u) << verdict->job_id;
    EXPECT_EQ(verdict->verdict.status, expected[verdict->job_id]) << verdict->job_id << ": " << verdict->verdict.reason;
    EXPECT_TRUE(seen.insert(verdict->job_id).second) << "two verdicts for " << verdict->job_id;
  }
  EXPECT_FALSE((*service)->NextVerdict(milliseconds(50)).has_value());
}

// The one worker hangs on its job; two more fill the queue (capacity 2).
void FillQueue(LocalEvalService& service, std::shared_ptr<const Task> task, milliseconds hang_timeout) {
  EvalJob busy = Job(task, "hang", "busy");
  busy.options.call_timeout = hang_timeout;
  ASSERT_TRUE(service.Submit(busy).ok());
  while (service.queued() > 0) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(service.Submit(Job(task, "add", "a")).ok());
  ASSERT_TRUE(service.Submit(Job(task, "add", "b")).ok());
}

TEST_F(LocalEvalServiceTest, AFullQueueAppliesBackPressureInsteadOfGrowing) {
  auto service = StartInProcess(temp_.path(), 1, 2);
  ASSERT_TRUE(service.ok()) << service.error().message;
  FillQueue(**service, task_, milliseconds(1000));
  auto refused = (*service)->Submit(Job(task_, "add", "c"), milliseconds(100));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kTimeout);
  EXPECT_NE(refused.error().message.find("queue is full"), std::string::npos) << refused.error().message;
  EXPECT_EQ((*service)->queued(), 2u);
  // A blocking submit waits for room, and gets it once the hanging job times out.
  std::atomic<bool> submitted{false};
  std::thread waiting([&] {
    EXPECT_TRUE((*service)->Submit(Job(task_, "add", "d")).ok());
    submitted = true;
  });
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(submitted.load()) << "the submit should wait while the queue is full";
  EXPECT_LE((*service)->queued(), 2u);
  waiting.join();
  std::map<std::string, VerdictStatus> statuses;
  for (int i = 0; i < 4; ++i) {
    auto verdict = (*service)->NextVerdict(milliseconds(10'000));
    ASSERT_TRUE(verdict.has_value());
    statuses[verdict->job_id] = verdict->verdict.status;
  }
  EXPECT_EQ(statuses, (std::map<std::string, VerdictStatus>{{"busy", VerdictStatus::kTimeout},
                                                            {"a", VerdictStatus::kPassed},
                                                            {"b", VerdictStatus::kPassed},
                                                            {"d", VerdictStatus::kPassed}}));
  EXPECT_EQ(statuses.count("c"), 0u) << "a refused job gets no verdict";
}

TEST_F(LocalEvalServiceTest, ShutdownCancelsWhatRunsAndWhatWaitsAndRefusesTheRest) {
  auto service = StartInProcess(temp_.path(), 1, 2);
  ASSERT_TRUE(service.ok()) << service.error().message;
  FillQueue(**service, task_, milliseconds(60'000));
  std::thread waiting([&] {
    auto refused = (*service)->Submit(Job(task_, "add", "d"));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("shutting down"), std::string::npos) << refused.error().message;
  });
  std::this_thread::sleep_for(milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  (*service)->Shutdown();
  waiting.join();
  std::map<std::string, Verdict> verdicts;
  while (auto verdict = (*service)->NextVerdict(milliseconds(2000))) verdicts[verdict->job_id] = verdict->verdict;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(verdicts["busy"].status, VerdictStatus::kInfraError);
  EXPECT_EQ(verdicts["busy"].reason, "the evaluation was cancelled");
  for (const char* id : {"a", "b"}) {
    EXPECT_EQ(verdicts[id].status, VerdictStatus::kInfraError) << id;
    EXPECT_NE(verdicts[id].reason.find("cancelled before it started"), std::string::npos) << id;
  }
  EXPECT_FALSE((*service)->Submit(Job(task_, "add")).ok());
}

TEST_F(LocalEvalServiceTest, RefusesWhatItCannotRunAtOnceWithAReason) {
  auto service = StartInProcess(temp_.path(), 1, 4);
  ASSERT_TRUE(service.ok()) << service.error().message;
  EvalJob elsewhere = Job(task_, "add");
  elsewhere.backend = "cuda";
  auto refused = (*service)->Submit(elsewhere);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("no device of this service runs backend 'cuda'"), std::string::npos);
  auto softmax = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "normalization" / "softmax");
  ASSERT_TRUE(softmax.ok());
  auto unsupported = (*service)->Submit(Job(std::make_shared<const Task>(*softmax), "add"));
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.error().kind, ErrorKind::kInvalidArgument);
  ASSERT_TRUE((*service)->Submit(Job(task_, "add", "once")).ok());
  EXPECT_FALSE((*service)->Submit(Job(task_, "add", "once")).ok()) << "a job id is unique";
  EXPECT_TRUE((*service)->DeviceFacts(testing::kInProcessBackend).ok());
}

TEST_F(LocalEvalServiceTest, TheClientHandsEachCallerItsOwnVerdict) {
  auto service = StartInProcess(temp_.path(), 3, 8);
  ASSERT_TRUE(service.ok()) << service.error().message;
  EvalClient client(**service);
  std::vector<std::future<Verdict>> futures;
  std::vector<VerdictStatus> expected;
  for (int i = 0; i < 24; ++i) {
    auto future = client.Submit(Job(task_, i % 2 ? "add" : "crash"));
    ASSERT_TRUE(future.ok()) << future.error().message;
    futures.push_back(std::move(future.value()));
    expected.push_back(i % 2 ? VerdictStatus::kPassed : VerdictStatus::kRuntimeError);
  }
  for (size_t i = 0; i < futures.size(); ++i) EXPECT_EQ(futures[i].get().status, expected[i]) << i;
}

TEST_F(LocalEvalServiceTest, JobsSpreadOverEveryConfiguredDevice) {
  // Given two devices of one worker each and two jobs that each hold a worker for a while, each
  // device must take one: the device list is configuration.
  testing::RegisterInProcessBackend();
  LocalServiceConfig config;
  config.devices = {{testing::kInProcessBackend, "0", 1}, {testing::kInProcessBackend, "1", 1}};
  config.backend_config.cache_directory = temp_.path();
  auto service = LocalEvalService::Start(std::move(config));
  ASSERT_TRUE(service.ok()) << service.error().message;
  for (const char* id : {"first", "second"}) {
    EvalJob job = Job(task_, "hang", id);
    job.options.call_timeout = milliseconds(500);
    ASSERT_TRUE((*service)->Submit(job).ok());
  }
  std::set<std::string> devices;
  for (int i = 0; i < 2; ++i) {
    auto verdict = (*service)->NextVerdict(milliseconds(10'000));
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->verdict.status, VerdictStatus::kTimeout);
    devices.insert(verdict->verdict.provenance.value("device", ""));
  }
  EXPECT_EQ(devices, (std::set<std::string>{"0", "1"}));
}

TEST(LocalEvalService, ADeviceThatCannotStartSaysWhich) {
  LocalServiceConfig config;
  config.devices = {{"no-such-backend", "", 1}};
  auto service = LocalEvalService::Start(std::move(config));
  ASSERT_FALSE(service.ok());
  EXPECT_NE(service.error().message.find("unknown backend 'no-such-backend'"), std::string::npos);
}

// ------------------------------------------------------------------ the cpu backend, real workers

// A small vector_add task under `folder` and a service of two real cpu workers with their cache
// there; on failure, the two are null and `error` says why.
struct CpuService {
  std::shared_ptr<const Task> task;
  std::unique_ptr<LocalEvalService> service;
  std::string error;
};

CpuService StartCpuServiceWithTwoWorkers(const fs::path& folder) {
  CpuService cpu;
  auto small = testing::WriteSmallVectorAdd(folder / "tasks");
  if (!small.ok()) {
    cpu.error = small.error().message;
    return cpu;
  }
  LocalServiceConfig config;
  config.devices = {{"cpu", "", 2}};
  config.backend_config.cache_directory = folder / "cache";
  config.backend_config.measure_facts = false;
  config.backend_config.worker_executable = KSMITH_WORKER_PATH;
  auto service = LocalEvalService::Start(std::move(config));
  if (!service.ok()) {
    cpu.error = service.error().message;
    return cpu;
  }
  cpu.task = std::make_shared<const Task>(std::move(small.value()));
  cpu.service = std::move(service.value());
  return cpu;
}

TEST(LocalEvalServiceCpu, FortyJobsOverTwoWorkersSurviveAWorkerKilledMidJob) {
  ScopedTempDir temp("ksmith-service-cpu");
  ASSERT_TRUE(temp.ok());
  CpuService cpu = StartCpuServiceWithTwoWorkers(temp.path());
  ASSERT_TRUE(cpu.task && cpu.service) << cpu.error;
  const auto& task = cpu.task;
  auto& service = cpu.service;
  const std::string prefix = "#include <cstdint>\nextern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n";
  const std::string honest = prefix + "  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];\n}\n";
  const std::string spinning = prefix + "  for (volatile int64_t i = 0; i < n || true; i = i + 1) {}\n}\n";
  EvalOptions options;
  options.seeds = 1;
  options.time = false;
  options.threads = 1;
  options.call_timeout = milliseconds(120'000);
  for (int i = 0; i < 40; ++i) {
    EvalJob job{i == 0 ? "spinning" : "honest-" + std::to_string(i), task, "cpu",
                {"candidate.cc", i == 0 ? spinning : honest, 0}, options};
    ASSERT_TRUE(service->Submit(std::move(job)).ok());
  }
  // The spinning job's worker is the child that burns CPU: kill it as an OOM killer would.
  pid_t victim = 0;
  for (int attempt = 0; attempt < 400 && victim == 0; ++attempt) {
    std::this_thread::sleep_for(milliseconds(50));
    for (const auto& [pid, ticks] : testing::ChildProcessesRunning(KSMITH_WORKER_PATH)) {
      if (ticks >= 50) victim = pid;  // half a second of CPU: no honest job here comes close
    }
  }
  ASSERT_NE(victim, 0) << "the spinning job's worker never showed up";
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  std::map<std::string, Verdict> verdicts;
  for (int i = 0; i < 40; ++i) {
    auto verdict = service->NextVerdict(milliseconds(120'000));
    ASSERT_TRUE(verdict.has_value()) << "only " << i << " verdicts came";
    verdicts[verdict->job_id] = verdict->verdict;
  }
  ASSERT_EQ(verdicts.size(), 40u);
  const Verdict& killed = verdicts["spinning"];
  EXPECT_EQ(killed.status, VerdictStatus::kRuntimeError) << killed.reason;
  EXPECT_NE(killed.reason.find("SIGKILL"), std::string::npos) << killed.reason;
  for (int i = 1; i < 40; ++i) {
    const Verdict& verdict = verdicts["honest-" + std::to_string(i)];
    EXPECT_EQ(verdict.status, VerdictStatus::kPassed) << i << ": " << verdict.reason;
  }
  EXPECT_TRUE(testing::ChildProcessesRunning(KSMITH_WORKER_PATH).empty()) << "a worker outlived its job";
}

// Where `stage` ran, on the steady clock.
std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point> Window(
    const Verdict& verdict, const StageRecord& stage) {
  const auto start = verdict.started_at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                              std::chrono::duration<double>(stage.started_s));
  return {start, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(stage.seconds))};
}

TEST(LocalEvalServiceCpu, TwoWorkersNeverTimeAtOnceNorCheckWhileTheOtherTimes) {
  // Given two verification workers on the cpu and six jobs that are timed, then no two timing
  // stages overlap, and no job checks correctness while another job times: a timing holds the
  // cores alone.
  ScopedTempDir temp("ksmith-service-cpu-gate");
  ASSERT_TRUE(temp.ok());
  CpuService cpu = StartCpuServiceWithTwoWorkers(temp.path());
  ASSERT_TRUE(cpu.task && cpu.service) << cpu.error;
  const auto& task = cpu.task;
  auto& service = cpu.service;
  EvalOptions options;
  options.seeds = 2;
  options.threads = 1;
  options.timing_budget_s = 0.2;
  options.call_timeout = milliseconds(60'000);
  for (int i = 0; i < 6; ++i) {
    // Distinct sources: each job builds its own, as the timings of others run.
    const std::string source = "#include <cstdint>\n// job " + std::to_string(i) +
                               "\nextern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n"
                               "  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];\n}\n";
    ASSERT_TRUE(service->Submit({"job-" + std::to_string(i), task, "cpu", {"candidate.cc", source, 0}, options}).ok());
  }
  std::vector<Verdict> verdicts;
  for (int i = 0; i < 6; ++i) {
    auto verdict = service->NextVerdict(milliseconds(300'000));
    ASSERT_TRUE(verdict.has_value()) << "only " << i << " verdicts came";
    verdicts.push_back(std::move(verdict->verdict));
  }
  for (size_t a = 0; a < verdicts.size(); ++a) {
    const StageRecord* timing = verdicts[a].FindStage(StageId::kTiming);
    ASSERT_NE(timing, nullptr) << verdicts[a].ToJson().dump(2);
    ASSERT_TRUE(timing->details.timing && timing->details.timing->waited_s) << "the timing shared the cores";
    const auto [begin, end] = Window(verdicts[a], *timing);
    for (size_t b = 0; b < verdicts.size(); ++b) {
      if (b == a) continue;
      for (const StageId stage : {StageId::kTiming, StageId::kCorrectness}) {
        const StageRecord* other = verdicts[b].FindStage(stage);
        ASSERT_NE(other, nullptr) << verdicts[b].ToJson().dump(2);
        const auto [other_begin, other_end] = Window(verdicts[b], *other);
        EXPECT_TRUE(other_end <= begin || end <= other_begin)
            << "job " << b << "'s " << StageName(stage) << " overlapped job " << a << "'s timing";
      }
    }
  }
}

}  // namespace
}  // namespace ksmith
