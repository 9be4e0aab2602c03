// `ksmith serve` on loopback with the local broker: eight clients and 80 jobs of honest and
// hostile candidates, native and ModelNew, each getting exactly the verdict `ksmith eval` gives;
// bad clients refused with clear errors; SIGTERM finishing the jobs in flight; KernelGYM's
// endpoints as its client calls them. Every wait is bounded.
#include <sys/socket.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "kernelbench_import.h"
#include "serve_support.h"
#include "store/run_store.h"

namespace ksmith::it {
namespace {

using nlohmann::json;

std::vector<CandidateKind> Kinds() {
  std::vector<CandidateKind> kinds = NativeKinds();
  const fs::path modelnew = CandidatesDir() / "modelnew";
  kinds.push_back({"kb_l0_001_linear_scale", modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py", 30000});
  kinds.push_back({"kb_l0_001_linear_scale", modelnew / "hostile_exit_kb_l0_001_linear_scale.py", 30000});
  return kinds;
}

json Candidate(const CandidateKind& kind, const std::string& client_id) {
  return {{"task", kind.task}, {"backend", "cpu"}, {"source", Slurp(kind.file)},
          {"file_name", kind.file.filename().string()}, {"client_id", client_id}, {"options", VolumeOptions(kind)}};
}

TEST(Serve, EightClientsSubmit80JobsAndEachGetsOneVerdictAsEvalGives) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = ImportOnce("test-problems", {(ProblemsDir() / "problems").string()});
  const std::vector<std::string> env = {"KSMITH_TASKS_PATH=" + imported.out.string()};
  const auto kinds = Kinds();
  const auto expected = EvalStatuses(kinds, env);
  TempDir folder("serve-load");
  Server server = StartServe(folder.path(), {"--no-auth", "--backend", "cpu", "--jobs", "2"}, env);
  ASSERT_GT(server.port, 0) << server.process.Log();

  constexpr int kClients = 8, kJobs = 80;
  // Job i is of kind i % 10, except that ModelNew kinds (2 s each) come one job in ten.
  auto kind_of = [&kinds](int job) {
    const int slot = job % 10;
    return slot == 9 ? 8 + (job / 10) % 2 : slot % 8;
  };
  std::mutex mutex;
  std::map<std::string, int> kind_by_id;  // guarded by mutex
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client http = Client(server.port);
      httplib::Headers headers = {{"X-Ksmith-Client", "client" + std::to_string(c)}};
      std::vector<int> mine;
      for (int job = c; job < kJobs; job += kClients) mine.push_back(job);
      // Batches of 1 to 5, single-candidate bodies and arrays alike.
      for (size_t start = 0, size = 1; start < mine.size(); start += size, size = size % 5 + 1) {
        const size_t end = std::min(mine.size(), start + size);
        json body;
        if (end - start == 1) {
          body = Candidate(kinds[kind_of(mine[start])], "job-" + std::to_string(mine[start]));
        } else {
          body = {{"candidates", json::array()}};
          for (size_t i = start; i < end; ++i) {
            body["candidates"].push_back(Candidate(kinds[kind_of(mine[i])], "job-" + std::to_string(mine[i])));
          }
        }
        const auto reply = http.Post("/v1/evaluations", headers, body.dump(), "application/json");
        const json jobs = BodyJson(reply);
        if (!reply || reply->status != 202 || !jobs.contains("jobs") || jobs["jobs"].size() != end - start) {
          ADD_FAILURE() << "client " << c << ": " << (reply ? reply->body : "no reply");
          ++failures;
          return;
        }
        std::lock_guard lock(mutex);
        for (size_t i = start; i < end; ++i) kind_by_id[jobs["jobs"][i - start]["id"]] = kind_of(mine[i]);
      }
      // The same client id again is the same job, not a new one.
      const auto again = BodyJson(http.Post("/v1/evaluations", headers,
                                            Candidate(kinds[kind_of(mine[0])], "job-" + std::to_string(mine[0])).dump(),
                                            "application/json"));
      EXPECT_TRUE(again.contains("jobs") && again["jobs"][0].value("duplicate", false)) << again.dump();
    });
  }
  for (auto& client : clients) client.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_EQ(kind_by_id.size(), static_cast<size_t>(kJobs));

  // One job's progress as server-sent events, to its verdict.
  httplib::Client http = Client(server.port);
  std::string stream;
  const std::string streamed = kind_by_id.rbegin()->first;
  http.Get(("/v1/evaluations/" + streamed + "/events").c_str(), [&stream](const char* data, size_t length) {
    stream.append(data, length);
    return true;
  });
  EXPECT_NE(stream.find("event: state"), std::string::npos) << stream;
  EXPECT_NE(stream.find("event: verdict\ndata: {"), std::string::npos) << stream;

  std::map<std::string, int> by_status;
  for (const auto& [id, kind] : kind_by_id) {
    const json verdict = WaitForVerdict(http, id);
    ASSERT_TRUE(verdict.is_object()) << id << " got no verdict\n" << server.process.Log();
    EXPECT_EQ(verdict.value("status", std::string()), expected[kind]) << kinds[kind].file << ": " << verdict.value("reason", std::string());
    ++by_status[verdict.value("status", std::string())];
  }
  EXPECT_GE(by_status.size(), 5u);
  // Exactly one verdict per job: the server counted kJobs and no more.
  const std::string metrics = http.Get("/metrics")->body;
  int64_t counted = 0;
  for (size_t at = metrics.find("ksmith_verdicts_total{"); at != std::string::npos;
       at = metrics.find("ksmith_verdicts_total{", at + 1)) {
    counted += std::stoll(metrics.substr(metrics.find("} ", at) + 2));
  }
  EXPECT_EQ(counted, kJobs) << metrics;

  server.process.Signal(SIGTERM);
  ASSERT_EQ(server.process.Wait(std::chrono::seconds(60)), 0) << server.process.Log();
  // Every job and its verdict are in the run store, each under its job id.
  auto store = RunStore::Open(server.db);
  ASSERT_TRUE(store.ok()) << store.error().message;
  size_t stored = 0;
  const auto runs = store.value()->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  for (const auto& run : *runs) {
    EXPECT_EQ(run.strategy, "serve");
    const auto candidates = store.value()->Candidates(run.id);
    ASSERT_TRUE(candidates.ok()) << candidates.error().message;
    for (const auto& candidate : *candidates) {
      EXPECT_EQ(kind_by_id.count(candidate.job_id), 1u) << candidate.job_id;
      EXPECT_TRUE(candidate.verdict.has_value()) << candidate.job_id;
      ++stored;
    }
  }
  EXPECT_EQ(stored, static_cast<size_t>(kJobs));
}

TEST(Serve, BadClientsAreRefusedClearlyAndTheServerLivesOn) {
  TempDir folder("serve-bad");
  const std::string token = "s3cret-token";
  Server server = StartServe(folder.path(), {"--backend", "cpu", "--read-timeout-s", "2", "--max-body-mib", "4"},
                             {"KSMITH_SERVE_TOKEN=" + token});
  ASSERT_GT(server.port, 0) << server.process.Log();
  httplib::Client anonymous = Client(server.port);
  httplib::Client wrong = Client(server.port, "not-the-token");
  httplib::Client good = Client(server.port, token);
  const std::string honest = Slurp(HonestDir() / "vector_add_fast.cpp");
  const json job = {{"task", "vector_add"}, {"backend", "cpu"}, {"source", honest}, {"options", VolumeOptions({})}};

  auto expect_error = [](const httplib::Result& reply, int status, const std::string& code, const std::string& words) {
    ASSERT_TRUE(reply) << "no reply";
    EXPECT_EQ(reply->status, status) << reply->body;
    const json body = json::parse(reply->body, nullptr, false);
    ASSERT_TRUE(body.contains("error")) << reply->body;
    EXPECT_EQ(body["error"].value("code", std::string()), code) << reply->body;
    EXPECT_NE(body["error"].value("message", std::string()).find(words), std::string::npos) << reply->body;
  };
  expect_error(anonymous.Post("/v1/evaluations", job.dump(), "application/json"), 401, "unauthorized", "Authorization");
  expect_error(wrong.Post("/v1/evaluations", job.dump(), "application/json"), 401, "unauthorized", "not this server's");
  EXPECT_EQ(anonymous.Get("/healthz")->status, 200);  // health needs no token
  expect_error(good.Post("/v1/evaluations", "{\"task\": \"vector_add\", ", "application/json"), 400, "bad_request",
               "not valid JSON");
  expect_error(good.Post("/v1/evaluations", json{{"task", "no_such_task"}, {"source", honest}}.dump(), "application/json"),
               404, "unknown_task", "no_such_task");
  expect_error(good.Post("/v1/evaluations", json{{"task", "../../etc"}, {"source", honest}}.dump(), "application/json"),
               400, "bad_request", "not a task name");
  expect_error(good.Post("/v1/evaluations", json{{"task", "vector_add"}}.dump(), "application/json"), 400,
               "bad_request", "body.source: missing");
  expect_error(good.Post("/v1/evaluations", json{{"candidates", {job, json{{"task", "vector_add"}, {"source", 3}}}}}.dump(),
                         "application/json"),
               400, "bad_request", "candidates[1].source");
  expect_error(good.Post("/v1/evaluations", json{{"task", "vector_add"}, {"source", honest}, {"options", {{"seeds", 0}}}}.dump(),
                         "application/json"),
               400, "bad_request", "options.seeds");
  // 20 MB: over the body limit, refused before it is read.
  const json huge = {{"task", "vector_add"}, {"source", std::string(size_t{20} << 20, 'x')}};
  expect_error(good.Post("/v1/evaluations", huge.dump(), "application/json"), 413, "too_large", "limit");
  // A source over the per-source limit inside a body that fits.
  const json big = {{"task", "vector_add"}, {"source", std::string(size_t{2} << 20, 'x')}};
  expect_error(good.Post("/v1/evaluations", big.dump(), "application/json"), 413, "too_large", "body.source");

  // Bodies must come plain and with their length: httplib's limit holds only against a length.
  expect_error(anonymous.Post("/healthz", "x", "text/plain"), 405, "method_not_allowed", "GET");
  expect_error(good.Post("/v1/evaluations", {{"Content-Encoding", "gzip"}}, job.dump(), "application/json"), 415,
               "unsupported_encoding", "uncompressed");
  {
    const int chunked = ConnectLoopback(server.port);
    ASSERT_GE(chunked, 0);
    const std::string request = "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n";
    ASSERT_GT(::send(chunked, request.data(), request.size(), MSG_NOSIGNAL), 0);
    char reply[512] = {};
    timeval limit{5, 0};
    ::setsockopt(chunked, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    const ssize_t got = ::recv(chunked, reply, sizeof reply - 1, 0);
    ::close(chunked);
    EXPECT_TRUE(got > 0 && std::string(reply).starts_with("HTTP/1.1 411")) << reply;
  }

  // A slow client that sends half a request and stops holds nothing for long.
  const int slow = ConnectLoopback(server.port);
  ASSERT_GE(slow, 0);
  const std::string half = "POST /v1/evaluations HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n";
  ASSERT_GT(::send(slow, half.data(), half.size(), MSG_NOSIGNAL), 0);
  EXPECT_EQ(good.Get("/healthz")->status, 200);  // served meanwhile
  timeval wait{8, 0};
  ::setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buffer[4096];
  const auto start = std::chrono::steady_clock::now();
  // After the read timeout the server refuses the request (a 4xx) or just closes the connection.
  std::string answer;
  const ssize_t got = ::recv(slow, buffer, sizeof buffer, 0);
  if (got > 0) answer.assign(buffer, static_cast<size_t>(got));
  ::close(slow);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(6)) << "the slow client was never dropped";
  EXPECT_TRUE(answer.empty() || answer.starts_with("HTTP/1.1 4")) << answer;

  // Unharmed: a real job still gets its verdict.
  const json accepted = BodyJson(good.Post("/v1/evaluations", job.dump(), "application/json"));
  ASSERT_TRUE(accepted.contains("jobs")) << accepted.dump();
  const json verdict = WaitForVerdict(good, accepted["jobs"][0]["id"], std::chrono::seconds(300));
  EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.dump();
  expect_error(good.Get("/v1/evaluations/j-0000000000000000"), 404, "unknown_job", "no job");
}

TEST(Serve, RefusesToStartWithoutATokenOffLoopback) {
  TempDir folder("serve-auth");
  const CliResult open = RunKsmith({"serve", "--listen", "0.0.0.0:0", "--no-auth", "--backend", "cpu", "--db",
                                    (folder.path() / "x.db").string()},
                                   {"KSMITH_SERVE_TOKEN="}, 60);
  EXPECT_EQ(open.exit_code, 2) << open.Describe();
  EXPECT_NE(open.err.find("set KSMITH_SERVE_TOKEN"), std::string::npos) << open.err;
  const CliResult loopback = RunKsmith({"serve", "--listen", "127.0.0.1:0", "--backend", "cpu", "--db",
                                        (folder.path() / "x.db").string()},
                                       {"KSMITH_SERVE_TOKEN="}, 60);
  EXPECT_EQ(loopback.exit_code, 2) << loopback.Describe();
  EXPECT_NE(loopback.err.find("--no-auth"), std::string::npos) << loopback.err;
}

TEST(Serve, SigtermFinishesTheJobsInFlightAndRecordsThem) {
  TempDir folder("serve-term");
  Server server = StartServe(folder.path(), {"--no-auth", "--backend", "cpu"});
  ASSERT_GT(server.port, 0) << server.process.Log();
  httplib::Client http = Client(server.port);
  json body = {{"candidates", json::array()}};
  for (int i = 0; i < 4; ++i) {
    body["candidates"].push_back({{"task", "vector_add"}, {"backend", "cpu"},
                                  {"source", Slurp(HonestDir() / "vector_add_fast.cpp")}, {"options", VolumeOptions({})}});
  }
  const json accepted = BodyJson(http.Post("/v1/evaluations", body.dump(), "application/json"));
  ASSERT_EQ(accepted["jobs"].size(), 4u) << accepted.dump();
  server.process.Signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Stopping: new jobs are refused, with the reason.
  const auto refused = http.Post("/v1/evaluations", body.dump(), "application/json");
  if (refused) {
    EXPECT_EQ(refused->status, 503) << refused->body;
    EXPECT_NE(refused->body.find("shutting down"), std::string::npos) << refused->body;
  }
  ASSERT_EQ(server.process.Wait(std::chrono::seconds(120)), 0) << server.process.Log();
  auto store = RunStore::Open(server.db);
  ASSERT_TRUE(store.ok()) << store.error().message;
  const auto listed = store.value()->ListRuns();
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  const auto& runs = *listed;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "finished");
  const auto read = store.value()->Candidates(runs[0].id);
  ASSERT_TRUE(read.ok()) << read.error().message;
  const auto& candidates = *read;
  ASSERT_EQ(candidates.size(), 4u);
  for (const auto& candidate : candidates) {
    ASSERT_TRUE(candidate.verdict.has_value());
    EXPECT_EQ(candidate.status, "passed") << candidate.verdict->dump();
  }
  // A server started again on the same store answers for the jobs of the one before.
  Server again = StartServe(folder.path(), {"--no-auth", "--backend", "cpu"}, {}, "serve");
  ASSERT_GT(again.port, 0) << again.process.Log();
  httplib::Client later = Client(again.port);
  const json old = BodyJson(later.Get(("/v1/evaluations/" + accepted["jobs"][0]["id"].get<std::string>()).c_str()));
  EXPECT_EQ(old.value("state", std::string()), "done") << old.dump();
  EXPECT_EQ(old["verdict"].value("status", std::string()), "passed") << old.dump();
  EXPECT_EQ(old["from_store"].value("run", std::string()), runs[0].id) << old.dump();
  EXPECT_EQ(later.Get("/v1/evaluations/j-0000000000000000")->status, 404);
}

// A request as Dr.Kernel's reward client sends it (drkernel/kernel/rewards/reward_client.py at
// hkust-nlp/KernelGYM 3a84417): POST /evaluate, poll /status every second, then /results.
TEST(Serve, KernelGymEndpointsAnswerItsClientInItsFieldNames) {
  SKIP_WITHOUT_TORCH();
  TempDir folder("serve-gym");
  Server server = StartServe(folder.path(), {"--no-auth", "--backend", "cpu", "--kernelgym-backend", "cpu"});
  ASSERT_GT(server.port, 0) << server.process.Log();
  httplib::Client http = Client(server.port);
  const std::string reference = Slurp(ProblemsDir() / "problems" / "1_Linear_Scale.py");
  auto request = [&](const std::string& task_id, const fs::path& kernel) {
    return json{{"task_id", task_id}, {"reference_code", reference}, {"kernel_code", Slurp(kernel)},
                {"toolkit", "kernelbench"}, {"backend_adapter", "kernelbench"}, {"backend", "cuda"},
                {"num_correct_trials", 5}, {"num_perf_trials", 100}, {"timeout", 300}, {"priority", "normal"},
                {"entry_point", "Model"}, {"is_valid", false}, {"verbose_errors", nullptr},
                {"enable_profiling", nullptr}, {"workflow", "kernelbench"}};
  };
  auto result_of = [&](const std::string& task_id, const fs::path& kernel) {
    const auto posted = http.Post("/evaluate", request(task_id, kernel).dump(), "application/json");
    EXPECT_TRUE(posted && posted->status == 200) << (posted ? posted->body : "no reply");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(600);
    while (std::chrono::steady_clock::now() < deadline) {
      const json status = BodyJson(http.Get(("/status/" + task_id).c_str()));
      const std::string state = status.value("status", std::string());
      if (state == "completed" || state == "failed") break;
      EXPECT_TRUE(state == "pending" || state == "processing") << status.dump();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return BodyJson(http.Get(("/results/" + task_id).c_str()));
  };
  const fs::path modelnew = CandidatesDir() / "modelnew";
  const json honest = result_of("rl_batch_001_0", modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py");
  EXPECT_EQ(honest.value("task_id", std::string()), "rl_batch_001_0");
  EXPECT_EQ(honest.value("status", std::string()), "completed") << honest.dump();
  EXPECT_EQ(honest.value("compiled", false), true) << honest.dump();
  EXPECT_EQ(honest.value("correctness", false), true) << honest.dump();
  // Torch only: correct, not a decoy (KernelGYM flags kernels that pretend), and said so.
  EXPECT_EQ(honest.value("decoy_kernel", true), false) << honest.dump();
  EXPECT_EQ(honest["metadata"].value("custom_kernel", true), false) << honest.dump();
  EXPECT_TRUE(honest["speedup"].is_number()) << honest.dump();
  EXPECT_TRUE(honest["kernel_runtime"].is_number() && honest["reference_runtime"].is_number()) << honest.dump();
  EXPECT_EQ(honest["metadata"]["ksmith_verdict"].value("status", std::string()), "passed");

  const json hostile = result_of("rl_batch_001_1", modelnew / "hostile_exit_kb_l0_001_linear_scale.py");
  EXPECT_EQ(hostile.value("status", std::string()), "completed") << hostile.dump();
  EXPECT_EQ(hostile.value("correctness", true), false) << hostile.dump();
  EXPECT_EQ(hostile.value("error_code", std::string()), "RUNTIME_ERROR") << hostile.dump();
  EXPECT_FALSE(hostile.value("error_message", std::string()).empty());

  // The same task_id again is answered from the first evaluation, as KernelGYM's cache does.
  const json again = BodyJson(http.Post("/evaluate", request("rl_batch_001_0", modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py").dump(),
                                        "application/json"));
  EXPECT_EQ(again.value("status", std::string()), "completed") << again.dump();
  EXPECT_EQ(again["metadata"].value("ksmith_job_id", std::string()), honest["metadata"].value("ksmith_job_id", std::string()));
  EXPECT_EQ(http.Get("/status/never-submitted")->status, 404);
  // A reference that is not a KernelBench problem is refused with the importer's reason.
  json broken = request("rl_batch_001_2", modelnew / "honest_torch_ops_kb_l0_001_linear_scale.py");
  broken["reference_code"] = "import torch\n# no Model here\nx = 1\n";
  const auto refused = http.Post("/evaluate", broken.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 422) << refused->body;
  EXPECT_NE(refused->body.find("reference_code"), std::string::npos) << refused->body;
}

}  // namespace
}  // namespace ksmith::it
