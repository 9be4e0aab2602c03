// Work folders left by killed processes are removed; those of live processes never are.
#include "core/work_folders.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/files.h"
#include "core/process_owner.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// A process that has exited: its pid, once reaped, names no process (or a later one).
int64_t DeadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// A folder under `parent` with a file in it, marked as `owner`'s (none when owner.pid == 0).
fs::path MakeFolder(const fs::path& parent, const std::string& name, const ProcessOwner& owner) {
  const fs::path folder = parent / name;
  fs::create_directories(folder / "src");
  std::ofstream(folder / "src" / "kernel.cc") << "// a build's file\n";
  if (owner.pid != 0) {
    std::ofstream(folder.string() + ".owner") << owner.host << " " << owner.pid << " " << owner.start_ticks << "\n";
  }
  return folder;
}

void MakeOld(const fs::path& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - kStaleWorkFolderAge - std::chrono::hours(1));
}

TEST(WorkFolders, AKilledProcesssFoldersGoAndALiveOnesStay) {
  ScopedTempDir parent("work-folders");
  const ProcessOwner self = ProcessOwner::Current();
  const fs::path killed = MakeFolder(parent.path(), "build-killed", {self.host, DeadPid(), 12345});
  const fs::path reused = MakeFolder(parent.path(), "build-reused", {self.host, self.pid, self.start_ticks + 1});
  const fs::path live = MakeFolder(parent.path(), "build-live", self);
  MakeOld(live);  // however old: its owner runs
  const fs::path young = MakeFolder(parent.path(), "nvcc-young", {});
  const fs::path old = MakeFolder(parent.path(), "nvcc-old", {});
  MakeOld(old);
  const fs::path elsewhere = MakeFolder(parent.path(), "worker-elsewhere", {"another-host", 7, 7});
  const fs::path elsewhere_old = MakeFolder(parent.path(), "worker-elsewhere-old", {"another-host", 7, 7});
  MakeOld(elsewhere_old);
  std::ofstream(parent.path() / "build-gone.owner") << self.host << " 1 1\n";  // its folder is gone

  EXPECT_EQ(RemoveStaleWorkFolders(parent.path()), 4u);
  for (const auto& gone : {killed, reused, old, elsewhere_old}) {
    EXPECT_FALSE(fs::exists(gone)) << gone;
    EXPECT_FALSE(fs::exists(gone.string() + ".owner")) << gone;
  }
  for (const auto& kept : {live, young, elsewhere}) {
    EXPECT_TRUE(fs::exists(kept / "src" / "kernel.cc")) << kept;
  }
  EXPECT_TRUE(fs::exists(live.string() + ".owner"));
  EXPECT_FALSE(fs::exists(parent.path() / "build-gone.owner"));
  EXPECT_EQ(RemoveStaleWorkFolders(parent.path() / "missing"), 0u);
}

TEST(WorkFolders, AMarkedTempDirIsMarkedAsThisProcesssAndLeavesNothing) {
  ScopedTempDir parent("work-folders");
  fs::path path;
  {
    ScopedTempDir work("build", parent.path(), OwnerMark::kMark);
    ASSERT_TRUE(work.ok()) << work.error();
    path = work.path();
    const std::string mark = path.string() + ".owner";
    ASSERT_TRUE(fs::exists(mark));
    std::ifstream in(mark);
    ProcessOwner owner;
    in >> owner.host >> owner.pid >> owner.start_ticks;
    EXPECT_EQ(owner, ProcessOwner::Current());
    EXPECT_EQ(RemoveStaleWorkFolders(parent.path()), 0u) << "a live build's folder was removed";
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path.string() + ".owner"));
}

TEST(WorkFolders, AFolderThatCannotBeMadeSaysWhereAndWhy) {
  // A file where the parent should be: the same failure for root and for anyone else.
  ScopedTempDir parent("work-folders");
  std::ofstream(parent.path() / "cache") << "not a folder\n";
  ScopedTempDir work("build", parent.path() / "cache" / "tmp", OwnerMark::kMark);
  ASSERT_FALSE(work.ok());
  EXPECT_NE(work.error().find("cannot create a folder under " + (parent.path() / "cache" / "tmp").string() + ": "),
            std::string::npos)
      << work.error();
  EXPECT_NE(work.error().find("Not a directory"), std::string::npos) << work.error();
}

}  // namespace
}  // namespace ksmith
