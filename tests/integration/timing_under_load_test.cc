// Timing on a machine that other processes keep busy: an honest parallel kernel's clocks may disagree
// by a few ms there (its reply waits for a core behind its own threads; 2.2 ms was seen on two cores
// under four busy processes, not in every run), which must not convict it of moving the timer, while
// a candidate that does move it is still caught under the same load. Whether a run shows the gap
// depends on the scheduler: the test holds the property (honest passes, tamper caught) either way.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace
}  // namespace ksmith::it
