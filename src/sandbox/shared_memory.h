// Memory shared between the evaluator and a worker (memfd), so that case data is written and
// read in place instead of being copied through the channel.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

#include "core/result.h"

namespace ksmith {

class SharedMemory {
 public:
  /// A new anonymous file of `bytes`, mapped read-write.
  static Result<std::unique_ptr<SharedMemory>> Create(size_t bytes);
  /// Maps a descriptor received from the other side; takes ownership of `fd`.
  static Result<std::unique_ptr<SharedMemory>> Map(int fd, size_t bytes);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  SharedMemory(int fd, unsigned char* data, size_t size) : fd_(fd), data_(data), size_(size) {}
  int fd_;
  unsigned char* data_;
  size_t size_;
};

/// Sends `fd` over a Unix socket as one byte with SCM_RIGHTS.
Status SendDescriptor(int socket_fd, int fd);
/// Receives a descriptor sent by SendDescriptor.
Result<int> ReceiveDescriptor(int socket_fd,
                              std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace ksmith
