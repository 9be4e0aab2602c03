// The sandbox walls, tested from the inside: a forked child applies the policy to itself, tries
// what a hostile candidate would try, and reports each outcome through a pipe made beforehand.
#include "sandbox/policy.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// 0 when the call succeeded, else its errno.
int Outcome(long result) { return result >= 0 ? 0 : (errno != 0 ? errno : -1); }

using Probe = std::pair<std::string, std::function<int()>>;

struct SandboxRun {
  Protections protections;
  std::map<std::string, int> outcomes;  // probe name -> 0 (allowed) or errno
  bool child_ok = false;
};

// Forks; the child applies `policy`, runs every probe and writes "name value" lines to a pipe.
SandboxRun RunInSandbox(const SandboxPolicy& policy, const std::vector<Probe>& probes) {
  SandboxRun run;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return run;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    const Protections protections = ApplySandbox(policy);
    std::string report = protections.ToJson().dump() + "\n";
    for (const auto& [name, probe] : probes) {
      errno = 0;
      report += name + " " + std::to_string(probe()) + "\n";
    }
    const char* data = report.data();
    size_t left = report.size();
    while (left > 0) {
      const ssize_t count = ::write(pipe_fds[1], data, left);
      if (count <= 0) ::_exit(2);
      data += count;
      left -= static_cast<size_t>(count);
    }
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t count; (count = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) text.append(buffer, count);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  run.child_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::istringstream lines(text);
  std::string first;
  if (!std::getline(lines, first)) return run;
  run.protections = Protections::FromJson(nlohmann::json::parse(first, nullptr, false));
  for (std::string name; lines >> name;) lines >> run.outcomes[name];
  return run;
}

class SandboxPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(readable_.ok());
    ASSERT_TRUE(scratch_.ok());
    readable_file_ = readable_.path() / "allowed.txt";
    std::ofstream(readable_file_) << "readable\n";
    ::chmod(readable_file_.c_str(), 0644);
    policy_.readable = {readable_.path()};
    policy_.scratch = scratch_.path();
  }

  ScopedTempDir readable_{"ksmith-policy-readable"};
  ScopedTempDir scratch_{"ksmith-policy-scratch"};
  fs::path readable_file_;
  SandboxPolicy policy_;
};

TEST_F(SandboxPolicyTest, ReportsWhichProtectionsTookEffect) {
  const SandboxRun run = RunInSandbox(policy_, {});
  ASSERT_TRUE(run.child_ok);
  EXPECT_TRUE(run.protections.seccomp) << ::testing::PrintToString(run.protections.notes);
  EXPECT_TRUE(run.protections.no_new_privs);
  EXPECT_TRUE(run.protections.rlimits) << ::testing::PrintToString(run.protections.notes);
  if (!run.protections.network_namespace || run.protections.landlock_abi == 0) {
    EXPECT_FALSE(run.protections.notes.empty()) << "a missing protection must say why";
  }
}

TEST_F(SandboxPolicyTest, ForbidsProcessCreationAndExec) {
  const SandboxRun run = RunInSandbox(policy_, {
      {"fork", [] {
         const pid_t child = ::fork();
         if (child == 0) ::_exit(0);
         if (child > 0) ::waitpid(child, nullptr, 0);
         return Outcome(child);
       }},
      {"execve", [] {
         char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
         return Outcome(::execve("/bin/true", argv, nullptr));
       }},
  });
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("fork"), EPERM);
  EXPECT_EQ(run.outcomes.at("execve"), EPERM);
}

TEST_F(SandboxPolicyTest, AllowsThreadsForOpenMP) {
  const SandboxRun run = RunInSandbox(policy_, {{"thread", [] {
    int value = 0;
    std::thread worker([&] { value = 1; });
    worker.join();
    return value == 1 ? 0 : -1;
  }}});
  ASSERT_TRUE(run.child_ok) << "creating a thread killed the sandboxed child";
  EXPECT_EQ(run.outcomes.at("thread"), 0);
}

TEST_F(SandboxPolicyTest, ForbidsSockets) {
  const SandboxRun run = RunInSandbox(policy_, {
      {"inet", [] { return Outcome(::socket(AF_INET, SOCK_STREAM, 0)); }},
      {"unix", [] { return Outcome(::socket(AF_UNIX, SOCK_STREAM, 0)); }},
      {"pair", [] { int fds[2]; return Outcome(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds)); }},
  });
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("inet"), EPERM);
  EXPECT_EQ(run.outcomes.at("unix"), EPERM);
  EXPECT_EQ(run.outcomes.at("pair"), EPERM);
}

TEST_F(SandboxPolicyTest, ForbidsCreatingOrWritingFiles) {
  const std::string target = (scratch_.path() / "created.txt").string();
  const std::string existing = readable_file_.string();
  const SandboxRun run = RunInSandbox(policy_, {
      {"create_tmp", [] { return Outcome(::open("/tmp/ksmith-policy-test-x", O_WRONLY | O_CREAT, 0600)); }},
      {"create_scratch", [&] { return Outcome(::open(target.c_str(), O_WRONLY | O_CREAT, 0600)); }},
      {"write_existing", [&] { return Outcome(::open(existing.c_str(), O_RDWR)); }},
      {"truncate", [&] { return Outcome(::truncate(existing.c_str(), 0)); }},
      {"unlink", [&] { return Outcome(::unlink(existing.c_str())); }},
      {"mkdir", [&] { return Outcome(::mkdir((scratch_.path() / "d").c_str(), 0700)); }},
  });
  ASSERT_TRUE(run.child_ok);
  for (const char* name : {"create_tmp", "create_scratch", "write_existing", "truncate", "unlink", "mkdir"}) {
    EXPECT_NE(run.outcomes.at(name), 0) << name << " was allowed";
  }
  EXPECT_FALSE(fs::exists("/tmp/ksmith-policy-test-x"));
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(ReadFile(readable_file_).value(), "readable\n");
}

TEST_F(SandboxPolicyTest, ReadsOnlyLibrariesAndDeclaredFoldersUnderLandlock) {
  const std::string allowed = readable_file_.string();
  const SandboxRun run = RunInSandbox(policy_, {
      {"usr", [] { return Outcome(::open("/usr/include/stdio.h", O_RDONLY)); }},
      {"declared", [&] { return Outcome(::open(allowed.c_str(), O_RDONLY)); }},
      {"etc_passwd", [] { return Outcome(::open("/etc/passwd", O_RDONLY)); }},
      {"proc_parent", [] { return Outcome(::open(("/proc/" + std::to_string(::getppid()) + "/environ").c_str(), O_RDONLY)); }},
  });
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("declared"), 0);
  if (fs::exists("/usr/include/stdio.h")) {
    EXPECT_EQ(run.outcomes.at("usr"), 0);
  }
  if (run.protections.landlock_abi == 0) GTEST_SKIP() << "Landlock is not available here";
  EXPECT_EQ(run.outcomes.at("etc_passwd"), EACCES);
  EXPECT_EQ(run.outcomes.at("proc_parent"), EACCES);
}

TEST_F(SandboxPolicyTest, ForbidsSignalsToOtherProcessesButNotToItself) {
  const SandboxRun run = RunInSandbox(policy_, {
      {"kill_parent", [] { return Outcome(::kill(::getppid(), 0)); }},
      {"kill_group", [] { return Outcome(::kill(0, 0)); }},
      {"kill_everyone", [] { return Outcome(::kill(-1, 0)); }},
      {"tgkill_parent", [] { return Outcome(::syscall(SYS_tgkill, ::getppid(), ::getppid(), 0)); }},
      {"kill_self", [] { return Outcome(::kill(::getpid(), 0)); }},
  });
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("kill_parent"), EPERM);
  EXPECT_EQ(run.outcomes.at("kill_group"), EPERM);
  EXPECT_EQ(run.outcomes.at("kill_everyone"), EPERM);
  EXPECT_EQ(run.outcomes.at("tgkill_parent"), EPERM);
  EXPECT_EQ(run.outcomes.at("kill_self"), 0);
}

TEST_F(SandboxPolicyTest, ForbidsQueuedSignalsToOtherProcesses) {
  const SandboxRun run = RunInSandbox(policy_, {{"sigqueue_parent", [] {
    const union sigval value{};
    return Outcome(::sigqueue(::getppid(), 0, value));
  }}});
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("sigqueue_parent"), EPERM);
}

TEST_F(SandboxPolicyTest, ForbidsChangingFileModeThroughADescriptor) {
  const std::string file = readable_file_.string();
  const SandboxRun run = RunInSandbox(policy_, {{"fchmod", [&] {
    const int fd = ::open(file.c_str(), O_RDONLY);
    if (fd < 0) return -2;
    return Outcome(::fchmod(fd, 0777));
  }}});
  ASSERT_TRUE(run.child_ok);
  EXPECT_NE(run.outcomes.at("fchmod"), 0);
  struct stat info;
  ASSERT_EQ(::stat(file.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST_F(SandboxPolicyTest, SetsTheResourceLimitsAndLocksThem) {
  policy_.limits.memory_bytes = uint64_t{8} << 30;
  policy_.limits.cpu_seconds = 123;
  // glibc's getrlimit() goes through prlimit64, which the filter denies: ask the kernel directly.
  const auto limit_of = [](int resource) {
    rlimit limit{};
    return ::syscall(SYS_getrlimit, resource, &limit) == 0 ? limit : rlimit{0, 0};
  };
  const SandboxRun run = RunInSandbox(policy_, {
      {"as_matches", [&] { return limit_of(RLIMIT_AS).rlim_cur == (uint64_t{8} << 30) ? 0 : -1; }},
      {"cpu_matches", [&] { return limit_of(RLIMIT_CPU).rlim_max == 123 ? 0 : -1; }},
      {"core_zero", [&] { return limit_of(RLIMIT_CORE).rlim_max == 0 ? 0 : -1; }},
      {"setrlimit", [] { rlimit limit{1, 1}; return Outcome(::setrlimit(RLIMIT_CORE, &limit)); }},
      {"prlimit_raise", [] {
         rlimit limit{RLIM_INFINITY, RLIM_INFINITY};
         return Outcome(::syscall(SYS_prlimit64, 0, RLIMIT_AS, &limit, nullptr));
       }},
  });
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("as_matches"), 0);
  EXPECT_EQ(run.outcomes.at("cpu_matches"), 0);
  EXPECT_EQ(run.outcomes.at("core_zero"), 0);
  EXPECT_NE(run.outcomes.at("setrlimit"), 0);
  EXPECT_NE(run.outcomes.at("prlimit_raise"), 0);
}

TEST_F(SandboxPolicyTest, DropsEveryCapability) {
  const SandboxRun run = RunInSandbox(policy_, {{"effective_caps", [] {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return -1;
    return data[0].effective != 0 || data[1].effective != 0 ? 1 : 0;
  }}});
  ASSERT_TRUE(run.child_ok);
  EXPECT_EQ(run.outcomes.at("effective_caps"), 0);
}

TEST(Protections, JsonRoundTrip) {
  Protections protections;
  protections.rlimits = true;
  protections.seccomp = true;
  protections.attempts_reported = true;
  protections.landlock_abi = 4;
  protections.notes = {"no network namespace: Operation not permitted"};
  const Protections back = Protections::FromJson(protections.ToJson());
  EXPECT_TRUE(back.rlimits);
  EXPECT_FALSE(back.no_new_privs);
  EXPECT_TRUE(back.seccomp);
  EXPECT_TRUE(back.attempts_reported);
  EXPECT_EQ(back.Summary(), "seccomp on (attempts reported), landlock abi 4, network namespace off, rlimits on");
  EXPECT_EQ(back.landlock_abi, 4);
  EXPECT_FALSE(back.network_namespace);
  EXPECT_EQ(back.notes, protections.notes);
  EXPECT_EQ(Protections::FromJson(nlohmann::json::object()).landlock_abi, 0);
}

}  // namespace
}  // namespace ksmith
