// Who runs a run: a killed owner shows as interrupted, a live one keeps a second resume out
// (the owner itself: core/process_owner_test.cc).
#include "core/process_owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "store/database.h"
#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

// Sets the owner columns of `run_id` as another process would have left them.
void SetOwner(const std::filesystem::path& db, const std::string& run_id, const ProcessOwner& owner) {
  auto raw = Database::Open(db);
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  ASSERT_TRUE((*raw)
                  ->Execute("UPDATE runs SET owner_host = ?, owner_pid = ?, owner_start_ticks = ? WHERE id = ?",
                            {owner.host, owner.pid, owner.start_ticks, run_id})
                  .ok());
}

// A process that has exited: its pid, once reaped, names no process (or a later one).
int64_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST(ProcessOwner, ARunWhoseOwnerWasKilledIsInterruptedAndCanBeResumed) {
  testing::StoreFolder folder;
  auto store = folder.Open();
  ASSERT_TRUE(store->CreateRun(testing::SampleRun("r1"), testing::kSampleTaskToml).ok());
  auto run = store->GetRun("r1");
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->owner, ProcessOwner::Current());
  EXPECT_EQ(DisplayStatus(*run), "running");

  const ProcessOwner self = ProcessOwner::Current();
  SetOwner(folder.db_path(), "r1", {self.host, DeadPid(), 12345});  // as left by `kill -9`
  run = store->GetRun("r1");
  EXPECT_EQ(run->status, "running");
  EXPECT_EQ(DisplayStatus(*run), "interrupted");
  ASSERT_TRUE(store->ReopenRun("r1").ok());
  EXPECT_EQ(store->GetRun("r1")->owner, ProcessOwner::Current());
}

TEST(ProcessOwner, ASecondResumeOfARunningRunIsRefusedNamingTheOwner) {
  testing::StoreFolder folder;
  auto store = folder.Open();
  ASSERT_TRUE(store->CreateRun(testing::SampleRun("r1"), testing::kSampleTaskToml).ok());
  // A live process of this host owns it: its parent, which outlives this test.
  const int64_t parent = ::getppid();
  const ProcessOwner live{ProcessOwner::Current().host, parent, ProcessStartTicks(parent)};
  ASSERT_EQ(live.Check(), ProcessOwner::Liveness::kAlive);
  SetOwner(folder.db_path(), "r1", live);
  const Status refused = store->ReopenRun("r1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(refused.error().message.find(fmt::format("run r1 is being run by pid {} on host {}", parent, live.host)),
            std::string::npos)
      << refused.error().message;
  // Since when the owner has had it (its process's start), not since the run was created: the
  // run was created by this test moments ago, its owner started before.
  ASSERT_FALSE(live.StartedAt().empty());
  EXPECT_NE(refused.error().message.find("a process running since " + live.StartedAt()), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find(store->GetRun("r1")->created_at), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(store->GetRun("r1")->owner, live) << "a refused resume claims nothing";

  SetOwner(folder.db_path(), "r1", {"another-host", 77, 1});
  const Status elsewhere = store->ReopenRun("r1");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.error().message.find("pid 77 on host another-host, which cannot be checked from here"),
            std::string::npos)
      << elsewhere.error().message;

  // Once it stopped, anyone may resume it.
  ASSERT_TRUE(store->FinishRun("r1", "stopped", "budget", std::nullopt).ok());
  EXPECT_TRUE(store->ReopenRun("r1").ok());
}

}  // namespace
}  // namespace ksmith
