// The limits a run stops at, cleanly and between steps: tokens, dollars, candidates, wall time.
// Whatever is spent is charged here; the loop asks before each new step whether it may go on.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

/// Prices of one model [dollars per million tokens]; zero for a local server.
struct ModelPrice {
  double input_per_million = 0;
  double output_per_million = 0;
};

struct BudgetLimits {
  std::optional<int64_t> tokens;        // input + output
  std::optional<double> dollars;
  std::optional<int64_t> candidates;    // evaluations
  std::optional<std::chrono::seconds> wall;
};

class Budget {
 public:
  Budget(BudgetLimits limits, ModelPrice price, std::chrono::steady_clock::time_point start)
      : limits_(limits), price_(price), start_(start) {}

  /// Charges one model call.
  void ChargeCall(int64_t input_tokens, int64_t output_tokens);
  /// Charges one evaluated candidate.
  void ChargeCandidate() { ++candidates_; }

  /// Why the run must stop now ("the token budget of 100000 is spent: 100412 used"), or nullopt.
  std::optional<std::string> Exhausted(std::chrono::steady_clock::time_point now) const;

  int64_t tokens() const { return input_tokens_ + output_tokens_; }
  double dollars() const;
  int64_t candidates() const { return candidates_; }
  nlohmann::json ToJson() const;

 private:
  BudgetLimits limits_;
  ModelPrice price_;
  std::chrono::steady_clock::time_point start_;
  int64_t input_tokens_ = 0;
  int64_t output_tokens_ = 0;
  int64_t candidates_ = 0;
};

}  // namespace ksmith
