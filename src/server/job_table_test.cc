#include "server/job_table.h"

#include <thread>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using json = nlohmann::json;

JobRecord Job(const std::string& id, const std::string& client, const std::string& client_id = "") {
  JobRecord job;
  job.id = id;
  job.client = client;
  job.client_id = client_id;
  job.task = "relu";
  job.backend = "cpu";
  return job;
}

TEST(JobTable, OneVerdictPerJobWithItsEventsInOrder) {
  JobTable table(100, 10);
  ASSERT_TRUE(table.Reserve("c", 1));
  EXPECT_EQ(table.Add(Job("j1", "c")).admission, JobTable::Admission::kNew);
  table.MarkStarted("j1");
  table.AddProgress("j1", "correctness 3/9");
  table.Finish("j1", json{{"status", "passed"}});
  table.Finish("j1", json{{"status", "wrong_output"}});  // a second verdict is ignored
  const auto job = table.Get("j1");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->state, JobState::kDone);
  EXPECT_EQ(job->verdict["status"], "passed");
  bool done = false;
  const auto events = table.EventsFrom("j1", 0, std::chrono::milliseconds(0), done);
  ASSERT_TRUE(events.has_value());
  std::vector<std::string> kinds;
  for (const auto& event : *events) kinds.push_back(event.kind + ":" + event.data.dump());
  EXPECT_EQ(kinds, (std::vector<std::string>{"state:{\"state\":\"queued\"}", "state:{\"state\":\"running\"}",
                                             "progress:{\"line\":\"correctness 3/9\"}", "state:{\"state\":\"done\"}",
                                             "verdict:{\"status\":\"passed\"}"}));
  const JobCounts counts = table.Counts();
  EXPECT_EQ(counts.verdicts_by_status.at("passed"), 1u);
  EXPECT_EQ(counts.latency_count, 1u);
  EXPECT_EQ(counts.latency_bucket_count.back(), 1u);  // +Inf holds every one
}

TEST(JobTable, ClientIdsAreIdempotentPerClientAndQuotasHold) {
  JobTable table(100, 2);
  ASSERT_TRUE(table.Reserve("a", 2));
  EXPECT_FALSE(table.Reserve("a", 1));  // a third unfinished job is over the quota
  EXPECT_TRUE(table.Reserve("b", 1));   // another client has its own
  table.Add(Job("j1", "a", "k"));
  const auto again = table.Add(Job("j2", "a", "k"));
  EXPECT_EQ(again.admission, JobTable::Admission::kDuplicate);
  EXPECT_EQ(again.id, "j1");
  EXPECT_EQ(table.Add(Job("j3", "b", "k")).admission, JobTable::Admission::kNew);  // same key, other client
  EXPECT_TRUE(table.Reserve("a", 1));  // the duplicate gave its room back
  table.Finish("j1", json{{"status", "passed"}});
  EXPECT_TRUE(table.Reserve("a", 1));  // a finished job frees its room
  // force_refresh: the key names a new job; the old job's finish does not free the new mapping.
  table.ForgetClientId("a", "k");
  table.Add(Job("j4", "a", "k"));
  EXPECT_EQ(table.FindByClientId("a", "k"), "j4");
}

TEST(JobTable, WaitersWakeWhenVerdictsComeAndOldJobsAreForgotten) {
  JobTable table(2, 100);
  ASSERT_TRUE(table.Reserve("c", 3));
  for (const char* id : {"j1", "j2", "j3"}) table.Add(Job(id, "c"));
  std::thread finisher([&table] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const char* id : {"j1", "j2", "j3"}) table.Finish(id, json{{"status", "passed"}});
  });
  EXPECT_TRUE(table.WaitDone({"j1", "j2", "j3"}, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  finisher.join();
  EXPECT_FALSE(table.Get("j1").has_value());  // two finished kept: the oldest went
  EXPECT_TRUE(table.Get("j3").has_value());
  bool done = false;
  const auto events = table.EventsFrom("j3", 1, std::chrono::milliseconds(0), done);
  ASSERT_TRUE(events.has_value());
  EXPECT_TRUE(done);
  EXPECT_EQ(events->back().kind, "verdict");
  EXPECT_FALSE(table.EventsFrom("nope", 0, std::chrono::milliseconds(0), done).has_value());
  EXPECT_TRUE(table.WaitDone({"j3"}, std::chrono::steady_clock::now()));  // done: no wait needed
}

}  // namespace
}  // namespace ksmith
