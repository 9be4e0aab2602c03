#include "llm/response_cache.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/hash.h"
#include "llm/http_client.h"

namespace ksmith {
namespace {

// Bumped when the entry layout changes, so that old entries become misses instead of misreads.
constexpr int kEntryFormat = 1;
// JSON escaping can grow a body several times over; anything larger was not written by Store().
constexpr size_t kMaxEntryBytes = kMaxHttpResponseBytes * 4;
constexpr int kCachedStatus = 200;

const char* ProtocolName(ChatProtocol protocol) {
  return protocol == ChatProtocol::kAnthropic ? "anthropic" : "openai";
}

}  // namespace

std::string ResponseCache::Key(ChatProtocol protocol, std::string_view url, std::string_view request_body) {
  Sha256Builder hash;
  hash.Add("ksmith-response-cache").Add(std::to_string(kEntryFormat));
  hash.Add(ProtocolName(protocol)).Add(url).Add(request_body);
  return hash.HexDigest();
}

std::filesystem::path ResponseCache::PathOf(const std::string& key) const {
  // Two-character fan-out keeps directories small after many runs.
  return directory_ / key.substr(0, 2) / (key + ".json");
}

std::optional<CachedReply> ResponseCache::Find(ChatProtocol protocol, std::string_view url,
                                               std::string_view request_body) const {
  const std::string key = Key(protocol, url, request_body);
  auto text = ReadFile(PathOf(key), kMaxEntryBytes);
  if (!text.ok()) return std::nullopt;
  const auto entry = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || entry.value("format", nlohmann::json()) != kEntryFormat ||
      entry.value("key", nlohmann::json()) != key || !entry.value("response_body", nlohmann::json()).is_string()) {
    return std::nullopt;
  }
  CachedReply cached;
  cached.response_body = entry["response_body"].get<std::string>();
  auto reply = ParseChatReply(protocol, kCachedStatus, cached.response_body);
  if (!reply.ok()) return std::nullopt;
  cached.reply = std::move(*reply);
  return cached;
}

Status ResponseCache::Store(ChatProtocol protocol, std::string_view url, std::string_view request_body,
                            std::string_view response_body) {
  auto reply = ParseChatReply(protocol, kCachedStatus, response_body);
  if (!reply.ok()) {
    return MakeError(ErrorKind::kInvalidArgument, "not caching an unusable reply: {}", reply.error().message);
  }
  const std::string key = Key(protocol, url, request_body);
  // The URL and protocol are kept for whoever looks inside; Find() trusts only the key.
  const nlohmann::json entry = {{"format", kEntryFormat}, {"key", key}, {"protocol", ProtocolName(protocol)},
                                {"url", url}, {"response_body", response_body}};
  // Replies can hold any bytes; replace invalid UTF-8 rather than fail the dump.
  return WriteFileAtomic(PathOf(key), entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace ksmith
