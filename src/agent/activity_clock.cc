#include "agent/activity_clock.h"

#include <fmt/format.h>

namespace ksmith {
namespace {

double Seconds(ActivityClock::Clock::duration duration) { return std::chrono::duration<double>(duration).count(); }

double NumberOr0(const nlohmann::json& json, const char* key) {
  const auto found = json.find(key);
  return found != json.end() && found->is_number() && found->get<double>() >= 0 ? found->get<double>() : 0;
}

std::string Percent(double part, double whole) { return fmt::format("{:.0f}%", whole > 0 ? 100 * part / whole : 0); }

std::string Duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<int64_t>(seconds + 0.5);
  return whole < 3600 ? fmt::format("{}m{:02}s", whole / 60, whole % 60)
                      : fmt::format("{}h{:02}m", whole / 3600, whole % 3600 / 60);
}

}  // namespace

Activity& Activity::operator+=(const Activity& other) {
  wall_s += other.wall_s;
  evaluating_s += other.evaluating_s;
  proposing_s += other.proposing_s;
  overlapped_s += other.overlapped_s;
  proposals += other.proposals;
  proposals_while_evaluating += other.proposals_while_evaluating;
  return *this;
}

nlohmann::json Activity::ToJson() const {
  return {{"wall_s", wall_s},
          {"evaluating_s", evaluating_s},
          {"proposing_s", proposing_s},
          {"overlapped_s", overlapped_s},
          {"evaluating_fraction", evaluating_fraction()},
          {"proposals", proposals},
          {"proposals_while_evaluating", proposals_while_evaluating}};
}

Activity Activity::FromJson(const nlohmann::json& json) {
  Activity activity;
  if (!json.is_object()) return activity;
  activity.wall_s = NumberOr0(json, "wall_s");
  activity.evaluating_s = NumberOr0(json, "evaluating_s");
  activity.proposing_s = NumberOr0(json, "proposing_s");
  activity.overlapped_s = NumberOr0(json, "overlapped_s");
  activity.proposals = static_cast<int64_t>(NumberOr0(json, "proposals"));
  activity.proposals_while_evaluating = static_cast<int64_t>(NumberOr0(json, "proposals_while_evaluating"));
  return activity;
}

std::string Activity::Describe() const {
  std::string line = fmt::format("evaluations in flight {} of {}", Percent(evaluating_s, wall_s), Duration(wall_s));
  if (proposals > 0) {
    line += fmt::format(" (model calls {}, both at once {}; {} of {} calls made while evaluating)",
                        Percent(proposing_s, wall_s), Percent(overlapped_s, wall_s), proposals_while_evaluating, proposals);
  }
  return line;
}

void ActivityClock::AccumulateLocked(Clock::time_point now, Activity& activity) const {
  const double elapsed_s = Seconds(now - changed_);
  if (evaluations_ > 0) activity.evaluating_s += elapsed_s;
  if (proposals_ > 0) activity.proposing_s += elapsed_s;
  if (evaluations_ > 0 && proposals_ > 0) activity.overlapped_s += elapsed_s;
}

void ActivityClock::Change(int evaluations, int proposals, bool new_proposal) {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  AccumulateLocked(now, activity_);
  changed_ = now;
  if (new_proposal) {
    ++activity_.proposals;
    if (evaluations_ > 0) ++activity_.proposals_while_evaluating;
  }
  evaluations_ += evaluations;
  proposals_ += proposals;
}

Activity ActivityClock::Snapshot() const {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  Activity activity = activity_;
  AccumulateLocked(now, activity);
  activity.wall_s = Seconds(now - started_);
  return activity;
}

}  // namespace ksmith
