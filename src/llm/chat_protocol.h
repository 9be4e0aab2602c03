// The two wire formats ksmith speaks to models: OpenAI-compatible chat completions (OpenAI, vLLM,
// SGLang, llama.cpp server, Ollama, DeepSeek) and Anthropic messages. Only the bodies: building a
// request and reading a reply, including every way a reply can be garbage. Transport is elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

enum class ChatProtocol { kOpenAi, kAnthropic };

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct ChatRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  int max_output_tokens = 8192;
  double temperature = 0.7;
};

struct ChatReply {
  std::string content;
  std::string finish_reason;  // normalized: "stop", "length", or what the server said
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  bool truncated() const { return finish_reason == "length"; }
};

/// The JSON body for `protocol`. Anthropic takes the system prompt apart from the messages.
nlohmann::json BuildChatBody(ChatProtocol protocol, const ChatRequest& request);

/// Reads a reply body received with HTTP `status`. Errors (kProtocol) say what came instead: an
/// HTML page, invalid JSON, an error object (with its message), no choices, empty content.
/// A reply cut off by the token limit is not an error: `truncated()` says so.
Result<ChatReply> ParseChatReply(ChatProtocol protocol, int status, std::string_view body);

}  // namespace ksmith
