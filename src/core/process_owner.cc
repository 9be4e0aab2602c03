#include "core/process_owner.h"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ksmith {
namespace {

// The boot time in seconds since the epoch: /proc/stat's "btime" line; 0 when unreadable.
int64_t BootTime() {
  std::ifstream stat("/proc/stat");
  for (std::string line; std::getline(stat, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

}  // namespace

int64_t ProcessStartTicks(int64_t pid) {
  if (pid <= 0) return 0;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count from the
  // last ')'. starttime is field 22, the 20th after it.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int index = 3; index <= 22 && (fields >> field); ++index) {
    if (index == 22) return std::stoll(field);
  }
  return 0;
}

ProcessOwner ProcessOwner::Current() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  const int64_t pid = ::getpid();
  return {name, pid, ProcessStartTicks(pid)};
}

ProcessOwner::Liveness ProcessOwner::Check() const {
  if (pid <= 0 || host.empty()) return Liveness::kUnknown;
  if (host != Current().host) return Liveness::kElsewhere;
  const int64_t ticks = ProcessStartTicks(pid);
  return ticks != 0 && ticks == start_ticks ? Liveness::kAlive : Liveness::kGone;
}

std::string ProcessOwner::Describe() const { return fmt::format("pid {} on host {}", pid, host); }

std::string ProcessOwner::StartedAt() const {
  const long ticks_per_second = ::sysconf(_SC_CLK_TCK);
  const int64_t boot = BootTime();
  if (start_ticks <= 0 || ticks_per_second <= 0 || boot <= 0 || host != Current().host) return "";
  const time_t started = static_cast<time_t>(boot + start_ticks / ticks_per_second);
  struct tm parts {};
  gmtime_r(&started, &parts);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                     parts.tm_hour, parts.tm_min, parts.tm_sec);
}

}  // namespace ksmith
