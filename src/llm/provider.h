// A chat model behind one call: the HTTP providers (OpenAI-compatible, Anthropic) and the replay
// provider share this interface, so that strategies never know where an answer came from.
// Every call, failed or not, comes back as an LlmCall that the store records whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/budget.h"
#include "llm/chat_protocol.h"
#include "llm/retry_policy.h"

namespace ksmith {

/// One Complete(): what was sent, what came back, what it cost. Never holds the API key.
struct LlmCall {
  std::string provider;  // "openai", "anthropic", "replay"
  std::string model;
  std::string role;      // which role asked ("coder"); set by the caller, not the provider
  nlohmann::json request = nlohmann::json::object();  // the body sent
  std::string response_body;  // the last raw body received (may be HTML, empty)
  int http_status = 0;        // of the last attempt; 0: no HTTP answer
  int attempts = 0;
  std::vector<std::string> retry_reasons;  // why each retried attempt failed: "HTTP 429", "timed out"
  double latency_s = 0;       // [s] from the first attempt to the last answer, waits included
  bool cached = false;        // answered from the response cache, no network
  std::optional<ChatReply> reply;  // set when a usable reply came (it may be truncated)
  std::string error;               // why there is no reply; empty when there is one
  bool provider_exhausted = false; // replay: no recorded response left; the run must stop
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_dollars = 0;
};

class ChatProvider {
 public:
  virtual ~ChatProvider() = default;
  /// Thread-safe; at most the configured number of requests are in flight at once. Never
  /// throws for anything a server does: failures are LlmCalls with `error` set.
  virtual LlmCall Complete(const ChatRequest& request) = 0;
  virtual std::string name() const = 0;
};

struct ProviderSettings {
  std::string provider = "openai";  // "openai" or "anthropic"
  std::string base_url;  // default https://api.openai.com/v1 or https://api.anthropic.com/v1
  std::string model;
  std::string api_key;   // from the environment only; may be empty for a local server
  std::chrono::milliseconds request_timeout{600'000};
  std::chrono::milliseconds connect_timeout{10'000};
  RetryPolicy retry;
  int max_concurrency = 4;
  ModelPrice price;
  std::filesystem::path cache_directory;  // empty: no response cache
  /// One line per retry ("HTTP 429; retrying in 2.0 s (attempt 2 of 6)"); may be empty.
  std::function<void(const std::string&)> progress;
};

ChatProtocol ProtocolOf(const std::string& provider);

/// The HTTP provider for `settings.provider` ("openai" or "anthropic").
std::unique_ptr<ChatProvider> MakeHttpProvider(ProviderSettings settings);

/// A recorded call, as the store keeps it, for replay.
struct RecordedCall {
  std::string provider;  // "openai" or "anthropic": how to read response_body
  int http_status = 0;
  std::string response_body;
  std::string error;     // the recorded failure when there was no usable body
  nlohmann::json request = nullptr;  // the body that was sent; null when unknown
};

/// Answers each Complete() with a recorded call, re-read from its body (so a garbage answer
/// replays as the same failure): the first unused one whose recorded request asked the same
/// (system and messages), else the first unused one. Calls made in parallel (sample, evolve) thus
/// get their own answers whatever order they arrive in. No network. Past the last one,
/// provider_exhausted.
std::unique_ptr<ChatProvider> MakeReplayProvider(std::vector<RecordedCall> calls);

}  // namespace ksmith
