#include "service/redis/redis_connection.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace ksmith {
namespace {

timeval ToTimeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

RedisValue Convert(const redisReply* reply) {
  RedisValue value;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
      value.type = RedisValue::Type::kString;
      value.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
      value.type = RedisValue::Type::kStatus;
      value.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      value.type = RedisValue::Type::kInteger;
      value.integer = reply->integer;
      break;
    case REDIS_REPLY_ARRAY:
      value.type = RedisValue::Type::kArray;
      for (size_t i = 0; i < reply->elements; ++i) value.elements.push_back(Convert(reply->element[i]));
      break;
    default:
      break;
  }
  return value;
}

}  // namespace

const RedisValue& RedisValue::at(size_t i) const {
  static const RedisValue nil;
  return type == Type::kArray && i < elements.size() ? elements[i] : nil;
}

Result<RedisAddress> RedisAddress::Parse(const std::string& url) {
  const std::string scheme = "redis://";
  if (!url.starts_with(scheme)) {
    return MakeError(ErrorKind::kInvalidArgument, "'{}' is not a Redis address: write redis://HOST[:PORT][/PREFIX]", url);
  }
  RedisAddress address;
  std::string rest = url.substr(scheme.size());
  if (const size_t slash = rest.find('/'); slash != std::string::npos) {
    address.prefix = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    const bool plain = !address.prefix.empty() &&
                       address.prefix.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
                           std::string::npos;
    if (!plain) {
      return MakeError(ErrorKind::kInvalidArgument, "{}: the key prefix after the '/' must be letters, digits, '_', '-' "
                                                    "or '.'", url);
    }
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    int parsed = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), parsed);
    if (error != std::errc() || end != port.data() + port.size() || parsed <= 0 || parsed > 65535) {
      return MakeError(ErrorKind::kInvalidArgument, "{}: '{}' is not a port", url, port);
    }
    address.port = parsed;
    rest = rest.substr(0, colon);
  }
  if (!rest.empty()) address.host = rest;
  return address;
}

std::string RedisAddress::ToString() const { return fmt::format("redis://{}:{}/{}", host, port, prefix); }

RedisConnection::RedisConnection(RedisAddress address) : address_(std::move(address)) {}

RedisConnection::~RedisConnection() {
  std::lock_guard lock(mutex_);
  Drop();
}

void RedisConnection::Drop() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

Status RedisConnection::Connect(std::chrono::milliseconds timeout) {
  if (context_ != nullptr) return {};
  redisContext* context = redisConnectWithTimeout(address_.host.c_str(), address_.port, ToTimeval(timeout));
  if (context == nullptr || context->err != 0) {
    const std::string reason = context != nullptr ? context->errstr : "out of memory";
    if (context != nullptr) redisFree(context);
    return MakeError(ErrorKind::kIo, "cannot reach Redis at {}:{}: {}", address_.host, address_.port, reason);
  }
  redisEnableKeepAlive(context);
  context_ = context;
  // A Redis with `requirepass`: the password from the environment, never from a URL that
  // process lists and logs show.
  if (const char* password = std::getenv("KSMITH_REDIS_PASSWORD"); password != nullptr && *password != '\0') {
    auto* reply = static_cast<redisReply*>(redisCommand(context_, "AUTH %s", password));
    const bool accepted = reply != nullptr && reply->type != REDIS_REPLY_ERROR;
    const std::string reason = reply == nullptr ? context_->errstr : (accepted ? "" : std::string(reply->str, reply->len));
    if (reply != nullptr) freeReplyObject(reply);
    if (!accepted) {
      Drop();
      return MakeError(ErrorKind::kIo, "Redis at {}:{} refused KSMITH_REDIS_PASSWORD: {}", address_.host, address_.port,
                       reason);
    }
  }
  return {};
}

Result<RedisValue> RedisConnection::Command(const std::vector<std::string>& arguments,
                                            std::chrono::milliseconds reply_timeout) {
  std::lock_guard lock(mutex_);
  if (Status connected = Connect(std::chrono::seconds(5)); !connected.ok()) return connected.error();
  redisSetTimeout(context_, ToTimeval(reply_timeout));
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& argument : arguments) {
    argv.push_back(argument.data());
    lengths.push_back(argument.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (reply == nullptr) {
    const std::string reason = context_->errstr;
    Drop();
    return MakeError(ErrorKind::kIo, "Redis at {}:{} did not answer {}: {}", address_.host, address_.port,
                     arguments.empty() ? std::string() : arguments.front(), reason);
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string text(reply->str, reply->len);
    freeReplyObject(reply);
    return MakeError(ErrorKind::kProtocol, "Redis refused {}: {}", arguments.empty() ? std::string() : arguments.front(), text);
  }
  RedisValue value = Convert(reply);
  freeReplyObject(reply);
  return value;
}

}  // namespace ksmith
