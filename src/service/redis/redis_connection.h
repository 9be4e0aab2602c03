// One connection to Redis (hiredis), reconnecting after a failure: a Redis restarted mid-run costs
// the commands made while it was down (each an error the caller retries), never the process.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

struct redisContext;

namespace ksmith {

/// A reply, as a tree: Redis's strings, integers, nils, arrays and errors.
struct RedisValue {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string text;     // kString, kStatus
  int64_t integer = 0;  // kInteger
  std::vector<RedisValue> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
  /// Element `i` of an array, or a nil value.
  const RedisValue& at(size_t i) const;
};

/// Where a broker lives: redis://HOST[:PORT][/PREFIX]. The prefix names every key, so that two
/// services can share one Redis.
struct RedisAddress {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string prefix = "ksmith";

  static Result<RedisAddress> Parse(const std::string& url);
  std::string ToString() const;
  std::string Key(const std::string& name) const { return prefix + ":" + name; }
};

class RedisConnection {
 public:
  explicit RedisConnection(RedisAddress address);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  /// Runs one command; connects first where no connection is up. A connection failure drops the
  /// connection (the next command reconnects) and is kIo; Redis's own error reply is kProtocol
  /// with its text. `reply_timeout` must exceed a command's own BLOCK time.
  Result<RedisValue> Command(const std::vector<std::string>& arguments,
                             std::chrono::milliseconds reply_timeout = std::chrono::seconds(10));

  const RedisAddress& address() const { return address_; }

 private:
  Status Connect(std::chrono::milliseconds timeout);  // called locked
  void Drop();                                          // called locked

  RedisAddress address_;
  std::mutex mutex_;
  redisContext* context_ = nullptr;  // guarded by mutex_
};

}  // namespace ksmith
