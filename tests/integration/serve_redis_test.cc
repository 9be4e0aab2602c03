// `ksmith serve --broker redis://` with `ksmith worker`s, on a redis-server of the test's own (a free
// port, a temporary folder, AOF on): 100 jobs while one worker is SIGKILLed mid-job, Redis is
// restarted, a worker joins late and another is stopped with SIGTERM. Every job gets exactly one
// verdict, the one `ksmith eval` gives, and nothing acknowledged is lost. Skips, saying why,
// where redis-server is not installed.
#include <map>

#include <fmt/format.h>

#include "serve_support.h"
#include "service/redis/redis_connection.h"

namespace ksmith::it {
namespace {

using nlohmann::json;

bool HaveRedisServer() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

Background StartRedis(const fs::path& folder, int port, bool persistent = true) {
  Background redis({"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--dir", folder.string(),
                    "--appendonly", persistent ? "yes" : "no", "--appendfsync", "always", "--save", "",
                    "--protected-mode", "no"},
                   folder / "redis.log");
  for (int i = 0; i < 200 && !Listening(port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return redis;
}

Background StartWorker(const fs::path& folder, const std::string& broker, const std::string& name) {
  return Background({CliPath().string(), "worker", "--broker", broker, "--backend", "cpu", "--name", name,
                     "--reclaim-after-s", "3", "--drain-s", "0"},
                    folder / (name + ".log"));
}

TEST(ServeRedis, JobsSurviveAKilledWorkerARedisRestartAndAStoppedWorker) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server here (Debian: apt-get install redis-server)";
  const std::vector<CandidateKind> kinds = NativeKinds();
  const std::vector<std::string> expected = EvalStatuses(kinds);
  TempDir folder("serve-redis");
  const int redis_port = FreePort();
  Background redis = StartRedis(folder.path(), redis_port);
  ASSERT_TRUE(Listening(redis_port)) << redis.Log();
  const std::string broker = fmt::format("redis://127.0.0.1:{}/t", redis_port);
  Server server = StartServe(folder.path(), {"--no-auth", "--backend", "cpu", "--broker", broker});
  ASSERT_GT(server.port, 0) << server.process.Log();
  Background w1 = StartWorker(folder.path(), broker, "w1");
  Background w2 = StartWorker(folder.path(), broker, "w2");

  httplib::Client http = Client(server.port);
  constexpr int kJobs = 100;
  std::map<std::string, int> kind_by_id;
  for (int start = 0; start < kJobs; start += 25) {
    json body = {{"candidates", json::array()}};
    for (int job = start; job < start + 25; ++job) {
      const CandidateKind& kind = kinds[job % kinds.size()];
      body["candidates"].push_back({{"task", kind.task}, {"backend", "cpu"}, {"source", Slurp(kind.file)},
                                    {"file_name", kind.file.filename().string()}, {"options", VolumeOptions(kind)}});
    }
    const json accepted = BodyJson(http.Post("/v1/evaluations", body.dump(), "application/json"));
    ASSERT_TRUE(accepted.contains("jobs")) << accepted.dump();
    for (int job = start; job < start + 25; ++job) kind_by_id[accepted["jobs"][job - start]["id"]] = job % kinds.size();
  }
  ASSERT_EQ(kind_by_id.size(), static_cast<size_t>(kJobs));

  RedisConnection redis_client(RedisAddress::Parse(broker).value());
  auto done = [&] {
    auto length = redis_client.Command({"XLEN", "t:verdicts"});
    return length.ok() ? length->integer : int64_t{-1};
  };
  auto wait_for = [&](int64_t verdicts) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(600);
    while (done() < verdicts && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done() >= verdicts;
  };
  // w1 dies mid-job: killed while its heartbeat says it holds jobs.
  ASSERT_TRUE(wait_for(7)) << server.process.Log();
  bool holding = false;  // heartbeats come every 5 s: 10 s of looking sees at least one
  for (int i = 0; i < 200 && !holding; ++i) {
    auto beat = redis_client.Command({"GET", "t:worker:w1"});
    holding = beat.ok() && json::parse(beat->text, nullptr, false).value("in_flight", 0) > 0;
    if (!holding) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(holding) << "w1 was never seen holding a job: the kill would not be mid-job";
  w1.Signal(SIGKILL);
  EXPECT_TRUE(w1.Wait(std::chrono::seconds(10)).has_value());

  // Redis goes down and comes back on its AOF.
  ASSERT_TRUE(wait_for(20)) << w2.Log();
  redis.Signal(SIGTERM);
  ASSERT_TRUE(redis.Wait(std::chrono::seconds(30)).has_value());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  redis = StartRedis(folder.path(), redis_port);
  ASSERT_TRUE(Listening(redis_port)) << redis.Log();

  // A worker joins late; another is stopped with SIGTERM and puts its jobs back.
  ASSERT_TRUE(wait_for(40)) << w2.Log();
  Background w3 = StartWorker(folder.path(), broker, "w3");
  ASSERT_TRUE(wait_for(60)) << w3.Log();
  w2.Signal(SIGTERM);
  EXPECT_EQ(w2.Wait(std::chrono::seconds(60)), 0) << w2.Log();
  Background w4 = StartWorker(folder.path(), broker, "w4");

  ASSERT_TRUE(wait_for(kJobs)) << "verdicts: " << done() << "\n" << w3.Log() << w4.Log();
  std::map<std::string, int> by_worker;
  for (const auto& [id, kind] : kind_by_id) {
    const json verdict = WaitForVerdict(http, id, std::chrono::seconds(120));
    ASSERT_TRUE(verdict.is_object()) << id << " has no verdict on the server\n" << server.process.Log();
    EXPECT_EQ(verdict.value("status", std::string()), expected[kind])
        << kinds[kind].file << " (worker " << verdict["provenance"].value("worker", std::string("?"))
        << "): " << verdict.value("reason", std::string());
    ++by_worker[verdict["provenance"].value("worker", std::string("?"))];
  }
  EXPECT_GT(by_worker["w3"], 0) << "the late worker judged nothing";
  // Exactly one published verdict per job, every entry acknowledged.
  auto entries = redis_client.Command({"XRANGE", "t:verdicts", "-", "+"});
  ASSERT_TRUE(entries.ok());
  std::map<std::string, int> published;
  for (const auto& entry : entries->elements) ++published[entry.at(1).at(1).text];
  EXPECT_EQ(published.size(), static_cast<size_t>(kJobs));
  for (const auto& [id, count] : published) EXPECT_EQ(count, 1) << id;
  auto pending = redis_client.Command({"XPENDING", "t:jobs", "t:workers"});
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->at(0).integer, 0) << "entries left unacknowledged";
}

// A Redis that comes back without its data (no persistence) lost the queued jobs: the server
// queues its unfinished ones again, and each still gets its verdict.
TEST(ServeRedis, JobsLostWithRedisDataAreQueuedAgain) {
  if (!HaveRedisServer()) GTEST_SKIP() << "no redis-server here (Debian: apt-get install redis-server)";
  TempDir folder("serve-redis-lost");
  const int redis_port = FreePort();
  Background redis = StartRedis(folder.path(), redis_port, false);
  ASSERT_TRUE(Listening(redis_port)) << redis.Log();
  const std::string broker = fmt::format("redis://127.0.0.1:{}/t", redis_port);
  Server server = StartServe(folder.path(), {"--no-auth", "--backend", "cpu", "--broker", broker});
  ASSERT_GT(server.port, 0) << server.process.Log();
  httplib::Client http = Client(server.port);
  json body = {{"candidates", json::array()}};
  for (int i = 0; i < 3; ++i) {
    body["candidates"].push_back({{"task", "vector_add"}, {"backend", "cpu"},
                                  {"source", Slurp(HonestDir() / "vector_add_fast.cpp")}, {"options", VolumeOptions({})}});
  }
  const json accepted = BodyJson(http.Post("/v1/evaluations", body.dump(), "application/json"));
  ASSERT_EQ(accepted["jobs"].size(), 3u) << accepted.dump();
  // No worker yet: the jobs sit in Redis, which now dies with them.
  redis.Signal(SIGKILL);
  ASSERT_TRUE(redis.Wait(std::chrono::seconds(30)).has_value());
  redis = StartRedis(folder.path(), redis_port, false);
  ASSERT_TRUE(Listening(redis_port)) << redis.Log();
  Background worker = StartWorker(folder.path(), broker, "w1");
  for (const auto& job : accepted["jobs"]) {
    const json verdict = WaitForVerdict(http, job["id"], std::chrono::seconds(120));
    EXPECT_EQ(verdict.value("status", std::string()), "passed") << verdict.dump() << "\n" << server.process.Log();
  }
  EXPECT_NE(server.process.Log().find("queueing 3 unfinished jobs again"), std::string::npos) << server.process.Log();
}

}  // namespace
}  // namespace ksmith::it
