// Hardware counters for `ksmith eval --profile`, through Nsight Compute's CLI (ncu): a fixed,
// small metric set (one ncu run of a few seconds), parsed from ncu's raw CSV and reduced to short
// bottleneck facts that a human and an LLM can act on. ncu's own rule text is not used: it is
// not ground truth (research/infra_anchors.md section 3.1).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ksmith {

/// Metric names ncu accepts (ncu 2025.3, `--query-metrics --chip gh100`).
namespace ncu_metric {
inline constexpr std::string_view kDuration = "gpu__time_duration.sum";  // [ns]
inline constexpr std::string_view kSmThroughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
/// The "Memory" speed of light: the busiest of the memory units (L1, L2, DRAM) [%].
inline constexpr std::string_view kMemoryThroughput =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kDramThroughput = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view kL2HitRate = "lts__t_sector_hit_rate.pct";
inline constexpr std::string_view kAchievedOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view kTheoreticalOccupancy = "sm__maximum_warps_per_active_cycle_pct";
inline constexpr std::string_view kRegistersPerThread = "launch__registers_per_thread";
/// Tensor pipe activity; on Hopper it covers HMMA and the warpgroup (GMMA) instructions [%].
inline constexpr std::string_view kTensorPipe =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active";
/// Stall metrics are kStallPrefix + reason + kStallSuffix: cycles a warp spent stalled for that
/// reason per instruction issued.
inline constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
inline constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";
}  // namespace ncu_metric

/// ncu's path: $KSMITH_NCU when set (nullopt when that is not an executable file: an explicit
/// choice is never silently replaced), else `ncu` on $PATH, else /usr/local/cuda/bin/ncu.
std::optional<std::filesystem::path> FindNcu();
/// FindNcu with its inputs explicit: `configured` ($KSMITH_NCU, or null), `search_path` ($PATH,
/// or null), then `fallback`.
std::optional<std::filesystem::path> FindNcu(const char* configured, const char* search_path,
                                             const std::filesystem::path& fallback);

/// The fixed metric set: duration, SM / memory / DRAM throughput, L2 hit rate, achieved and
/// theoretical occupancy, registers per thread, tensor pipe use and the warp stall reasons.
std::vector<std::string> ProfileMetrics();

/// ncu --clock-control none --print-units base --csv --page raw --metrics <metrics>
///     --target-processes all <replay argv...>
/// Clocks are left free (ncu's default locks them to base) so that counters match our timings.
/// `metrics` empty: ProfileMetrics().
std::vector<std::string> NcuCommand(const std::filesystem::path& ncu,
                                    const std::vector<std::string>& replay_argv,
                                    const std::vector<std::string>& metrics = {});

/// One kernel launch as ncu reported it.
struct KernelProfile {
  std::string kernel;  // ncu's "Kernel Name": demangled, with the parameter list
  int id = -1;         // ncu's launch ID
  std::string block_size;  // "(256, 1, 1)"
  std::string grid_size;
  /// Metric name -> value in base units: durations in ns, sizes in bytes, percentages as 0-100.
  /// Metrics ncu reported as "n/a" are absent.
  std::map<std::string, double> metrics;
};

/// Parses ncu's `--csv --page raw` output: a header row ("ID","Process ID",...,"Kernel Name",
/// ..., then one column per metric), an optional units row, then one row per kernel launch.
/// Lines before the header (==PROF== lines, the program's own output) and after it that are not
/// CSV rows are ignored. Fails with kParse when there is no header or no launch row; the message
/// quotes ncu's ==ERROR== lines when there are some.
Result<std::vector<KernelProfile>> ParseNcuCsv(std::string_view text);

/// Short bottleneck facts, heaviest kernel first (launches of one kernel are merged, weighted by
/// duration; at most three kernels). Per kernel, the kind of limit comes first, then the time
/// per launch, then what applies of: low occupancy, L2 hit rate, tensor pipes, top stalls. E.g.
/// "softmax: memory-bound: DRAM at 87% of peak, SM at 21%", "41.2 us per launch", "low
/// occupancy: 18% achieved (theoretical 25%, ...)", "L2 hit rate 12%", "tensor pipes idle",
/// "top stall: long_scoreboard (waiting on global or local memory), 61% of stall cycles".
/// With one kernel only the first fact names it; with several, every fact does.
std::vector<std::string> BottleneckFacts(const std::vector<KernelProfile>& kernels);

/// Runs ncu (FindNcu) over `replay_argv` and parses its output. Metrics ncu rejects for this GPU
/// are dropped and ncu is run once more. Errors as values: kNotFound when ncu is missing or no
/// kernel ran, kUnsupported when the driver refuses counter access (ERR_NVGPUCTRPERM), kTimeout,
/// kParse when the output holds no results.
Result<std::vector<KernelProfile>> RunProfile(const std::vector<std::string>& replay_argv,
                                              std::chrono::seconds timeout);

}  // namespace ksmith
