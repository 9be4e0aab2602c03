#include "testing/child_processes.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "core/cpu_usage.h"

namespace ksmith::testing {

namespace fs = std::filesystem;

std::map<pid_t, uint64_t> ChildProcessesRunning(const fs::path& executable) {
  std::map<pid_t, uint64_t> workers;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code error;
    if (fs::read_symlink(entry.path() / "exe", error) != executable) continue;
    // The parent is the field after the command, which ends at the last ')'.
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    fields >> state >> parent;
    if (parent != ::getpid()) continue;
    const pid_t pid = std::stoi(name);
    workers[pid] = ProcessCpuTicks(pid).value_or(0);
  }
  return workers;
}

}  // namespace ksmith::testing
