#include "bench/bench_html_layout.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ksmith {
namespace {

// Tick labels ("0.125x") need this much room each along the axis.
constexpr double kMinTickSpacingPx = 56;

std::optional<double> Number(const nlohmann::json& task, const char* key) {
  if (task.contains(key) && task[key].is_number()) return task[key].get<double>();
  return std::nullopt;
}

}  // namespace

SpeedupComparison CompareWithBaseline(const nlohmann::json& task) {
  const auto speedup = Number(task, "best_speedup");
  if (!speedup) {
    // Correct but with no speedup timed alone is not a failure: it was not compared.
    const bool correct = Number(task, "correct_rate").value_or(0) > 0;
    return correct ? SpeedupComparison::kNoInterval : SpeedupComparison::kFailed;
  }
  const auto interval = task.value("best_speedup_ci95", nlohmann::json());
  if (!interval.is_array() || interval.size() != 2 || !interval[0].is_number() || !interval[1].is_number()) {
    return SpeedupComparison::kNoInterval;
  }
  if (interval[0].get<double>() > 1) return SpeedupComparison::kFaster;
  if (interval[1].get<double>() < 1) return SpeedupComparison::kSlower;
  return SpeedupComparison::kTie;
}

const char* ComparisonClass(SpeedupComparison comparison) {
  switch (comparison) {
    case SpeedupComparison::kFaster: return "faster";
    case SpeedupComparison::kTie: return "tie";
    case SpeedupComparison::kSlower: return "slower";
    case SpeedupComparison::kNoInterval: return "no-interval";
    case SpeedupComparison::kFailed: return "failed";
  }
  return "failed";
}

const char* ComparisonWords(SpeedupComparison comparison) {
  switch (comparison) {
    case SpeedupComparison::kFaster: return "faster";
    case SpeedupComparison::kTie: return "tie";
    case SpeedupComparison::kSlower: return "slower";
    case SpeedupComparison::kNoInterval: return "no interval";
    case SpeedupComparison::kFailed: return "no kernel";
  }
  return "no kernel";
}

LogAxis LogAxis::Spanning(const std::vector<double>& values, double start_px, double end_px) {
  double low = 0.5, high = 2;
  for (double value : values) {
    if (!(value > 0) || !std::isfinite(value)) continue;
    low = std::min(low, value);
    high = std::max(high, value);
  }
  return {std::exp2(std::floor(std::log2(low))), std::exp2(std::ceil(std::log2(high))), start_px, end_px};
}

double LogAxis::Px(double value) const {
  const double clamped = std::clamp(value, low, high);
  const double fraction = (std::log2(clamped) - std::log2(low)) / (std::log2(high) - std::log2(low));
  return start_px + fraction * (end_px - start_px);
}

std::vector<double> LogAxis::Ticks() const {
  const int first = static_cast<int>(std::lround(std::log2(low)));
  const int last = static_cast<int>(std::lround(std::log2(high)));
  // Every power of two while they are far enough apart, else every 2nd, 4th...: exponents that
  // are multiples of the step, so that 1x (2^0) is always a tick.
  int step = 1;
  while ((last - first) / step > 0 && std::abs(end_px - start_px) * step / (last - first) < kMinTickSpacingPx) step *= 2;
  std::vector<double> ticks;
  for (int exponent = first; exponent <= last; ++exponent) {
    if (exponent % step == 0) ticks.push_back(std::exp2(exponent));
  }
  return ticks;
}

std::string TickText(double value) { return fmt::format("{:g}x", value); }

SpeedupMarks PlaceSpeedupMarks(const LogAxis& axis, double speedup, std::optional<double> low,
                               std::optional<double> high) {
  SpeedupMarks marks;
  const double one_px = axis.Px(1), estimate_px = axis.Px(speedup);
  marks.bar_from_px = one_px;
  marks.bar_to_px = estimate_px;
  if (std::abs(estimate_px - one_px) < kMinBarPx) {
    // Towards the estimate's side; exactly 1x is centred on the line.
    if (speedup > 1) marks.bar_to_px = one_px + kMinBarPx;
    else if (speedup < 1) marks.bar_to_px = one_px - kMinBarPx;
    else marks.bar_from_px = one_px - kMinBarPx / 2, marks.bar_to_px = one_px + kMinBarPx / 2;
  }
  if (low && high) {
    double low_px = axis.Px(std::min(*low, *high)), high_px = axis.Px(std::max(*low, *high));
    if (high_px - low_px < kMinWhiskerPx) {
      const double middle = (low_px + high_px) / 2;
      low_px = middle - kMinWhiskerPx / 2;
      high_px = middle + kMinWhiskerPx / 2;
    }
    marks.whisker_low_px = low_px;
    marks.whisker_high_px = high_px;
  }
  return marks;
}

bool LabelBox::Overlaps(const LabelBox& other) const {
  return x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height;
}

double TextWidthPx(std::string_view text, double font_px) {
  size_t characters = 0;
  for (char c : text) characters += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return 0.66 * font_px * static_cast<double>(characters);
}

std::vector<std::optional<size_t>> PlaceLabels(const std::vector<std::vector<LabelBox>>& candidates,
                                               const LabelBox& area, const std::vector<LabelBox>& obstacles) {
  std::vector<std::optional<size_t>> chosen(candidates.size());
  std::vector<LabelBox> taken = obstacles;
  for (size_t label = 0; label < candidates.size(); ++label) {
    for (size_t option = 0; option < candidates[label].size(); ++option) {
      const LabelBox& box = candidates[label][option];
      const bool inside = box.x >= area.x && box.y >= area.y && box.x + box.width <= area.x + area.width &&
                          box.y + box.height <= area.y + area.height;
      if (!inside || std::any_of(taken.begin(), taken.end(), [&](const LabelBox& other) { return box.Overlaps(other); })) {
        continue;
      }
      chosen[label] = option;
      taken.push_back(box);
      break;
    }
  }
  return chosen;
}

std::string Shorten(const std::string& text, size_t max_chars) {
  if (max_chars == 0) return "";
  size_t characters = 0;
  for (size_t at = 0; at < text.size(); ++at) {
    if ((static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) continue;
    if (characters == max_chars - 1) {
      // Cut here only if more than one character follows: the ellipsis takes this place.
      size_t rest = 0;
      for (size_t next = at; next < text.size(); ++next) rest += (static_cast<unsigned char>(text[next]) & 0xc0) != 0x80;
      if (rest > 1) return text.substr(0, at) + "…";
      return text;
    }
    ++characters;
  }
  return text;
}

std::string ShortRunId(const std::string& run_id) {
  const size_t dash = run_id.rfind('-');
  if (run_id.size() <= 10 || dash == std::string::npos || dash + 1 == run_id.size()) return run_id;
  return "…" + run_id.substr(dash + 1);
}

}  // namespace ksmith
