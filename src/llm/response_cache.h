// An on-disk cache of model replies, so that re-running the same prompt (a resumed run, a test of
// the loop, a tweak downstream of the model) costs neither money nor minutes. Keyed by what was
// asked: the protocol, the URL and the exact request body (model, messages, temperature...).
// Only usable replies are kept: a 200 whose body parses. Safe across threads and processes:
// each entry is one file, written atomically.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "llm/chat_protocol.h"

namespace ksmith {

struct CachedReply {
  std::string response_body;  // the raw body as the server sent it
  ChatReply reply;            // read from it
};

class ResponseCache {
 public:
  /// `directory` is created on the first Store().
  explicit ResponseCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

  /// The entry's name: SHA-256 over the protocol, the URL and the request body.
  static std::string Key(ChatProtocol protocol, std::string_view url, std::string_view request_body);

  /// The stored reply for this request, or nullopt: never stored, or unreadable or corrupt (a
  /// bad entry is a miss, never an error: the request simply goes to the server again).
  std::optional<CachedReply> Find(ChatProtocol protocol, std::string_view url,
                                  std::string_view request_body) const;

  /// Keeps a reply received with HTTP 200. kInvalidArgument when `response_body` is not a usable
  /// reply (nothing is stored), kIo when the file cannot be written.
  Status Store(ChatProtocol protocol, std::string_view url, std::string_view request_body,
               std::string_view response_body);

  /// Where the entry for `key` lives (it may not exist).
  std::filesystem::path PathOf(const std::string& key) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace ksmith
