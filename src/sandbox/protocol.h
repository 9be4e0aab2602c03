// Framed messages between the evaluator and a worker, over a dedicated socket (never stdout).
//
// A frame is: magic "KSM1" (4 bytes), header length (u32), blob length (u64), a JSON header, then
// raw bytes (tensors). The reader bounds every length before allocating, so a corrupted or forged
// frame is a protocol error, not a crash.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct Message {
  nlohmann::json header;  // always has "type"
  std::string blob;

  std::string type() const { return header.value("type", std::string()); }
};

inline constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
inline constexpr size_t kMaxBlobBytes = size_t{4} << 30;

/// Writes one frame; retries on EINTR and short writes.
Status WriteMessage(int fd, const Message& message);

/// Reads one frame. With a deadline, fails with kTimeout when no complete frame arrives in time.
/// End of stream before a frame begins is kNotFound ("closed"); inside a frame, kProtocol.
Result<Message> ReadMessage(int fd, std::optional<std::chrono::steady_clock::time_point> deadline);

/// A worker's answer to one request of its type.
using RequestHandler = std::function<Message(const Message& request)>;

/// The worker's side of the channel, the same for every worker: reads requests until "bye" (or
/// the evaluator closes the channel), answers each with the handler of its type (an unknown type
/// gets an "error" reply) and echoes the request's nonce. `after_reply`, when set, runs after
/// every reply (it may end the process). Returns the worker's exit code: 0 after "bye" or a closed
/// channel, 3 when a request cannot be read, 4 when a reply cannot be written.
int ServeRequests(int channel_fd, const std::map<std::string, RequestHandler>& handlers,
                  const std::function<void()>& after_reply = {});

}  // namespace ksmith
