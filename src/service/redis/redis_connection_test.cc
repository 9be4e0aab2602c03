#include "service/redis/redis_connection.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

TEST(RedisAddress, ParsesHostPortAndPrefix) {
  auto full = RedisAddress::Parse("redis://10.0.0.5:6380/rl");
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_EQ(full->host, "10.0.0.5");
  EXPECT_EQ(full->port, 6380);
  EXPECT_EQ(full->Key("jobs"), "rl:jobs");
  auto bare = RedisAddress::Parse("redis://");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->ToString(), "redis://127.0.0.1:6379/ksmith");
  for (const char* bad : {"http://x", "redis://h:0", "redis://h:99999", "redis://h:6379/a b", "redis://h:x"}) {
    EXPECT_FALSE(RedisAddress::Parse(bad).ok()) << bad;
  }
}

// No Redis listens on port 1: a command fails with a message that names the address, and the
// connection is tried again on the next command rather than left broken.
TEST(RedisConnection, AnUnreachableRedisIsAnErrorThatNamesIt) {
  RedisConnection connection(RedisAddress::Parse("redis://127.0.0.1:1/x").value());
  for (int i = 0; i < 2; ++i) {
    auto reply = connection.Command({"PING"});
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().kind, ErrorKind::kIo);
    EXPECT_NE(reply.error().message.find("127.0.0.1:1"), std::string::npos) << reply.error().message;
  }
}

}  // namespace
}  // namespace ksmith
