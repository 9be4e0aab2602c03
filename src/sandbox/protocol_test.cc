// The framed worker protocol over real socketpairs: round trips, and every malformed, truncated,
// oversized or late frame turned into an error value.
#include "sandbox/protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class ProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_), 0); }
  void TearDown() override {
    for (int& fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
  void CloseWriter() {
    ::close(fds_[0]);
    fds_[0] = -1;
  }
  void WriteRaw(const std::string& bytes) {
    ASSERT_EQ(::write(fds_[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  static std::string Prefix(const char magic[4], uint32_t header_bytes, uint64_t blob_bytes) {
    std::string prefix(16, '\0');
    std::memcpy(prefix.data(), magic, 4);
    std::memcpy(prefix.data() + 4, &header_bytes, 4);
    std::memcpy(prefix.data() + 8, &blob_bytes, 8);
    return prefix;
  }
  Result<Message> ReadWithin(milliseconds timeout) { return ReadMessage(fds_[1], Clock::now() + timeout); }

  int fds_[2] = {-1, -1};  // [0]: the writer's end, [1]: the reader's end
};

TEST_F(ProtocolTest, RoundTripsAHeaderAndABinaryBlob) {
  Message sent;
  sent.header = {{"type", "run"}, {"canary", 123456789u}, {"scalars", {1, 2, 3}}};
  sent.blob = std::string("\0\x01\xff binary \0 data", 17);
  ASSERT_TRUE(WriteMessage(fds_[0], sent).ok());
  auto received = ReadMessage(fds_[1], std::nullopt);
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_EQ(received->type(), "run");
  EXPECT_EQ(received->header, sent.header);
  EXPECT_EQ(received->blob, sent.blob);
}

TEST_F(ProtocolTest, RoundTripsSeveralMessagesInOrder) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(WriteMessage(fds_[0], Message{{{"type", "n"}, {"i", i}}, std::string(i, 'x')}).ok());
  }
  for (int i = 0; i < 3; ++i) {
    auto received = ReadWithin(milliseconds(2000));
    ASSERT_TRUE(received.ok()) << received.error().message;
    EXPECT_EQ(received->header.at("i"), i);
    EXPECT_EQ(received->blob, std::string(i, 'x'));
  }
}

TEST_F(ProtocolTest, RoundTripsABlobLargerThanTheSocketBuffer) {
  Message sent{{{"type", "result"}}, std::string(8 << 20, '\0')};
  for (size_t i = 0; i < sent.blob.size(); i += 4093) sent.blob[i] = static_cast<char>(i % 251);
  Status written;
  std::thread writer([&] { written = WriteMessage(fds_[0], sent); });
  auto received = ReadWithin(milliseconds(10'000));
  writer.join();
  ASSERT_TRUE(written.ok()) << written.error().message;
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_TRUE(received->blob == sent.blob);
}

TEST_F(ProtocolTest, EmptyBlobRoundTrips) {
  ASSERT_TRUE(WriteMessage(fds_[0], Message{{{"type", "bye"}}, {}}).ok());
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_TRUE(received.ok());
  EXPECT_EQ(received->type(), "bye");
  EXPECT_TRUE(received->blob.empty());
}

TEST_F(ProtocolTest, WrongMagicIsAProtocolError) {
  WriteRaw(Prefix("HTTP", 2, 0) + "{}");
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(received.error().message.find("malformed frame prefix"), std::string::npos);
}

TEST_F(ProtocolTest, OversizedHeaderLengthIsRefusedBeforeReadingOrAllocating) {
  // Only the prefix is sent: a reader that believed the length would wait for 4 GiB of header
  // (and time out); a bounded reader refuses at once.
  WriteRaw(Prefix("KSM1", 0xffffffffu, 0));
  const auto start = Clock::now();
  auto received = ReadWithin(milliseconds(3000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(received.error().message.find("frame too large"), std::string::npos);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST_F(ProtocolTest, OversizedBlobLengthIsRefused) {
  WriteRaw(Prefix("KSM1", 2, kMaxBlobBytes + 1) + "{}");
  auto received = ReadWithin(milliseconds(3000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
}

TEST_F(ProtocolTest, ClosedChannelBeforeAFrameIsNotFound) {
  CloseWriter();
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(received.error().message, "channel closed");
}

TEST_F(ProtocolTest, ClosedInsideThePrefixIsAProtocolError) {
  WriteRaw("KSM1\x05");
  CloseWriter();
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
}

TEST_F(ProtocolTest, ClosedInsideTheHeaderIsAProtocolError) {
  WriteRaw(Prefix("KSM1", 20, 0) + "{\"type\":");
  CloseWriter();
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(received.error().message.find("inside its header"), std::string::npos);
}

TEST_F(ProtocolTest, ClosedInsideTheDataIsAProtocolError) {
  const std::string header = R"({"type":"result"})";
  WriteRaw(Prefix("KSM1", header.size(), 100) + header + "only ten b");
  CloseWriter();
  auto received = ReadWithin(milliseconds(2000));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(received.error().message.find("inside its data"), std::string::npos);
}

TEST_F(ProtocolTest, HeaderThatIsNotAJsonObjectWithATypeIsAProtocolError) {
  for (const std::string header : {"not json", "[1, 2]", R"({"kind":"run"})", R"("type")"}) {
    WriteRaw(Prefix("KSM1", header.size(), 0) + header);
    auto received = ReadWithin(milliseconds(2000));
    ASSERT_FALSE(received.ok()) << header;
    EXPECT_EQ(received.error().kind, ErrorKind::kProtocol) << header;
  }
}

TEST_F(ProtocolTest, NothingArrivingBeforeTheDeadlineIsATimeout) {
  const auto start = Clock::now();
  auto received = ReadWithin(milliseconds(100));
  const auto elapsed = Clock::now() - start;
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kTimeout);
  EXPECT_GE(elapsed, milliseconds(90));
  EXPECT_LT(elapsed, milliseconds(1000));
}

TEST_F(ProtocolTest, HalfAFrameBeforeTheDeadlineIsATimeout) {
  WriteRaw(Prefix("KSM1", 50, 0) + "{\"type\"");
  auto received = ReadWithin(milliseconds(100));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kTimeout);
}

TEST_F(ProtocolTest, DeadlineAlreadyPassedIsATimeoutEvenWithDataWaiting) {
  ASSERT_TRUE(WriteMessage(fds_[0], Message{{{"type", "late"}}, {}}).ok());
  auto received = ReadMessage(fds_[1], Clock::now() - milliseconds(1));
  ASSERT_FALSE(received.ok());
  EXPECT_EQ(received.error().kind, ErrorKind::kTimeout);
}

TEST_F(ProtocolTest, WritingToAClosedPeerIsAnIoErrorNotASignal) {
  ::close(fds_[1]);
  fds_[1] = -1;
  const Status status = WriteMessage(fds_[0], Message{{{"type", "run"}}, "data"});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kIo);
}

TEST(Message, TypeIsEmptyWhenTheHeaderHasNone) {
  Message message;
  message.header = nlohmann::json::object();
  EXPECT_EQ(message.type(), "");
  message.header["type"] = "setup";
  EXPECT_EQ(message.type(), "setup");
}

}  // namespace
}  // namespace ksmith
