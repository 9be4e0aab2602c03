// The on-disk response cache on a real directory: what is kept, what makes a different entry, and
// damaged entries read as misses.
#include "llm/response_cache.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

constexpr char kUrl[] = "http://127.0.0.1:1/v1/chat/completions";
constexpr char kRequest[] = R"({"model":"m","messages":[{"role":"user","content":"relu"}]})";
constexpr char kReply[] = R"({"choices":[{"message":{"content":"int x;"},"finish_reason":"stop"}],
    "usage":{"prompt_tokens":7,"completion_tokens":3}})";

TEST(ResponseCache, FindsWhatWasStoredWithItsTokens) {
  ScopedTempDir directory("ksmith-response-cache");
  ASSERT_TRUE(directory.ok());
  ResponseCache cache(directory.path() / "responses");
  EXPECT_FALSE(cache.Find(ChatProtocol::kOpenAi, kUrl, kRequest));
  ASSERT_TRUE(cache.Store(ChatProtocol::kOpenAi, kUrl, kRequest, kReply).ok());
  auto found = cache.Find(ChatProtocol::kOpenAi, kUrl, kRequest);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->response_body, kReply);
  EXPECT_EQ(found->reply.content, "int x;");
  EXPECT_EQ(found->reply.input_tokens, 7);
  EXPECT_EQ(found->reply.output_tokens, 3);
}

TEST(ResponseCache, TheProtocolTheUrlAndTheBodyEachMakeADifferentEntry) {
  ScopedTempDir directory("ksmith-response-cache");
  ASSERT_TRUE(directory.ok());
  ResponseCache cache(directory.path());
  ASSERT_TRUE(cache.Store(ChatProtocol::kOpenAi, kUrl, kRequest, kReply).ok());
  EXPECT_FALSE(cache.Find(ChatProtocol::kAnthropic, kUrl, kRequest));
  EXPECT_FALSE(cache.Find(ChatProtocol::kOpenAi, "http://127.0.0.1:2/v1/chat/completions", kRequest));
  EXPECT_FALSE(cache.Find(ChatProtocol::kOpenAi, kUrl, R"({"model":"m2"})"));
  const std::string key = ResponseCache::Key(ChatProtocol::kOpenAi, kUrl, kRequest);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, ResponseCache::Key(ChatProtocol::kAnthropic, kUrl, kRequest));
}

TEST(ResponseCache, RefusesToStoreAnUnusableReply) {
  ScopedTempDir directory("ksmith-response-cache");
  ASSERT_TRUE(directory.ok());
  ResponseCache cache(directory.path());
  for (const char* garbage : {"<html>502</html>", R"({"choices":[]})", R"({"error":{"message":"no"}})"}) {
    const Status stored = cache.Store(ChatProtocol::kOpenAi, kUrl, kRequest, garbage);
    EXPECT_EQ(stored.error().kind, ErrorKind::kInvalidArgument) << garbage;
  }
  EXPECT_FALSE(std::filesystem::exists(
      cache.PathOf(ResponseCache::Key(ChatProtocol::kOpenAi, kUrl, kRequest))));
}

// Given entries damaged in every way a disk or a person can, each reads as a miss and never throws.
TEST(ResponseCache, ADamagedEntryIsAMiss) {
  ScopedTempDir directory("ksmith-response-cache");
  ASSERT_TRUE(directory.ok());
  ResponseCache cache(directory.path());
  const std::string key = ResponseCache::Key(ChatProtocol::kOpenAi, kUrl, kRequest);
  const std::string other_key = ResponseCache::Key(ChatProtocol::kOpenAi, kUrl, "{}");
  const std::string damaged[] = {
      "", "{\"format\":1,\"key\":\"", "[1,2,3]", "null",
      R"({"format":1,"key":")" + key + R"(","response_body":42})",
      R"({"format":1,"key":")" + key + R"(","response_body":"<html>"})",
      R"({"format":1,"key":")" + other_key + R"(","response_body":"{}"})",
      R"({"format":99,"key":")" + key + R"(","response_body":"{}"})",
  };
  for (const std::string& contents : damaged) {
    ASSERT_TRUE(WriteFileAtomic(cache.PathOf(key), contents).ok());
    EXPECT_FALSE(cache.Find(ChatProtocol::kOpenAi, kUrl, kRequest)) << contents;
  }
  std::filesystem::remove(cache.PathOf(key));
  std::filesystem::create_directories(cache.PathOf(key));  // a directory where the file should be
  EXPECT_FALSE(cache.Find(ChatProtocol::kOpenAi, kUrl, kRequest));
}

TEST(ResponseCache, AnUnwritableDirectoryIsAnIoError) {
  ScopedTempDir directory("ksmith-response-cache");
  ASSERT_TRUE(directory.ok());
  ASSERT_TRUE(WriteFileAtomic(directory.path() / "file", "x").ok());
  ResponseCache cache(directory.path() / "file");  // a file, not a directory
  const Status stored = cache.Store(ChatProtocol::kOpenAi, kUrl, kRequest, kReply);
  ASSERT_FALSE(stored.ok());
  EXPECT_EQ(stored.error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace ksmith
