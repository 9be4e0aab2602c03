#include "llm/budget.h"

#include <algorithm>

#include <fmt/format.h>

namespace ksmith {

void Budget::ChargeCall(int64_t input_tokens, int64_t output_tokens) {
  input_tokens_ += std::max<int64_t>(0, input_tokens);
  output_tokens_ += std::max<int64_t>(0, output_tokens);
}

double Budget::dollars() const {
  return (static_cast<double>(input_tokens_) * price_.input_per_million +
          static_cast<double>(output_tokens_) * price_.output_per_million) / 1e6;
}

std::optional<std::string> Budget::Exhausted(std::chrono::steady_clock::time_point now) const {
  if (limits_.tokens && tokens() >= *limits_.tokens) {
    return fmt::format("the token budget of {} is spent: {} used", *limits_.tokens, tokens());
  }
  if (limits_.dollars && dollars() >= *limits_.dollars) {
    return fmt::format("the budget of ${:.2f} is spent: ${:.2f} used", *limits_.dollars, dollars());
  }
  if (limits_.candidates && candidates_ >= *limits_.candidates) {
    return fmt::format("{} candidates were made, the most --max-candidates allows", candidates_);
  }
  if (limits_.wall) {
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - start_);
    if (elapsed >= *limits_.wall) {
      return fmt::format("the time budget of {} s is spent", limits_.wall->count());
    }
  }
  return std::nullopt;
}

nlohmann::json Budget::ToJson() const {
  return {{"input_tokens", input_tokens_}, {"output_tokens", output_tokens_}, {"tokens", tokens()},
          {"cost_dollars", dollars()}, {"candidates", candidates_}};
}

}  // namespace ksmith
