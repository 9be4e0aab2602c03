#include "store/run_owner.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ksmith {

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

RunOwner RunOwner::Current() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  const int64_t pid = ::getpid();
  return {name, pid, ProcessStartTicks(pid)};
}

RunOwner::Liveness RunOwner::Check() const {
  if (pid <= 0 || host.empty()) return Liveness::kUnknown;
  if (host != Current().host) return Liveness::kElsewhere;
  const int64_t ticks = ProcessStartTicks(pid);
  return ticks != 0 && ticks == start_ticks ? Liveness::kAlive : Liveness::kGone;
}

std::string RunOwner::Describe() const { return fmt::format("pid {} on host {}", pid, host); }

}  // namespace ksmith
