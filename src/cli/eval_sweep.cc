#include "cli/eval_sweep.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

namespace ksmith {
namespace {

using nlohmann::json;

constexpr double kBytesPerGigabyteTimesSecondsPerMicrosecond = 1e3;  // bytes / µs / 1e3 = GB/s
// A point may move at most this many times the bench shape's bytes (or kMinSweepMaxBytes): larger
// sizes than the task was sized for would exhaust the device, or overflow the dims' arithmetic.
constexpr int64_t kMaxSweepGrowth = 16;
constexpr int64_t kMinSweepMaxBytes = int64_t{1} << 30;

Result<std::pair<std::string, std::vector<int64_t>>> ParseItem(const Task& task, const std::string& item) {
  const size_t equals = item.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == item.size()) {
    return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: write it as DIM=V1,V2,... (e.g. --sweep rows=1024,4096)", item);
  }
  const std::string dim = item.substr(0, equals);
  if (std::find(task.dims.begin(), task.dims.end(), dim) == task.dims.end()) {
    return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: task {} has no dim {}; its dims are {}", item, task.name,
                     dim, fmt::join(task.dims, ", "));
  }
  if (task.IsDerived(dim)) {
    return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: {} is computed from the other dims; sweep those instead",
                     item, dim);
  }
  std::vector<int64_t> values;
  std::string_view rest(item);
  rest.remove_prefix(equals + 1);
  for (bool more = true; more;) {
    const size_t comma = rest.find(',');
    more = comma != std::string_view::npos;
    const std::string_view text = rest.substr(0, comma);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 1) {
      return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: '{}' is not a positive whole number", item, text);
    }
    values.push_back(value);
    if (more) rest.remove_prefix(comma + 1);
  }
  return std::pair{dim, values};
}

struct PointFigures {
  std::string status;
  std::optional<Timing> timing;
  double candidate_gbs = 0, baseline_gbs = 0, candidate_gflops = 0, baseline_gflops = 0;
};

PointFigures Figures(const Task& task, const SweepRow& row) {
  PointFigures figures{.status = VerdictStatusName(row.verdict.status), .timing = row.verdict.timing};
  auto shape = task.WithDerivedDims(row.shape);  // the points hold their derived dims already
  if (!figures.timing || !shape.ok()) return figures;
  const double bytes = static_cast<double>(task.MinimumBytes(*shape));
  const double flops = static_cast<double>(task.Flops(*shape));
  const auto rate = [](double amount, double time_us) {
    return time_us > 0 ? amount / time_us / kBytesPerGigabyteTimesSecondsPerMicrosecond : 0.0;
  };
  figures.candidate_gbs = rate(bytes, figures.timing->candidate_us.median);
  figures.baseline_gbs = rate(bytes, figures.timing->baseline_us.median);
  figures.candidate_gflops = rate(flops, figures.timing->candidate_us.median);
  figures.baseline_gflops = rate(flops, figures.timing->baseline_us.median);
  return figures;
}

// The swept shape's dims in the task's order.
std::vector<std::string> ShapeDims(const Task& task, const std::vector<SweepRow>& rows) {
  std::vector<std::string> dims;
  if (rows.empty()) return dims;
  for (const auto& dim : task.dims) {
    if (rows.front().shape.contains(dim)) dims.push_back(dim);
  }
  return dims;
}

}  // namespace

Result<std::vector<DimValues>> PlanSweep(const Task& task, const std::vector<std::string>& items,
                                         const DimValues& timed_shape) {
  std::vector<DimValues> points = {timed_shape};
  std::set<std::string> seen;
  for (const auto& item : items) {
    auto parsed = ParseItem(task, item);
    if (!parsed.ok()) return parsed.error();
    const auto& [dim, values] = *parsed;
    if (!seen.insert(dim).second) {
      return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: {} is swept twice; give its values once, comma-separated",
                       item, dim);
    }
    // Each dim grows at most kMaxSweepGrowth-fold over the bench shape's, so that no product of dims
    // overflows before the bytes' bound below can refuse it.
    const int64_t largest = kMaxSweepGrowth * std::max<int64_t>(timed_shape.contains(dim) ? timed_shape.at(dim) : 1, 1);
    if (const int64_t most = *std::max_element(values.begin(), values.end()); most > largest) {
      return MakeError(ErrorKind::kInvalidArgument, "--sweep {}: {} is more than {}x the bench shape's {} ({}): sweep smaller sizes",
                       item, most, kMaxSweepGrowth, dim, largest / kMaxSweepGrowth);
    }
    if (points.size() * values.size() > kMaxSweepPoints) {
      return MakeError(ErrorKind::kInvalidArgument, "--sweep: {} points is more than {} (each is a whole verdict); sweep fewer sizes",
                       points.size() * values.size(), kMaxSweepPoints);
    }
    std::vector<DimValues> grid;
    for (const auto& point : points) {
      for (int64_t value : values) {
        DimValues next = point;
        next[dim] = value;
        grid.push_back(std::move(next));
      }
    }
    points = std::move(grid);
  }
  // The bench shape holds its derived dims: each point's are computed again from its free dims.
  const auto base_bytes = EvaluateExpression(task.bytes_expression, timed_shape);
  const int64_t max_bytes = std::max<int64_t>(kMaxSweepGrowth * (base_bytes.ok() ? *base_bytes : 0), kMinSweepMaxBytes);
  std::vector<DimValues> complete;
  for (const auto& point : points) {
    DimValues free_dims;
    for (const auto& [dim, value] : point) {
      if (!task.IsDerived(dim)) free_dims[dim] = value;
    }
    auto derived = task.WithDerivedDims(free_dims);
    if (!derived.ok()) {
      return MakeError(ErrorKind::kInvalidArgument, "--sweep: at {}: {}", task.FormatShape(free_dims), derived.error().message);
    }
    const auto bytes = EvaluateExpression(task.bytes_expression, *derived);
    if (!bytes.ok() || *bytes > max_bytes) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "--sweep: {} moves more than {} bytes, {}x the bench shape's (or 1 GiB): sweep smaller sizes",
                       task.FormatShape(*derived), max_bytes, kMaxSweepGrowth);
    }
    complete.push_back(std::move(derived.value()));
  }
  return complete;
}

Task TaskAtBenchShape(const Task& task, const DimValues& shape) {
  Task at = task;
  at.bench_shape = shape;
  if (at.cuda) at.cuda->bench_shape = shape;
  return at;
}

json SweepJson(const Task& task, const std::vector<SweepRow>& rows) {
  json points = json::array();
  for (const auto& row : rows) {
    const PointFigures figures = Figures(task, row);
    json point = {{"shape", row.shape}, {"status", figures.status}, {"reason", row.verdict.reason}};
    if (figures.timing) {
      point.update({{"candidate_us", figures.timing->candidate_us.median},
                    {"baseline_us", figures.timing->baseline_us.median},
                    {"speedup", figures.timing->speedup.median},
                    {"speedup_ci95", {figures.timing->speedup.low, figures.timing->speedup.high}},
                    {"comparison", figures.timing->comparison},
                    {"candidate_gbs", figures.candidate_gbs}, {"baseline_gbs", figures.baseline_gbs},
                    {"candidate_gflops", figures.candidate_gflops}, {"baseline_gflops", figures.baseline_gflops}});
    }
    points.push_back(std::move(point));
  }
  return {{"task", task.name}, {"points", std::move(points)}};
}

std::string SweepTable(const Task& task, const std::vector<SweepRow>& rows) {
  const bool has_flops = !task.flops_expression.empty() && task.flops_expression != "0";
  size_t shape_width = 5;
  for (const auto& row : rows) shape_width = std::max(shape_width, task.FormatShape(row.shape).size());
  std::string text = fmt::format("{:<{}}  {:<19} {:>12} {:>12}  {:<26} {:>16}{}\n", "shape", shape_width, "status",
                                 "candidate us", "baseline us", "speedup [95%]", "GB/s cand/base",
                                 has_flops ? "  GFLOP/s cand/base" : "");
  for (const auto& row : rows) {
    const PointFigures figures = Figures(task, row);
    if (!figures.timing) {
      text += fmt::format("{:<{}}  {:<19} {}\n", task.FormatShape(row.shape), shape_width, figures.status, row.verdict.reason);
      continue;
    }
    const Timing& timing = *figures.timing;
    text += fmt::format("{:<{}}  {:<19} {:>12.2f} {:>12.2f}  {:<26} {:>16}", task.FormatShape(row.shape), shape_width,
                        figures.status, timing.candidate_us.median, timing.baseline_us.median,
                        fmt::format("{:.2f}x [{:.2f}, {:.2f}] {}", timing.speedup.median, timing.speedup.low,
                                    timing.speedup.high, timing.comparison),
                        fmt::format("{:.1f}/{:.1f}", figures.candidate_gbs, figures.baseline_gbs));
    if (has_flops) text += fmt::format("  {:>18}", fmt::format("{:.1f}/{:.1f}", figures.candidate_gflops, figures.baseline_gflops));
    text += "\n";
  }
  return text;
}

std::string SweepCsv(const Task& task, const std::vector<SweepRow>& rows) {
  const std::vector<std::string> dims = ShapeDims(task, rows);
  std::string csv = fmt::format("{},status,candidate_us,baseline_us,speedup,speedup_low,speedup_high,comparison,"
                                "candidate_gbs,baseline_gbs,candidate_gflops,baseline_gflops\n",
                                fmt::join(dims, ","));
  for (const auto& row : rows) {
    const PointFigures figures = Figures(task, row);
    for (const auto& dim : dims) csv += fmt::format("{},", row.shape.at(dim));
    csv += figures.status;
    if (figures.timing) {
      const Timing& timing = *figures.timing;
      csv += fmt::format(",{:g},{:g},{:g},{:g},{:g},{},{:g},{:g},{:g},{:g}", timing.candidate_us.median,
                         timing.baseline_us.median, timing.speedup.median, timing.speedup.low, timing.speedup.high,
                         timing.comparison, figures.candidate_gbs, figures.baseline_gbs, figures.candidate_gflops,
                         figures.baseline_gflops);
    } else {
      csv += ",,,,,,,,,,";
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace ksmith
