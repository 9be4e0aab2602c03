#include "sandbox/shared_memory.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ksmith {

Result<std::unique_ptr<SharedMemory>> SharedMemory::Create(size_t bytes) {
  const int fd = ::memfd_create("ksmith-case", MFD_CLOEXEC);
  if (fd < 0) return MakeError(ErrorKind::kIo, "memfd_create failed: {}", std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int saved = errno;
    ::close(fd);
    return MakeError(ErrorKind::kIo, "cannot size shared memory to {} bytes: {}", bytes, std::strerror(saved));
  }
  return Map(fd, bytes);
}

Result<std::unique_ptr<SharedMemory>> SharedMemory::Map(int fd, size_t bytes) {
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int saved = errno;
    ::close(fd);
    return MakeError(ErrorKind::kIo, "cannot map {} bytes of shared memory: {}", bytes, std::strerror(saved));
  }
  return std::unique_ptr<SharedMemory>(new SharedMemory(fd, static_cast<unsigned char*>(data), bytes));
}

SharedMemory::~SharedMemory() {
  ::munmap(data_, size_);
  ::close(fd_);
}

namespace {

// One byte carrying one descriptor (SCM_RIGHTS); not copyable, the header points into it.
struct DescriptorMessage {
  char byte = 'F';
  iovec io{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};

  DescriptorMessage() {
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
  }
  DescriptorMessage(const DescriptorMessage&) = delete;
  DescriptorMessage& operator=(const DescriptorMessage&) = delete;
};

}  // namespace

Status SendDescriptor(int socket_fd, int fd) {
  DescriptorMessage frame;
  msghdr& message = frame.message;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof(int));
  while (::sendmsg(socket_fd, &message, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) return MakeError(ErrorKind::kIo, "sending a descriptor failed: {}", std::strerror(errno));
  }
  return {};
}

Result<int> ReceiveDescriptor(int socket_fd,
                              std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (deadline) {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        *deadline - std::chrono::steady_clock::now());
    pollfd poll_fd{socket_fd, POLLIN, 0};
    if (remaining.count() <= 0 || ::poll(&poll_fd, 1, static_cast<int>(remaining.count())) <= 0) {
      return MakeError(ErrorKind::kTimeout, "no descriptor in time");
    }
  }
  DescriptorMessage frame;
  frame.byte = 0;
  msghdr& message = frame.message;
  ssize_t received;
  do {
    received = ::recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received == 0) return MakeError(ErrorKind::kNotFound, "channel closed");
  if (received < 0) return MakeError(ErrorKind::kIo, "receiving a descriptor failed: {}", std::strerror(errno));
  const cmsghdr* header = CMSG_FIRSTHDR(&message);
  if (frame.byte != 'F' || header == nullptr || header->cmsg_type != SCM_RIGHTS) {
    return MakeError(ErrorKind::kProtocol, "expected a descriptor");
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(header), sizeof(int));
  return fd;
}

}  // namespace ksmith
