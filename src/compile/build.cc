#include "compile/build.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/work_folders.h"

namespace ksmith {
namespace {

// A failed build whose largest process came this close to the memory limit was stopped by it:
// the limits sit well above what honest builds use, and a process at the limit dies where it
// asks for more (cc1plus at 512 MiB peaked at 540 MB resident, the text included).
constexpr double kNearMemoryLimit = 0.75;
// Or a little closer, where the compiler said it could not allocate (one large request fails
// further from the limit).
constexpr double kNearMemoryLimitSaid = 0.25;
// RLIMIT_CPU counts in clock ticks; a process stopped there shows a little under the limit.
constexpr double kNearCpuLimit = 0.95;

// What the compilers and their drivers print when an allocation fails or RLIMIT_CPU stops a
// process: cc1plus ("virtual memory exhausted", "out of memory allocating"), EDG's cudafe++
// ("catastrophic error: out of memory"), C++ runtimes (std::bad_alloc), python (MemoryError);
// strsignal(SIGXCPU) in g++'s "... signal terminated program cc1plus" and cudafe++'s "Internal
// error: CPU time limit exceeded".
bool SaysOutOfMemory(const std::string& log) {
  for (const char* words : {"memory exhausted", "out of memory", "Cannot allocate memory", "bad_alloc", "MemoryError"}) {
    if (log.find(words) != std::string::npos) return true;
  }
  return false;
}

bool SaysCpuLimit(const std::string& log) { return log.find("CPU time limit exceeded") != std::string::npos; }

std::string Seconds(double seconds) { return fmt::format("{:g} s", std::round(seconds * 10) / 10); }

}  // namespace

nlohmann::json BuildOutput::ToJson() const {
  return {{"compiled", compiled},
          {"cache_hit", cache_hit},
          {"shared_object", shared_object.string()},
          {"command", command},
          {"compile_s", compile_s},
          {"sandboxed", sandboxed},
          {"log", log},
          {"resources", ksmith::ToJson(resources)},
          {"sass", sass.ToJson()},
          {"limit_hit", limit_hit ? limit_hit->ToJson() : nlohmann::json()}};
}

ChildLimits BuildLimits::ForChild(bool address_space) const {
  ChildLimits child;
  child.data_bytes = memory_bytes;
  child.address_space_bytes = address_space ? memory_bytes : 0;
  // A stack that grows without bound escapes the data limit (nvcc's cudafe++, out of heap at
  // 1 GB, recursed to 21 GB of stack): the stack gets a quarter of the memory at most.
  child.stack_bytes = memory_bytes / 4;
  child.cpu_seconds = static_cast<uint64_t>(std::ceil(cpu_s));
  return child;
}

std::chrono::milliseconds BuildLimits::WallTimeout(std::chrono::seconds at_least) const {
  const auto cpu = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(1.5 * cpu_s * 1000)));
  return std::max<std::chrono::milliseconds>(at_least, cpu);
}

void RemoveStaleBuildFolders(const std::filesystem::path& cache_directory) {
  for (const char* folder : {"tmp", "scratch"}) RemoveStaleWorkFolders(cache_directory / folder);
}

std::string FormatMemory(uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / double(uint64_t{1} << 30);
  if (gib >= 1) return fmt::format("{:g} GiB", std::round(gib * 100) / 100);
  return fmt::format("{:g} MiB", std::round(static_cast<double>(bytes) / double(uint64_t{1} << 20)));
}

std::optional<BuildLimitHit> FindBuildLimitHit(const ProcessExit& exit, const BuildLimits& limits,
                                               std::chrono::milliseconds wall_timeout, const std::string& compiler) {
  if (exit.succeeded()) return std::nullopt;
  if (exit.timed_out) {
    const double seconds = static_cast<double>(wall_timeout.count()) / 1000;
    return BuildLimitHit{"wall_time", seconds,
                         fmt::format("{} ran past the build's wall-clock limit of {}", compiler, Seconds(seconds))};
  }
  // The CPU time of every process the build waited for adds up here: one of them reached the
  // limit only where the total did, and it ended by SIGXCPU, which its parent reports.
  const bool cpu_signal = exit.signal == SIGXCPU || SaysCpuLimit(exit.output);
  if (cpu_signal && exit.cpu_s >= kNearCpuLimit * limits.cpu_s) {
    return BuildLimitHit{"cpu_time", limits.cpu_s,
                         fmt::format("{} exceeded the build's CPU time limit of {}", compiler, Seconds(limits.cpu_s))};
  }
  const double limit = static_cast<double>(limits.memory_bytes);
  if (exit.tree_memory_exceeded) {
    return BuildLimitHit{"memory", limit,
                         fmt::format("{} and the processes it started together exceeded the build's memory limit of {}",
                                     compiler, FormatMemory(limits.memory_bytes))};
  }
  const double peak = static_cast<double>(exit.peak_rss_bytes);
  if (peak >= kNearMemoryLimit * limit || (peak >= kNearMemoryLimitSaid * limit && SaysOutOfMemory(exit.output))) {
    return BuildLimitHit{"memory", limit,
                         fmt::format("{} exceeded the build's memory limit of {}", compiler, FormatMemory(limits.memory_bytes))};
  }
  return std::nullopt;
}

size_t BuildMemorySlots(const BuildLimits& limits, uint64_t machine_bytes) {
  if (limits.memory_bytes == 0) return kMemorySlotsPerBuild;
  const double half_limit = static_cast<double>(limits.memory_bytes) / kMemorySlotsPerBuild;
  return std::max<size_t>(kMemorySlotsPerBuild,
                          static_cast<size_t>(0.75 * static_cast<double>(machine_bytes) / half_limit));
}

uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
}

}  // namespace ksmith
