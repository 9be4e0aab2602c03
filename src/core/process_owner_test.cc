// The owner of a run or a work folder: alive, gone (killed, or its pid reused) or elsewhere, and
// since when.
#include "core/process_owner.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

namespace ksmith {
namespace {

// A process that has exited: its pid, once reaped, names no process (or a later one).
int64_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

TEST(ProcessOwner, ThisProcessIsAliveAndAReapedOneIsGone) {
  const ProcessOwner self = ProcessOwner::Current();
  EXPECT_GT(self.start_ticks, 0);
  EXPECT_FALSE(self.host.empty());
  EXPECT_EQ(self.Check(), ProcessOwner::Liveness::kAlive);
  // The same pid with another start time is a reused pid: not the owner.
  EXPECT_EQ((ProcessOwner{self.host, self.pid, self.start_ticks + 1}).Check(), ProcessOwner::Liveness::kGone);
  EXPECT_EQ((ProcessOwner{self.host, DeadPid(), self.start_ticks}).Check(), ProcessOwner::Liveness::kGone);
  EXPECT_EQ((ProcessOwner{"another-host", self.pid, self.start_ticks}).Check(), ProcessOwner::Liveness::kElsewhere);
  EXPECT_EQ(ProcessOwner{}.Check(), ProcessOwner::Liveness::kUnknown);
}

TEST(ProcessOwner, StartedAtIsThisProcesssStartInUtc) {
  const std::string started = ProcessOwner::Current().StartedAt();
  ASSERT_EQ(started.size(), 20u) << started;  // 2026-11-21T10:35:12Z
  // Within the last day, and not in the future.
  struct tm parts {};
  ASSERT_NE(::strptime(started.c_str(), "%Y-%m-%dT%H:%M:%SZ", &parts), nullptr) << started;
  const time_t then = ::timegm(&parts);
  const time_t now = std::time(nullptr);
  EXPECT_LE(then, now + 1) << started;
  EXPECT_GT(then, now - 24 * 3600) << started;
  EXPECT_EQ((ProcessOwner{"another-host", 1, 100}).StartedAt(), "") << "another host's boot time is not ours";
}

}  // namespace
}  // namespace ksmith
