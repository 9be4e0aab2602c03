#include "backends/cuda/profile.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "core/strings.h"
#include "core/subprocess.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using ncu_metric::kStallPrefix;
using ncu_metric::kStallSuffix;

constexpr const char* kDefaultNcu = "/usr/local/cuda/bin/ncu";
constexpr size_t kMaxNcuOutputBytes = size_t{16} << 20;
constexpr size_t kErrorTailBytes = 1500;
constexpr size_t kMaxKernelsInFacts = 3;
constexpr size_t kMaxShortNameChars = 80;

// Thresholds, in % of peak. ncu's guidance: above ~60% a unit is the limiter; below ~40% for
// both compute and memory the kernel is starved of work or waiting on latency.
constexpr double kBoundPct = 60;
constexpr double kLatencyBoundPct = 40;
constexpr double kLowOccupancyPct = 25;
constexpr double kOccupancyGapPct = 30;  // theoretical minus achieved: blocks missing, not resources
constexpr double kLowL2HitPct = 50;
constexpr double kDramRelevantPct = 30;
constexpr double kTensorIdlePct = 1;
constexpr double kTensorReportPct = 5;
constexpr double kComputeRelevantPct = 40;
constexpr double kSecondStallSharePct = 20;

// Warp stall reasons ncu reports on Volta through Hopper, with what each one means for the code.
// "selected" (issuing) and "not_selected" (eligible, another warp issued) are not bottlenecks.
struct StallReason {
  const char* name;
  const char* meaning;
};
constexpr StallReason kStallReasons[] = {
    {"long_scoreboard", "waiting on global or local memory"},
    {"short_scoreboard", "waiting on shared memory or special math functions"},
    {"mio_throttle", "shared memory instruction queue full"},
    {"lg_throttle", "global memory instruction queue full: fewer, wider loads help"},
    {"math_pipe_throttle", "math pipe busy"},
    {"barrier", "waiting at __syncthreads"},
    {"membar", "waiting on a memory fence"},
    {"wait", "fixed-latency dependency"},
    {"dispatch_stall", "dispatcher held the warp back"},
    {"no_instruction", "instruction cache miss"},
    {"branch_resolving", "resolving branch targets"},
    {"drain", "draining memory stores at exit"},
    {"imc_miss", "constant cache miss"},
    {"tex_throttle", "texture unit queue full"},
    {"sleeping", "sleeping or yielding"},
    {"misc", "miscellaneous"},
    {"gmma", "waiting on warpgroup MMA (wgmma) operands or results"},  // Hopper only
    {"selected", nullptr},
    {"not_selected", nullptr},
};

bool IsExecutableFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

std::string StallMetric(std::string_view reason) {
  return fmt::format("{}{}{}", kStallPrefix, reason, kStallSuffix);
}

// One CSV record: fields in double quotes with "" as an escaped quote, or bare.
std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

// "1,234.5" -> 1234.5 (ncu groups thousands); nullopt for "n/a", "" and other text.
std::optional<double> ParseNumber(std::string_view text) {
  std::string digits;
  for (const char c : text) {
    if (c != ',') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Multiplier from `unit` to the base units KernelProfile promises (ns, bytes). `--print-units
// base` already asks for these; this covers CSVs made without it.
double UnitScale(std::string_view unit) {
  if (unit.find('/') != std::string_view::npos) return 1;  // rates: left as printed
  if (unit == "second") return 1e9;
  if (unit == "msecond") return 1e6;
  if (unit == "usecond") return 1e3;
  if (unit.size() == 5 && unit.substr(1) == "byte") {
    switch (unit[0]) {
      case 'K': return 1e3;
      case 'M': return 1e6;
      case 'G': return 1e9;
      case 'T': return 1e12;
      default: return 1;
    }
  }
  return 1;
}

std::string NcuErrorLines(std::string_view output) {
  std::string errors;
  for (const auto& line : SplitLines(output)) {
    if (line.starts_with("==ERROR==")) errors += (errors.empty() ? "" : "\n") + line;
  }
  return errors;
}

// "void ns::softmax<256>(const float *, float *, long)" -> "ns::softmax<256>".
std::string ShortKernelName(std::string_view name) {
  std::string text(name);
  const std::string anonymous = "(anonymous namespace)::";
  for (size_t at; (at = text.find(anonymous)) != std::string::npos;) text.erase(at, anonymous.size());
  if (text.starts_with("void ")) text.erase(0, 5);
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<') ++depth;
    if (text[i] == '>') --depth;
    if (text[i] == '(' && depth == 0 && i > 0) {
      text.resize(i);
      break;
    }
  }
  if (text.size() > kMaxShortNameChars) text = text.substr(0, kMaxShortNameChars - 3) + "...";
  return text;
}

std::string DurationText(double nanoseconds) {
  if (nanoseconds >= 1e6) return fmt::format("{:.2f} ms", nanoseconds / 1e6);
  if (nanoseconds >= 1e3) return fmt::format("{:.1f} us", nanoseconds / 1e3);
  return fmt::format("{:.0f} ns", nanoseconds);
}

// Launches of one kernel merged: metrics averaged with each launch's duration as its weight, so
// that a long launch counts for more than a short one.
struct KernelSummary {
  std::string name;
  int launches = 0;
  double total_ns = 0;
  std::map<std::string, double> weighted_sum;
  std::map<std::string, double> weight;

  std::optional<double> Get(std::string_view metric) const {
    const auto found = weight.find(std::string(metric));
    if (found == weight.end() || found->second <= 0) return std::nullopt;
    return weighted_sum.at(found->first) / found->second;
  }
};

std::vector<KernelSummary> Summarize(const std::vector<KernelProfile>& kernels) {
  std::vector<KernelSummary> summaries;
  std::map<std::string, size_t> index;
  for (const KernelProfile& launch : kernels) {
    auto [at, inserted] = index.emplace(launch.kernel, summaries.size());
    if (inserted) summaries.push_back(KernelSummary{launch.kernel});
    KernelSummary& summary = summaries[at->second];
    const auto duration = launch.metrics.find(std::string(ncu_metric::kDuration));
    const double duration_ns = duration != launch.metrics.end() ? duration->second : 0;
    const double weight = duration_ns > 0 ? duration_ns : 1;
    ++summary.launches;
    summary.total_ns += duration_ns;
    for (const auto& [metric, value] : launch.metrics) {
      summary.weighted_sum[metric] += weight * value;
      summary.weight[metric] += weight;
    }
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const KernelSummary& a, const KernelSummary& b) { return a.total_ns > b.total_ns; });
  return summaries;
}

// The kind of limit, from the speed-of-light percentages.
std::optional<std::string> BoundFact(const KernelSummary& kernel) {
  const auto sm = kernel.Get(ncu_metric::kSmThroughput);
  const auto dram = kernel.Get(ncu_metric::kDramThroughput);
  const auto memory_units = kernel.Get(ncu_metric::kMemoryThroughput);
  if (!sm && !dram && !memory_units) return std::nullopt;
  const double sm_pct = sm.value_or(0);
  const double dram_pct = dram.value_or(0);
  const double memory_pct = std::max(dram_pct, memory_units.value_or(0));
  if (sm_pct >= kBoundPct && memory_pct >= kBoundPct) {
    return fmt::format("compute and memory both near peak: SM at {:.0f}%, memory at {:.0f}% "
                       "(DRAM {:.0f}%)", sm_pct, memory_pct, dram_pct);
  }
  if (dram_pct >= kBoundPct) {
    return fmt::format("memory-bound: DRAM at {:.0f}% of peak, SM at {:.0f}%", dram_pct, sm_pct);
  }
  if (memory_pct >= kBoundPct) {
    return fmt::format("memory-bound in L1, L2 or shared memory: busiest memory unit at {:.0f}% "
                       "of peak, DRAM at {:.0f}%, SM at {:.0f}%", memory_pct, dram_pct, sm_pct);
  }
  if (sm_pct >= kBoundPct) {
    return fmt::format("compute-bound: SM at {:.0f}% of peak, DRAM at {:.0f}%", sm_pct, dram_pct);
  }
  if (std::max(sm_pct, memory_pct) < kLatencyBoundPct) {
    return fmt::format("latency-bound: neither compute (SM {:.0f}%) nor memory (DRAM {:.0f}%) is "
                       "near its peak; see stalls and occupancy", sm_pct, dram_pct);
  }
  return fmt::format("no unit saturated: SM at {:.0f}%, memory at {:.0f}% of peak (DRAM {:.0f}%)",
                     sm_pct, memory_pct, dram_pct);
}

std::optional<std::string> OccupancyFact(const KernelSummary& kernel, bool at_speed_of_light) {
  const auto achieved = kernel.Get(ncu_metric::kAchievedOccupancy);
  // A kernel at a unit's peak does not need more warps: cuBLAS's GEMM runs at 15% occupancy.
  if (!achieved || *achieved >= kLowOccupancyPct || at_speed_of_light) return std::nullopt;
  std::string fact = fmt::format("low occupancy: {:.0f}% achieved", *achieved);
  const auto theoretical = kernel.Get(ncu_metric::kTheoreticalOccupancy);
  const auto registers = kernel.Get(ncu_metric::kRegistersPerThread);
  if (theoretical && *theoretical - *achieved > kOccupancyGapPct) {
    fact += fmt::format(" of {:.0f}% theoretical: too few blocks, or blocks that finish unevenly",
                        *theoretical);
  } else if (theoretical) {
    fact += fmt::format(" (theoretical {:.0f}%, limited by registers or shared memory per block",
                        *theoretical);
    fact += registers ? fmt::format("; {:.0f} registers per thread)", *registers) : ")";
  }
  return fact;
}

std::optional<std::string> StallFact(const KernelSummary& kernel) {
  double total = 0;
  std::vector<std::pair<double, const StallReason*>> stalls;
  for (const StallReason& reason : kStallReasons) {
    const auto value = kernel.Get(StallMetric(reason.name));
    if (!value || *value <= 0) continue;
    if (reason.meaning == nullptr) continue;  // issuing, not stalled
    total += *value;
    stalls.emplace_back(*value, &reason);
  }
  if (stalls.empty() || total <= 0) return std::nullopt;
  std::stable_sort(stalls.begin(), stalls.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string fact = fmt::format("top stall: {} ({}), {:.0f}% of stall cycles", stalls[0].second->name,
                                 stalls[0].second->meaning, 100 * stalls[0].first / total);
  if (stalls.size() > 1 && 100 * stalls[1].first / total >= kSecondStallSharePct) {
    fact += fmt::format("; then {} ({}), {:.0f}%", stalls[1].second->name,
                        stalls[1].second->meaning, 100 * stalls[1].first / total);
  }
  return fact;
}

std::vector<std::string> KernelFacts(const KernelSummary& kernel, double share_pct,
                                     bool several_kernels) {
  // The kind of limit leads: a caller that shows one line shows the most useful one.
  std::vector<std::string> facts;
  if (auto bound = BoundFact(kernel)) facts.push_back(*bound);
  std::string duration = DurationText(kernel.launches > 0 ? kernel.total_ns / kernel.launches : 0) +
                         " per launch";
  if (kernel.launches > 1) duration += fmt::format(" ({} launches)", kernel.launches);
  if (several_kernels) duration += fmt::format(", {:.0f}% of GPU time", share_pct);
  facts.push_back(std::move(duration));

  const double sm_pct = kernel.Get(ncu_metric::kSmThroughput).value_or(0);
  const double dram_pct = kernel.Get(ncu_metric::kDramThroughput).value_or(0);
  const double memory_pct = std::max(dram_pct, kernel.Get(ncu_metric::kMemoryThroughput).value_or(0));
  const bool at_speed_of_light = std::max(sm_pct, memory_pct) >= kBoundPct;
  if (auto occupancy = OccupancyFact(kernel, at_speed_of_light)) facts.push_back(*occupancy);
  if (const auto hit = kernel.Get(ncu_metric::kL2HitRate);
      hit && *hit < kLowL2HitPct && dram_pct >= kDramRelevantPct) {
    facts.push_back(fmt::format("L2 hit rate {:.0f}%", *hit));
  }
  if (const auto tensor = kernel.Get(ncu_metric::kTensorPipe)) {
    if (*tensor < kTensorIdlePct && sm_pct >= kComputeRelevantPct) {
      facts.push_back("tensor pipes idle: the math runs on the CUDA cores");
    } else if (*tensor >= kTensorReportPct) {
      facts.push_back(fmt::format("tensor pipes {:.0f}% busy", *tensor));
    }
  }
  if (auto stall = StallFact(kernel)) facts.push_back(*stall);
  if (several_kernels) {
    const std::string prefix = ShortKernelName(kernel.name) + ": ";
    for (auto& fact : facts) fact = prefix + fact;
  } else {
    facts.front() = ShortKernelName(kernel.name) + ": " + facts.front();
  }
  return facts;
}

Result<ProcessExit> RunNcu(const fs::path& ncu, const std::vector<std::string>& replay_argv,
                           const std::vector<std::string>& metrics, std::chrono::seconds timeout) {
  SpawnOptions options;
  options.argv = NcuCommand(ncu, replay_argv, metrics);
  options.inherit_environment = true;  // ncu needs HOME and the CUDA loader path
  return RunCommand(options, timeout, kMaxNcuOutputBytes);
}

// Metrics of `metrics` that ncu's ==ERROR== lines name: ones this GPU or ncu version lacks.
std::vector<std::string> RejectedMetrics(std::string_view output, const std::vector<std::string>& metrics) {
  const std::string errors = NcuErrorLines(output);
  std::vector<std::string> rejected;
  for (const auto& metric : metrics) {
    if (errors.find(metric) != std::string::npos) rejected.push_back(metric);
  }
  return rejected;
}

}  // namespace

std::optional<fs::path> FindNcu(const char* configured, const char* search_path,
                                const fs::path& fallback) {
  if (configured != nullptr && *configured != '\0') {
    if (IsExecutableFile(configured)) return fs::path(configured);
    return std::nullopt;
  }
  if (search_path != nullptr) {
    std::string_view rest = search_path;
    while (true) {
      const size_t colon = rest.find(':');
      const std::string_view directory = rest.substr(0, colon);
      if (!directory.empty() && IsExecutableFile(fs::path(directory) / "ncu")) {
        return fs::path(directory) / "ncu";
      }
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (!fallback.empty() && IsExecutableFile(fallback)) return fallback;
  return std::nullopt;
}

std::optional<fs::path> FindNcu() {
  return FindNcu(std::getenv("KSMITH_NCU"), std::getenv("PATH"), kDefaultNcu);
}

std::vector<std::string> ProfileMetrics() {
  std::vector<std::string> metrics = {
      std::string(ncu_metric::kDuration),
      std::string(ncu_metric::kSmThroughput),
      std::string(ncu_metric::kMemoryThroughput),
      std::string(ncu_metric::kDramThroughput),
      std::string(ncu_metric::kL2HitRate),
      std::string(ncu_metric::kAchievedOccupancy),
      std::string(ncu_metric::kTheoreticalOccupancy),
      std::string(ncu_metric::kRegistersPerThread),
      std::string(ncu_metric::kTensorPipe),
  };
  for (const StallReason& reason : kStallReasons) metrics.push_back(StallMetric(reason.name));
  return metrics;
}

std::vector<std::string> NcuCommand(const fs::path& ncu, const std::vector<std::string>& replay_argv,
                                    const std::vector<std::string>& metrics) {
  const std::vector<std::string>& chosen = metrics.empty() ? ProfileMetrics() : metrics;
  std::string metric_list;
  for (const auto& metric : chosen) metric_list += (metric_list.empty() ? "" : ",") + metric;
  std::vector<std::string> argv = {ncu.string(), "--clock-control", "none", "--print-units", "base",
                                   "--csv", "--page", "raw", "--metrics", metric_list,
                                   "--target-processes", "all"};
  argv.insert(argv.end(), replay_argv.begin(), replay_argv.end());
  return argv;
}

Result<std::vector<KernelProfile>> ParseNcuCsv(std::string_view text) {
  const std::vector<std::string> lines = SplitLines(text);
  size_t row = 0;
  while (row < lines.size() && !lines[row].starts_with("\"ID\",")) ++row;
  if (row == lines.size()) {
    const std::string errors = NcuErrorLines(text);
    return MakeError(ErrorKind::kParse, "no ncu CSV header in the output{}{}",
                     errors.empty() ? "" : ":\n", errors);
  }
  const std::vector<std::string> header = SplitCsvLine(lines[row++]);
  auto column = [&](std::string_view name) -> std::optional<size_t> {
    const auto found = std::find(header.begin(), header.end(), name);
    if (found == header.end()) return std::nullopt;
    return static_cast<size_t>(found - header.begin());
  };
  const auto kernel_column = column("Kernel Name");
  if (!kernel_column) return MakeError(ErrorKind::kParse, "ncu CSV header has no \"Kernel Name\" column");
  const auto id_column = column("ID");
  const auto block_column = column("Block Size");
  const auto grid_column = column("Grid Size");
  // Metric names have a unit__counter form; the other columns describe the launch.
  std::vector<size_t> metric_columns;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].find("__") != std::string::npos) metric_columns.push_back(i);
  }

  std::vector<double> scales(header.size(), 1.0);
  std::vector<KernelProfile> kernels;
  for (; row < lines.size(); ++row) {
    const std::string& line = lines[row];
    if (!line.starts_with('"')) continue;  // ==PROF== lines, the program's own output
    const std::vector<std::string> fields = SplitCsvLine(line);
    if (fields.size() != header.size()) continue;
    if (fields[*kernel_column].empty()) {  // the units row: launch columns are blank
      for (const size_t i : metric_columns) scales[i] = UnitScale(fields[i]);
      continue;
    }
    KernelProfile kernel;
    kernel.kernel = fields[*kernel_column];
    if (id_column) kernel.id = static_cast<int>(ParseNumber(fields[*id_column]).value_or(-1));
    if (block_column) kernel.block_size = fields[*block_column];
    if (grid_column) kernel.grid_size = fields[*grid_column];
    for (const size_t i : metric_columns) {
      if (const auto value = ParseNumber(fields[i])) kernel.metrics[header[i]] = *value * scales[i];
    }
    kernels.push_back(std::move(kernel));
  }
  if (kernels.empty()) return MakeError(ErrorKind::kParse, "ncu CSV has a header but no kernel launches");
  return kernels;
}

std::vector<std::string> BottleneckFacts(const std::vector<KernelProfile>& kernels) {
  const std::vector<KernelSummary> summaries = Summarize(kernels);
  double total_ns = 0;
  for (const auto& summary : summaries) total_ns += summary.total_ns;
  const bool several = summaries.size() > 1;
  std::vector<std::string> facts;
  for (size_t i = 0; i < summaries.size() && i < kMaxKernelsInFacts; ++i) {
    const double share_pct = total_ns > 0 ? 100 * summaries[i].total_ns / total_ns : 0;
    for (auto& fact : KernelFacts(summaries[i], share_pct, several)) facts.push_back(std::move(fact));
  }
  if (summaries.size() > kMaxKernelsInFacts) {
    double rest_ns = 0;
    for (size_t i = kMaxKernelsInFacts; i < summaries.size(); ++i) rest_ns += summaries[i].total_ns;
    facts.push_back(fmt::format("{} more kernels: {:.0f}% of GPU time",
                                summaries.size() - kMaxKernelsInFacts,
                                total_ns > 0 ? 100 * rest_ns / total_ns : 0));
  }
  return facts;
}

Result<std::vector<KernelProfile>> RunProfile(const std::vector<std::string>& replay_argv,
                                              std::chrono::seconds timeout) {
  const auto ncu = FindNcu();
  if (!ncu) {
    if (const char* configured = std::getenv("KSMITH_NCU"); configured && *configured) {
      return MakeError(ErrorKind::kNotFound, "ncu not found: KSMITH_NCU={} is not an executable file",
                       configured);
    }
    return MakeError(ErrorKind::kNotFound,
                     "ncu (Nsight Compute) not found on PATH or at {}; install it or set KSMITH_NCU",
                     kDefaultNcu);
  }
  std::vector<std::string> metrics = ProfileMetrics();
  auto run = RunNcu(*ncu, replay_argv, metrics, timeout);
  if (!run.ok()) return run.error();
  // One retry without the metrics ncu rejected: stall reasons differ between architectures.
  if (!run->succeeded() && !run->timed_out) {
    const std::vector<std::string> rejected = RejectedMetrics(run->output, metrics);
    if (!rejected.empty() && rejected.size() < metrics.size()) {
      std::erase_if(metrics, [&](const std::string& metric) {
        return std::find(rejected.begin(), rejected.end(), metric) != rejected.end();
      });
      run = RunNcu(*ncu, replay_argv, metrics, timeout);
      if (!run.ok()) return run.error();
    }
  }
  const std::string& output = run->output;
  if (output.find("ERR_NVGPUCTRPERM") != std::string::npos) {
    return MakeError(ErrorKind::kUnsupported,
                     "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as root, "
                     "or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0");
  }
  if (run->timed_out) {
    return MakeError(ErrorKind::kTimeout, "ncu {}: {}", run->Describe(), Tail(output, kErrorTailBytes));
  }
  auto kernels = ParseNcuCsv(output);
  if (kernels.ok()) return kernels;  // a nonzero exit with results: the replay failed after them
  if (output.find("No kernels were profiled") != std::string::npos) {
    return MakeError(ErrorKind::kNotFound, "ncu profiled no kernels ({}): {}", run->Describe(),
                     Tail(output, kErrorTailBytes));
  }
  return MakeError(ErrorKind::kParse, "ncu gave no results ({}): {}", run->Describe(),
                   Tail(output, kErrorTailBytes));
}

}  // namespace ksmith
