// Timing on a machine that other processes keep busy: an honest parallel kernel's clocks may disagree
// by a few ms there (its reply waits for a core behind its own threads; 2.2 ms was seen on two cores
// under four busy processes, not in every run), which must not convict it of moving the timer, while
// a candidate that does move it is still caught under the same load. Whether a run shows the gap
// depends on the scheduler: the test holds the property (honest passes, tamper caught) either way.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

// Busy processes, two per core, for as long as the object lives.
class BusyMachine {
 public:
  BusyMachine() {
    const unsigned count = 2 * std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < count; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        for (volatile uint64_t spin = 0;; ++spin) {
        }
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyMachine() {
    for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

nlohmann::json Verdict(const fs::path& kernel, const std::string& task) {
  const CliResult run = RunKsmith({"eval", "--task", task, kernel.string(), "--json", "--quiet", "--timing-budget", "0.5"});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  return run.Json();
}

TEST(TimingUnderLoad, AnHonestParallelKernelPassesAndATimerTamperIsStillCaught) {
  BusyMachine busy;
  for (const auto& [kernel, task] : {std::pair{"leaky_relu_fast.cpp", "leaky_relu"}, {"relu_fast.cpp", "relu"}}) {
    const nlohmann::json honest = Verdict(HonestDir() / kernel, task);
    EXPECT_EQ(honest.value("status", ""), "passed") << kernel << ": " << honest.value("reason", "") << "\n" << honest.dump();
  }
  const nlohmann::json tamper = Verdict(SourceDir() / "tests" / "kernels" / "redteam" / "timer_tamper_matmul.cpp", "matmul");
  EXPECT_EQ(tamper.value("status", ""), "integrity_violation") << tamper.dump();
  EXPECT_NE(tamper.value("reason", "").find("in-process timer"), std::string::npos) << tamper.value("reason", "");
}

// The steady clock's readings look like PIE, heap and stack addresses (0x55..., 0x56..., 0x7f...
// in the top byte) within about 26 and 39 hours of uptime, where the red team's first heuristic
// skipped them and it passed honestly on CI's machines three times. A time namespace puts the
// evaluation there on any machine.
TEST(TimingUnderLoad, ATimerTamperIsCaughtWhenTheClockReadsLikeAnAddress) {
  if (std::system("unshare --time --fork true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no time namespace here (unshare --time needs CAP_SYS_ADMIN and Linux 5.6)";
  }
  const double uptime_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  for (const double window_s : {26.2 * 3600, 38.9 * 3600}) {  // top byte 0x55, then 0x7f
    const auto offset_s = static_cast<long long>(window_s - uptime_s);
    const std::string command = "env KSMITH_CACHE_DIR='" + CacheDir().string() + "' unshare --time --monotonic " +
                                std::to_string(offset_s) + " --fork '" + CliPath().string() + "' eval --task matmul '" +
                                (RedteamDir() / "timer_tamper_matmul.cpp").string() +
                                "' --json --quiet --timing-budget 0.5 2>/dev/null";
    std::string out;
    if (std::FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[4096];
      while (const size_t read = std::fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, read);
      ::pclose(pipe);
    }
    const auto verdict = nlohmann::json::parse(out, nullptr, false);
    ASSERT_TRUE(verdict.is_object()) << out;
    EXPECT_EQ(verdict.value("status", ""), "integrity_violation") << window_s / 3600 << " h: " << verdict.value("reason", "");
  }
}

}  // namespace
}  // namespace ksmith::it
