// When to try a model request again, and how long to wait first: exponential backoff with full
// jitter on rate limits (429), server errors (5xx), timeouts and connection failures, honouring
// the server's Retry-After. Pure logic; the transport sleeps and retries.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ksmith {

/// What a request attempt ended in, as the retry decision needs it.
struct AttemptOutcome {
  int http_status = 0;               // 0: no HTTP answer (connection refused, reset, DNS...)
  bool timed_out = false;            // no complete answer in time
  std::optional<std::chrono::milliseconds> retry_after;  // the server's Retry-After, parsed
};

struct RetryPolicy {
  int max_attempts = 6;
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{60'000};

  /// Whether the outcome is worth another attempt: 408, 409, 429, 5xx, timeouts, no answer.
  /// Other 4xx (a bad key, a bad request) fail the same way every time.
  static bool Retryable(const AttemptOutcome& outcome);

  /// The wait before attempt `attempt` + 1 (attempt counts from 1), or nullopt to give up.
  /// `uniform01` is a random number in [0, 1) for the jitter. A Retry-After longer than
  /// max_delay gives up rather than stall the run.
  std::optional<std::chrono::milliseconds> DelayAfter(int attempt, const AttemptOutcome& outcome,
                                                      double uniform01) const;
};

/// Retry-After as seconds ("30"); the HTTP-date form is not parsed (nullopt).
std::optional<std::chrono::milliseconds> ParseRetryAfter(std::string_view value);

}  // namespace ksmith
