#include "sandbox/protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ksmith {
namespace {

constexpr char kMagic[4] = {'K', 'S', 'M', '1'};

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t count = ::send(fd, data, size, MSG_NOSIGNAL);
    if (count < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorKind::kIo, "write to worker channel failed: {}", std::strerror(errno));
    }
    data += count;
    size -= static_cast<size_t>(count);
  }
  return {};
}

// Returns the number of bytes read (< size only at end of stream).
Result<size_t> ReadAll(int fd, char* data, size_t size,
                       std::optional<std::chrono::steady_clock::time_point> deadline) {
  size_t done = 0;
  while (done < size) {
    if (deadline) {
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (remaining.count() <= 0) return MakeError(ErrorKind::kTimeout, "no reply in time");
      pollfd poll_fd{fd, POLLIN, 0};
      const int ready = ::poll(&poll_fd, 1, static_cast<int>(remaining.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return MakeError(ErrorKind::kTimeout, "no reply in time");
      if (ready < 0) return MakeError(ErrorKind::kIo, "poll failed: {}", std::strerror(errno));
    }
    const ssize_t count = ::read(fd, data + done, size - done);
    if (count < 0) {
      if (errno == EINTR) continue;
      return MakeError(ErrorKind::kIo, "read from channel failed: {}", std::strerror(errno));
    }
    if (count == 0) break;
    done += static_cast<size_t>(count);
  }
  return done;
}

}  // namespace

Status WriteMessage(int fd, const Message& message) {
  const std::string header = message.header.dump();
  char prefix[16];
  const uint32_t header_size = static_cast<uint32_t>(header.size());
  const uint64_t blob_size = message.blob.size();
  std::memcpy(prefix, kMagic, 4);
  std::memcpy(prefix + 4, &header_size, 4);
  std::memcpy(prefix + 8, &blob_size, 8);
  if (auto status = WriteAll(fd, prefix, sizeof(prefix)); !status.ok()) return status;
  if (auto status = WriteAll(fd, header.data(), header.size()); !status.ok()) return status;
  return WriteAll(fd, message.blob.data(), message.blob.size());
}

Result<Message> ReadMessage(int fd, std::optional<std::chrono::steady_clock::time_point> deadline) {
  char prefix[16];
  auto got = ReadAll(fd, prefix, sizeof(prefix), deadline);
  if (!got.ok()) return got.error();
  if (*got == 0) return MakeError(ErrorKind::kNotFound, "channel closed");
  if (*got < sizeof(prefix) || std::memcmp(prefix, kMagic, 4) != 0) {
    return MakeError(ErrorKind::kProtocol, "malformed frame prefix");
  }
  uint32_t header_size = 0;
  uint64_t blob_size = 0;
  std::memcpy(&header_size, prefix + 4, 4);
  std::memcpy(&blob_size, prefix + 8, 8);
  if (header_size > kMaxHeaderBytes || blob_size > kMaxBlobBytes) {
    return MakeError(ErrorKind::kProtocol, "frame too large ({} + {} bytes)", header_size, blob_size);
  }
  std::string header(header_size, '\0');
  got = ReadAll(fd, header.data(), header.size(), deadline);
  if (!got.ok()) return got.error();
  if (*got < header.size()) return MakeError(ErrorKind::kProtocol, "frame ends inside its header");
  Message message;
  message.header = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (message.header.is_discarded() || !message.header.is_object() ||
      !message.header.contains("type")) {
    return MakeError(ErrorKind::kProtocol, "frame header is not a JSON object with a type");
  }
  message.blob.resize(blob_size);
  got = ReadAll(fd, message.blob.data(), message.blob.size(), deadline);
  if (!got.ok()) return got.error();
  if (*got < message.blob.size()) return MakeError(ErrorKind::kProtocol, "frame ends inside its data");
  return message;
}

int ServeRequests(int channel_fd, const std::map<std::string, RequestHandler>& handlers,
                  const std::function<void()>& after_reply) {
  while (true) {
    auto request = ReadMessage(channel_fd, std::nullopt);
    if (!request.ok()) return request.error().kind == ErrorKind::kNotFound ? 0 : 3;
    const std::string type = request->type();
    Message reply;
    if (type == "bye") {
      reply.header = {{"type", "goodbye"}};
    } else if (auto handler = handlers.find(type); handler != handlers.end()) {
      reply = handler->second(*request);
    } else {
      reply.header = {{"type", "error"}, {"message", "unknown request '" + type + "'"}};
    }
    if (request->header.contains("nonce")) reply.header["nonce"] = request->header["nonce"];
    if (!WriteMessage(channel_fd, reply).ok()) return 4;
    if (type == "bye") return 0;
    if (after_reply) after_reply();
  }
}

}  // namespace ksmith
