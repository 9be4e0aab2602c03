// Shared memory (memfd) and descriptor passing over real socketpairs.
#include "sandbox/shared_memory.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class DescriptorPassingTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  int fds_[2] = {-1, -1};
};

TEST(SharedMemory, CreateGivesAZeroedWritableMappingOfTheRequestedSize) {
  auto memory = SharedMemory::Create(1 << 16);
  ASSERT_TRUE(memory.ok()) << memory.error().message;
  EXPECT_EQ((*memory)->size(), size_t{1} << 16);
  ASSERT_NE((*memory)->data(), nullptr);
  for (size_t i = 0; i < (*memory)->size(); i += 4096) EXPECT_EQ((*memory)->data()[i], 0);
  (*memory)->data()[100] = 42;
  EXPECT_EQ((*memory)->data()[100], 42);
  struct stat info;
  ASSERT_EQ(::fstat((*memory)->fd(), &info), 0);
  EXPECT_EQ(info.st_size, 1 << 16);
  // Not inherited by programs the evaluator starts.
  EXPECT_TRUE(::fcntl((*memory)->fd(), F_GETFD) & FD_CLOEXEC);
}

TEST(SharedMemory, TwoMappingsOfOneDescriptorSeeTheSameBytes) {
  auto first = SharedMemory::Create(4096);
  ASSERT_TRUE(first.ok());
  auto second = SharedMemory::Map(::dup((*first)->fd()), 4096);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE((*first)->data(), (*second)->data());
  std::memcpy((*first)->data(), "shared", 6);
  EXPECT_EQ(std::memcmp((*second)->data(), "shared", 6), 0);
  (*second)->data()[4095] = 7;
  EXPECT_EQ((*first)->data()[4095], 7);
}

TEST(SharedMemory, MapOfABadDescriptorIsAnIoError) {
  auto memory = SharedMemory::Map(-1, 4096);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.error().kind, ErrorKind::kIo);
}

TEST_F(DescriptorPassingTest, ADescriptorArrivesAndReachesTheSameMemory) {
  auto memory = SharedMemory::Create(4096);
  ASSERT_TRUE(memory.ok());
  std::memcpy((*memory)->data(), "before", 6);
  ASSERT_TRUE(SendDescriptor(fds_[0], (*memory)->fd()).ok());
  auto received = ReceiveDescriptor(fds_[1], Clock::now() + milliseconds(2000));
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_NE(*received, (*memory)->fd());
  EXPECT_TRUE(::fcntl(*received, F_GETFD) & FD_CLOEXEC);
  auto mapped = SharedMemory::Map(*received, 4096);
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(std::memcmp((*mapped)->data(), "before", 6), 0);
  std::memcpy((*mapped)->data(), "after!", 6);
  EXPECT_EQ(std::memcmp((*memory)->data(), "after!", 6), 0);
}

TEST_F(DescriptorPassingTest, NothingSentBeforeTheDeadlineIsATimeout) {
  const auto start = Clock::now();
  auto received = ReceiveDescriptor(fds_[1], Clock::now() + milliseconds(100));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kTimeout);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST_F(DescriptorPassingTest, ClosedChannelIsNotFound) {
  ::close(fds_[0]);
  fds_[0] = -1;
  auto received = ReceiveDescriptor(fds_[1], Clock::now() + milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kNotFound);
}

TEST_F(DescriptorPassingTest, APlainByteWithoutADescriptorIsAProtocolError) {
  ASSERT_EQ(::write(fds_[0], "F", 1), 1);
  auto received = ReceiveDescriptor(fds_[1], Clock::now() + milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
}

TEST_F(DescriptorPassingTest, AnotherByteIsAProtocolError) {
  ASSERT_EQ(::write(fds_[0], "K", 1), 1);
  auto received = ReceiveDescriptor(fds_[1], std::nullopt);
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
}

TEST_F(DescriptorPassingTest, SendingOnAClosedSocketIsAnIoError) {
  ::close(fds_[1]);
  fds_[1] = -1;
  auto memory = SharedMemory::Create(4096);
  ASSERT_TRUE(memory.ok());
  const Status status = SendDescriptor(fds_[0], (*memory)->fd());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace ksmith
