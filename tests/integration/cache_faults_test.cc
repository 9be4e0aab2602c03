// The cache folder's faults: one ksmith cannot write is said with the folder and the cause (it was
// "cannot create a temporary build folder", with neither), and a build killed mid-way leaves a
// folder under cache/tmp that the next run removes (nothing did).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <thread>

#include "cli_runner.h"
#include "core/process_owner.h"

namespace ksmith::it {
namespace {

class CacheFaults : public ::testing::Test {
 protected:
  // A cache of its own, with the shared cache's measurements of this machine (measuring again
  // would take a minute, and load the cores other tests time on).
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    fs::create_directories(Cache());
    for (const auto& facts : FilesIn(CacheDir(), ".json")) {
      if (facts.filename().string().rfind("machine-", 0) == 0) fs::copy_file(facts, Cache() / facts.filename());
    }
  }
  fs::path Cache() const { return dir_.path() / "cache"; }
  std::string CacheEnv() const { return "KSMITH_CACHE_DIR=" + Cache().string(); }

  CliResult Eval(const fs::path& candidate, bool mode_bits = false) {
    return RunKsmith({"eval", "--task", "vector_add", "--no-time", "--quiet", candidate.string()}, {CacheEnv()}, 600,
                     mode_bits);
  }

  // Build folders (and their owner marks) under cache/tmp.
  std::vector<fs::path> BuildFolders() const {
    std::vector<fs::path> folders;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(Cache() / "tmp", error)) {
      if (entry.path().filename().string().rfind("build-", 0) == 0) folders.push_back(entry.path());
    }
    return folders;
  }

  TempDir dir_{"cache-faults"};
};

TEST_F(CacheFaults, AFolderThatCannotBeWrittenIsNamedWithTheCause) {
  if (!PermissionsHoldInChildren()) GTEST_SKIP() << "root here cannot be held to a folder's mode bits";
  const fs::path honest = HonestDir() / "vector_add_fast.cpp";
  // The build's own folder read-only: the verdict says which folder and why.
  fs::create_directories(Cache() / "tmp");
  ASSERT_EQ(::chmod((Cache() / "tmp").c_str(), 0555), 0);
  const CliResult build = Eval(honest, /*mode_bits=*/true);
  ::chmod((Cache() / "tmp").c_str(), 0755);
  EXPECT_EQ(build.exit_code, 3) << build.Describe();
  EXPECT_NE(build.out.find("cannot create a folder under " + (Cache() / "tmp").string() + ": Permission denied"),
            std::string::npos)
      << build.Describe();
  // The whole cache read-only: said before anything runs.
  ASSERT_EQ(::chmod(Cache().c_str(), 0555), 0);
  const CliResult cache = Eval(honest, /*mode_bits=*/true);
  ::chmod(Cache().c_str(), 0755);
  EXPECT_EQ(cache.exit_code, 3) << cache.Describe();
  EXPECT_NE(cache.err.find("ksmith: error: the cache directory " + Cache().string() +
                           " cannot be written: Permission denied; make it writable, or set KSMITH_CACHE_DIR"),
            std::string::npos)
      << cache.Describe();
}

TEST_F(CacheFaults, ABuildKilledMidWayLeavesAFolderTheNextRunRemoves) {
  // A candidate that takes g++ a few seconds at -O3: time to kill ksmith while it builds.
  std::string source = "#include <cstdint>\n";
  for (int i = 0; i < 1500; ++i) {
    source += "static float f" + std::to_string(i) + "(float x) { for (int k = 0; k < " + std::to_string(3 + i % 7) +
              "; ++k) x = x * 1.0001f + " + std::to_string(i) + ".0f / (k + 1); return x; }\n";
  }
  source += "extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n"
            "  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i] + 0.0f * f0(a[i]);\n}\n";
  const fs::path slow = dir_.path() / "slow.cpp";
  std::ofstream(slow) << source;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv("KSMITH_CACHE_DIR", Cache().c_str(), 1);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(null_fd, STDERR_FILENO);
    ::execl(CliPath().c_str(), "ksmith", "eval", "--task", "vector_add", "--no-time", "--quiet", slow.c_str(),
            static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (BuildFolders().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);  // mid-build: the folder's owner is gone, nothing removes it on the way out
  ::waitpid(pid, nullptr, 0);
  const auto left = BuildFolders();
  ASSERT_FALSE(left.empty()) << "no build folder appeared before the deadline";
  // A live build's folder beside it, marked by this (running) test process, must stay.
  const fs::path live = Cache() / "tmp" / "build-live00";
  fs::create_directories(live);
  const ProcessOwner self = ProcessOwner::Current();
  std::ofstream(live.string() + ".owner") << self.host << " " << self.pid << " " << self.start_ticks << "\n";

  const CliResult next = Eval(HonestDir() / "vector_add_fast.cpp");
  EXPECT_EQ(next.exit_code, 0) << next.Describe();
  for (const auto& folder : left) {
    if (folder.extension() == ".owner") continue;
    EXPECT_FALSE(fs::exists(folder)) << folder << " was left by the killed build and is still there";
    EXPECT_FALSE(fs::exists(folder.string() + ".owner")) << folder;
  }
  EXPECT_TRUE(fs::exists(live)) << "a live process's build folder was removed";
}

}  // namespace
}  // namespace ksmith::it
