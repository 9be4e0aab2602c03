// The build sandbox of KernelBench-format candidates (kernelbench/candidate_build.h): it may run
// compilers, so its walls are namespaces and Landlock rather than seccomp. A candidate that tries,
// while it is built, to reach a server on this machine's loopback, to write outside its build
// folder, and to leave a daemon running, must do none of them; the verdict says how isolated the
// build was. Skips without a python3 with torch.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "kernelbench_import.h"

namespace ksmith::it {
namespace {

using nlohmann::json;

// A TCP listener on 127.0.0.1 that never blocks: Accepted() says whether anyone connected.
class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
  }
  ~LoopbackListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  int port() const { return port_; }
  // Whether a connection that is waiting sent `token`: another test's client on this machine may
  // reach a port it once used, which this listener now holds, and is not the build.
  bool ReceivedToken(const std::string& token) const {
    for (int client; (client = ::accept(fd_, nullptr, nullptr)) >= 0;) {
      const timeval timeout{1, 0};
      ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      std::string received(256, '\0');
      const ssize_t count = ::recv(client, received.data(), received.size(), MSG_WAITALL);
      ::close(client);
      if (count > 0 && received.substr(0, static_cast<size_t>(count)).find(token) != std::string::npos) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

bool SleepRunning(const std::string& seconds) {
  const std::string cmdline = "/bin/sleep" + std::string(1, '\0') + seconds + std::string(1, '\0');
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (text == cmdline) return true;
  }
  return false;
}

TEST(KernelBenchBuildSandbox, TheBuildReachesNoServerWritesNothingOutsideAndLeavesNoDaemon) {
  SKIP_WITHOUT_TORCH();
  LoopbackListener listener;
  ASSERT_GT(listener.port(), 0) << "no loopback listener";
  const std::string tag = std::to_string(::getpid());
  const fs::path outside = CacheDir() / ("escaped-from-the-build-" + tag);
  fs::remove(outside);
  const std::string sleep_seconds = "41." + std::to_string(::getpid() % 1000);
  const std::string token = "ksmith-build-escape-" + tag;
  const fs::path candidate = CacheDir() / ("escape_" + tag + "_kb_l0_006_log_of_positive.py");
  {
    std::ofstream out(candidate);
    out << "import socket, subprocess\n"
        << "import torch\nimport torch.nn as nn\n"
        << "try:\n    socket.create_connection(('127.0.0.1', " << listener.port() << "), timeout=2).sendall(b'" << token
        << "')\n"
        << "except OSError:\n    pass\n"
        << "try:\n    open(" << json(outside.string()).dump() << ", 'w').write('escaped')\n"
        << "except OSError:\n    pass\n"
        << "try:\n    subprocess.Popen(['/bin/sleep', '" << sleep_seconds << "'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        << "except OSError:\n    pass\n"
        << "class ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.log(x + 1e-3) * 0.5\n";
  }
  const Imported imported = ImportOnce("test-problems", {(ProblemsDir() / "problems").string()});
  const CliResult run = RunKsmith({"eval", "--task", "kb_l0_006_log_of_positive", candidate.string(), "--json",
                                   "--quiet", "--timing-budget", "0.2"},
                                  {"KSMITH_TASKS_PATH=" + imported.out.string()});
  const json verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  const json* build = nullptr;
  ASSERT_TRUE(verdict.contains("stages")) << verdict.dump();
  for (const auto& stage : verdict.at("stages")) {
    if (stage.value("name", "") == "build") build = &stage;
  }
  ASSERT_NE(build, nullptr) << verdict.dump();
  const json sandbox = build->at("details").value("build_sandbox", json());
  ASSERT_TRUE(sandbox.is_object()) << build->dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(fs::exists(outside)) << "the build wrote outside its folder";
  EXPECT_FALSE(SleepRunning(sleep_seconds)) << "a daemon the build started outlived it";
  const json isolation = sandbox.value("isolation", json());
  if (!isolation.value("network_isolated", false)) {
    GTEST_SKIP() << "this kernel gives the build no network namespace (" << isolation.dump()
                 << "): its network is not isolated here, and the verdict says so";
  }
  EXPECT_FALSE(listener.ReceivedToken(token)) << "the build reached a server on this machine's loopback";
}

}  // namespace
}  // namespace ksmith::it
