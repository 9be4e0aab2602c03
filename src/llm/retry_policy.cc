#include "llm/retry_policy.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/strings.h"

namespace ksmith {

bool RetryPolicy::Retryable(const AttemptOutcome& outcome) {
  if (outcome.timed_out || outcome.http_status == 0) return true;
  const int status = outcome.http_status;
  return status == 408 || status == 409 || status == 429 || (status >= 500 && status <= 599);
}

std::optional<std::chrono::milliseconds> RetryPolicy::DelayAfter(int attempt, const AttemptOutcome& outcome,
                                                                  double uniform01) const {
  if (attempt >= max_attempts || !Retryable(outcome)) return std::nullopt;
  if (outcome.retry_after) {
    if (*outcome.retry_after > max_delay) return std::nullopt;
    return *outcome.retry_after;
  }
  // Full jitter: uniform in [0, min(max, base * 2^(attempt-1))], so that many clients that failed
  // together do not come back together.
  const double ceiling_ms = std::min(static_cast<double>(max_delay.count()),
                                     static_cast<double>(base_delay.count()) * std::pow(2.0, attempt - 1));
  const double jitter = std::clamp(uniform01, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<int64_t>(ceiling_ms * jitter));
}

std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value) {
  const std::string_view text = Trim(value);
  int64_t seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (error != std::errc() || end != text.data() + text.size() || seconds < 0) return std::nullopt;
  return std::chrono::milliseconds(seconds * 1000);
}

}  // namespace ksmith
