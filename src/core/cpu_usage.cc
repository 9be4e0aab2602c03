#include "core/cpu_usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace ksmith {

std::optional<uint64_t> ProcessCpuTicks(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // The command name may hold spaces; fields resume after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  uint64_t user = 0;
  for (int index = 3; fields >> field; ++index) {
    if (index == 14) user = std::stoull(field);
    if (index == 15) return user + std::stoull(field);
  }
  return std::nullopt;
}

std::optional<MachineCpuTicks> ReadMachineCpuTicks() {
  std::ifstream stat("/proc/stat");
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu") {
    return std::nullopt;
  }
  return MachineCpuTicks{user + nice + system + irq + softirq, steal};
}

double ClockTicksPerSecond() { return static_cast<double>(::sysconf(_SC_CLK_TCK)); }

}  // namespace ksmith
