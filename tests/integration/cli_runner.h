// Runs the real `ksmith` binary for the integration tests: fork/exec with stdout and stderr
// captured separately, the exit code, and a JSON parse of stdout.
#pragma once

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace ksmith::it {

namespace fs = std::filesystem;

// Both can be overridden, for running the built tests from another checkout (the GPU machine).
inline fs::path SourceDir() {
  const char* configured = std::getenv("KSMITH_TEST_SOURCE_DIR");
  return fs::path(configured && *configured ? configured : KSMITH_SOURCE_DIR);
}
inline fs::path CliPath() {
  const char* configured = std::getenv("KSMITH_TEST_CLI");
  return fs::path(configured && *configured ? configured : KSMITH_CLI_PATH);
}
inline fs::path BuildDir() { return CliPath().parent_path(); }
/// KSMITH_EXHAUSTIVE=1: the few tests that sample a large space (every knob setting of every CUDA
/// seed, KernelBench's levels in full) cover all of it. CI covers a fixed part, to stay inside its
/// time; a change to the seeds or the importer is checked with the whole before it lands.
inline bool Exhaustive() {
  const char* configured = std::getenv("KSMITH_EXHAUSTIVE");
  return configured && std::string_view(configured) == "1";
}
// Every test shares one cache under the build folder: compiled objects and the machine's facts.
inline fs::path CacheDir() { return BuildDir() / "integration-cache"; }
inline fs::path RedteamDir() { return SourceDir() / "tests" / "kernels" / "redteam"; }
inline fs::path HonestDir() { return SourceDir() / "tests" / "kernels" / "honest"; }

struct CliResult {
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  double seconds = 0;

  /// stdout as JSON; a discarded value when it is not JSON.
  nlohmann::json Json() const { return nlohmann::json::parse(out, nullptr, false); }
  /// For failure messages: everything a reader needs to see why.
  std::string Describe() const {
    std::ostringstream text;
    text << "exit " << exit_code << " signal " << signal << (timed_out ? " (timed out)" : "")
         << " after " << seconds << " s\n--- stdout ---\n"
         << out.substr(0, 6000) << "\n--- stderr ---\n"
         << err.substr(0, 3000);
    return text.str();
  }
};

/// In a child about to exec: root, too, is held to files' mode bits from now on (the capabilities
/// that override them leave the bounding set, which an exec of root's re-derives its own from), so
/// that a test can make a folder read-only for ksmith. Best effort: without CAP_SETPCAP nothing
/// changes (PermissionsHoldInChildren says whether they do).
inline void HoldToModeBits() {
  for (const int capability : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER}) {
    ::prctl(PR_CAPBSET_DROP, capability, 0, 0, 0);
  }
}

/// Runs `ksmith <args...>` with the test environment (KSMITH_CACHE_DIR set) plus `extra_env`
/// ("NAME=value"; "NAME=" removes NAME). Kills it after `timeout_s`. With `mode_bits`, the
/// process is held to files' mode bits even as root (HoldToModeBits).
inline CliResult RunKsmith(const std::vector<std::string>& args,
                           const std::vector<std::string>& extra_env = {}, int timeout_s = 600,
                           bool mode_bits = false) {
  CliResult result;
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string item(*entry);
    const auto eq = item.find('=');
    if (eq != std::string::npos) env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  env["KSMITH_CACHE_DIR"] = CacheDir().string();
  for (const auto& item : extra_env) {
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (value.empty()) env.erase(name); else env[name] = value;
  }
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& item : env_strings) envp.push_back(item.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = {CliPath().string()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& item : argv_strings) argv.push_back(item.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = std::string("pipe failed: ") + std::strerror(errno);
    return result;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    if (mode_bits) HoldToModeBits();
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  const auto deadline = start + std::chrono::seconds(timeout_s);
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t count = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (count > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(count));
      } else if (count == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

/// The error object that `--json` prints on stdout for a command that failed: {"error": {kind,
/// exit_code, message}} (README, "Exit codes and errors"); null when stdout is not exactly that.
inline nlohmann::json ErrorObject(const CliResult& run) {
  const auto json = run.Json();
  if (!json.is_object() || json.size() != 1 || !json.contains("error") || !json["error"].is_object()) return nullptr;
  return json["error"];
}

/// Whether stdout is the usage error's object (exit 2) for a command run with --json.
inline bool PrintedUsageErrorJson(const CliResult& run) {
  const auto error = ErrorObject(run);
  return error.is_object() && error.value("kind", std::string()) == "usage" && error.value("exit_code", 0) == 2 &&
         !error.value("message", std::string()).empty();
}

/// Whether a child that HoldToModeBits() cannot write into a folder of mode 0555: false where the
/// tests run as root without the right to drop those capabilities (the read-only tests skip then).
inline bool PermissionsHoldInChildren() {
  char pattern[] = "/tmp/ksmith-mode-bits-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return false;
  ::chmod(pattern, 0555);
  const pid_t child = ::fork();
  if (child == 0) {
    // Through an exec, as ksmith is run: the bounding set holds only what a later exec gets.
    HoldToModeBits();
    const std::string file = std::string(pattern) + "/probe";
    ::execl("/bin/sh", "sh", "-c", "exec 2>/dev/null; : > \"$0\"", file.c_str(), static_cast<char*>(nullptr));
    _exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::chmod(pattern, 0755);
  std::error_code error;
  fs::remove_all(pattern, error);
  return WIFEXITED(status) && WEXITSTATUS(status) != 0;
}

/// Makes sure the machine's facts (bandwidth, FLOP rate) are measured before any evaluation, once
/// per build folder and again when older than an hour. ctest -j runs tests side by side, and a
/// peak measured while another test (or anything else) loads the cores is too low: honest kernels
/// would then look faster than physically possible. So every test process first takes an
/// exclusive lock on the cache; the first one measures with `ksmith doctor --refresh`, repeating
/// until a measurement is within 10% of the best one seen (the cache keeps the last).
inline void EnsureMachineMeasured() {
  static bool done = false;
  if (done) return;
  done = true;
  std::error_code error;
  fs::create_directories(CacheDir(), error);
  const fs::path lock_path = CacheDir() / "integration.lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  const fs::path marker = CacheDir() / "machine-measured.json";
  const auto written = fs::last_write_time(marker, error);
  const bool fresh = !error && fs::file_time_type::clock::now() - written < std::chrono::hours(1);
  if (!fresh) {
    double best_bandwidth = 0, best_flops = 0;
    for (int attempt = 0; attempt < 6; ++attempt) {
      const CliResult doctor = RunKsmith({"doctor", "--refresh", "--json"});
      const auto json = doctor.Json();
      if (doctor.exit_code != 0 || !json.is_object()) break;
      const double bandwidth = json.value("memory_bandwidth_gbs", 0.0);
      const double flops = json.value("fp32_gflops", 0.0);
      best_bandwidth = std::max(best_bandwidth, bandwidth);
      best_flops = std::max(best_flops, flops);
      if (attempt >= 1 && bandwidth >= 0.9 * best_bandwidth && flops >= 0.9 * best_flops) {
        std::ofstream(marker) << doctor.out;
        break;
      }
    }
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

/// Runs EnsureMachineMeasured before the first test of every test process.
class MachineEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { EnsureMachineMeasured(); }
};
inline ::testing::Environment* const kMachineEnvironment =
    ::testing::AddGlobalTestEnvironment(new MachineEnvironment);

/// Reads a whole file (the test's own inputs).
inline std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Files of `dir` ending in `suffix`, sorted by name.
inline std::vector<fs::path> FilesIn(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// A gtest-safe name: letters, digits and underscores only.
inline std::string TestName(const fs::path& file) {
  std::string name = file.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

/// Finds the stage called `name` in a verdict; null when absent.
inline const nlohmann::json* FindStage(const nlohmann::json& verdict, const std::string& name) {
  if (!verdict.contains("stages")) return nullptr;
  for (const auto& stage : verdict["stages"]) {
    if (stage.value("name", std::string()) == name) return &stage;
  }
  return nullptr;
}

/// The first stage whose outcome is "failed"; null when none failed.
inline const nlohmann::json* FailedStage(const nlohmann::json& verdict) {
  if (!verdict.contains("stages")) return nullptr;
  for (const auto& stage : verdict["stages"]) {
    if (stage.value("outcome", std::string()) == "failed") return &stage;
  }
  return nullptr;
}

/// A scratch folder under the build tree, removed when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::error_code error;
    fs::create_directories(BuildDir() / "integration-tmp", error);
    std::string pattern = (BuildDir() / "integration-tmp" / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code error;
    if (!path_.empty()) {
      fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, error);
      fs::remove_all(path_, error);
    }
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace ksmith::it
