// What the `ksmith serve` tests share: background processes (the server, workers, redis-server)
// that are killed when the test ends, a free loopback port, and an HTTP client.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "cli_runner.h"
#include "core/subprocess.h"

namespace ksmith::it {

/// A process started in the background, its output in a log file; killed and reaped when dropped.
class Background {
 public:
  Background() = default;
  Background(std::vector<std::string> argv, const fs::path& log, const std::vector<std::string>& extra_env = {}) {
    SpawnOptions spawn;
    spawn.argv = std::move(argv);
    // This process's environment, with the test cache and `extra_env` over it ("NAME=" removes NAME).
    std::map<std::string, std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      const std::string item(*entry);
      const size_t eq = item.find('=');
      if (eq != std::string::npos) env[item.substr(0, eq)] = item.substr(eq + 1);
    }
    env["KSMITH_CACHE_DIR"] = CacheDir().string();
    for (const auto& item : extra_env) {
      const size_t eq = item.find('=');
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      if (value.empty()) env.erase(item.substr(0, eq)); else env[item.substr(0, eq)] = value;
    }
    for (const auto& [name, value] : env) spawn.environment.push_back(name + "=" + value);
    spawn.output_path = log;
    log_ = log;
    auto pid = SpawnProcess(spawn);
    if (pid.ok()) pid_ = *pid;
  }
  Background(Background&& other) noexcept { *this = std::move(other); }
  Background& operator=(Background&& other) noexcept {
    Kill();
    pid_ = other.pid_;
    log_ = other.log_;
    other.pid_ = -1;
    return *this;
  }
  ~Background() { Kill(); }

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  void Signal(int signal) const {
    if (pid_ > 0) ::kill(pid_, signal);
  }
  /// Waits up to `timeout` for the process to end; its exit code (128 + signal when killed), or
  /// nullopt when it still runs.
  std::optional<int> Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    return ::waitpid(pid_, &status, WNOHANG) == 0;
  }
  std::string Log() const { return Slurp(log_); }

 private:
  void Kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  pid_t pid_ = -1;
  fs::path log_;
};

/// A loopback port nothing listens on now.
inline int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

/// A socket connected to the loopback `port` (raw HTTP, for what a well-behaved client never
/// sends); -1 when nothing accepts there.
inline int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
  ::close(fd);
  return -1;
}

/// Whether something accepts connections on the loopback `port`.
inline bool Listening(int port) {
  const int fd = ConnectLoopback(port);
  if (fd >= 0) ::close(fd);
  return fd >= 0;
}

struct Server {
  Background process;
  int port = 0;
  fs::path db;
};

/// `ksmith serve --listen 127.0.0.1:0 --port-file ... <args>` in `folder`; port 0 when it did not
/// come up within 60 s (the log says why).
inline Server StartServe(const fs::path& folder, const std::vector<std::string>& args,
                         const std::vector<std::string>& extra_env = {}, const std::string& name = "serve") {
  Server server;
  server.db = folder / (name + ".db");
  const fs::path port_file = folder / (name + ".port");
  fs::remove(port_file);  // a server that ran before under this name left its port
  std::vector<std::string> argv = {CliPath().string(), "serve", "--listen", "127.0.0.1:0", "--port-file",
                                   port_file.string(), "--db", server.db.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  server.process = Background(argv, folder / (name + ".log"), extra_env);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && server.process.Running()) {
    const std::string text = fs::exists(port_file) ? Slurp(port_file) : std::string();
    if (!text.empty() && text.back() == '\n') {
      server.port = std::stoi(text);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return server;
}

/// An HTTP client of the server on `port`, with a bearer token when given.
inline httplib::Client Client(int port, const std::string& token = "", int timeout_s = 600) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(timeout_s, 0);
  client.set_write_timeout(60, 0);
  if (!token.empty()) client.set_bearer_token_auth(token.c_str());
  return client;
}

inline nlohmann::json BodyJson(const httplib::Result& result) {
  if (!result) return nullptr;
  return nlohmann::json::parse(result->body, nullptr, false);
}

/// Polls GET /v1/evaluations/{id} until done (bounded by `timeout`); the verdict, or null.
inline nlohmann::json WaitForVerdict(httplib::Client& client, const std::string& id,
                                     std::chrono::seconds timeout = std::chrono::seconds(900)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto body = BodyJson(client.Get(("/v1/evaluations/" + id).c_str()));
    if (body.is_object() && body.value("state", std::string()) == "done") return body["verdict"];
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return nullptr;
}

/// One kind of candidate in a test's stream of jobs.
struct CandidateKind {
  std::string task;
  fs::path file;
  // Short for native kernels (one hangs); a ModelNew's first call starts Python and torch, which a
  // loaded 2-core machine took over 4 s to do (CI, under the whole suite).
  int timeout_ms = 2000;
};

/// What every job of the volume tests is judged with: verification only, one seed per shape, the
/// kind's call timeout, as `ksmith eval --seeds 1 --no-time --timeout-ms <kind's>`.
inline nlohmann::json VolumeOptions(const CandidateKind& kind) {
  return {{"seeds", 1}, {"time", false}, {"timeout_ms", kind.timeout_ms}};
}

/// Honest and hostile native CPU candidates, eight kinds of verdict among them.
inline std::vector<CandidateKind> NativeKinds() {
  return {{"vector_add", HonestDir() / "vector_add_fast.cpp"}, {"relu", HonestDir() / "relu_fast.cpp"},
          {"softmax", HonestDir() / "softmax_slow.cpp"},       {"vector_add", RedteamDir() / "noop_vector_add.cpp"},
          {"transpose", RedteamDir() / "crash_transpose.cpp"}, {"relu", RedteamDir() / "fork_relu.cpp"},
          {"softmax", RedteamDir() / "misspelled_softmax.cpp"}, {"softmax", RedteamDir() / "hang_softmax.cpp"}};
}

/// The status `ksmith eval` gives each kind with its VolumeOptions(kind).
inline std::vector<std::string> EvalStatuses(const std::vector<CandidateKind>& kinds,
                                             const std::vector<std::string>& env = {}) {
  std::vector<std::string> statuses;
  for (const auto& kind : kinds) {
    const CliResult run = RunKsmith({"eval", "--task", kind.task, "--backend", "cpu", "--seeds", "1", "--no-time",
                                     "--timeout-ms", std::to_string(kind.timeout_ms), "--json", "-q", kind.file.string()},
                                    env);
    statuses.push_back(run.Json().is_object() ? run.Json().value("status", std::string("?")) : "?");
    EXPECT_NE(statuses.back(), "?") << run.Describe();
  }
  return statuses;
}

}  // namespace ksmith::it
