// The HTTP providers behind MakeHttpProvider (provider.h): OpenAI-compatible chat completions and
// Anthropic messages over libcurl, with retries (RetryPolicy), a concurrency limit, token and cost
// accounting and the optional response cache. The pieces here are the ones worth testing alone.
//
// `ProviderSettings::progress` is called from whichever thread is retrying: it must be thread-safe.
// A cached answer costs nothing: cost_dollars is 0 (nothing was spent this time) while the tokens
// are the original reply's, so that token counts stay comparable between cached and live runs.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "llm/chat_protocol.h"
#include "llm/http_client.h"

namespace ksmith {

inline constexpr std::string_view kDefaultOpenAiBaseUrl = "https://api.openai.com/v1";
inline constexpr std::string_view kDefaultAnthropicBaseUrl = "https://api.anthropic.com/v1";
inline constexpr std::string_view kAnthropicApiVersion = "2023-06-01";

/// Where requests go: `base_url` (the protocol's default when empty; a trailing '/' dropped) plus
/// "/chat/completions" or "/messages".
std::string ChatEndpoint(ChatProtocol protocol, std::string_view base_url);

/// The request headers, API key included: never log or store them.
HttpHeaders ChatHeaders(ChatProtocol protocol, const std::string& api_key);

/// The environment variable the key for `protocol` comes from, named in 401/403 errors.
const char* ApiKeyVariable(ChatProtocol protocol);

/// Keys shorter than this are not redacted: replacing a short string everywhere would garble
/// text, and no real provider issues keys that short.
inline constexpr size_t kMinRedactedKeyBytes = 8;

/// `text` with every occurrence of `secret` replaced by "[redacted]" (unchanged when `secret` is
/// shorter than kMinRedactedKeyBytes).
std::string Redact(std::string text, const std::string& secret);

/// The same for every string (and key) inside `value`.
nlohmann::json RedactJson(const nlohmann::json& value, const std::string& secret);

}  // namespace ksmith
