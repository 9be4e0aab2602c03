#include "llm/chat_protocol.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

ChatRequest Request() {
  return {"model-x", {{"system", "You write kernels."}, {"user", "relu, please"}}, 1000, 0.5};
}

TEST(ChatProtocol, OpenAiBodyKeepsTheSystemMessageInline) {
  const auto body = BuildChatBody(ChatProtocol::kOpenAi, Request());
  EXPECT_EQ(body["model"], "model-x");
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_FALSE(body.contains("system"));
}

TEST(ChatProtocol, AnthropicBodyTakesTheSystemPromptApart) {
  const auto body = BuildChatBody(ChatProtocol::kAnthropic, Request());
  EXPECT_EQ(body["system"], "You write kernels.");
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
}

TEST(ChatProtocol, ReadsAnOpenAiReplyWithItsTokens) {
  auto reply = ParseChatReply(ChatProtocol::kOpenAi, 200, R"({"choices":[{"message":{"role":"assistant",
      "content":"```cpp\nx\n```"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":34}})");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "```cpp\nx\n```");
  EXPECT_EQ(reply->input_tokens, 12);
  EXPECT_EQ(reply->output_tokens, 34);
  EXPECT_FALSE(reply->truncated());
}

TEST(ChatProtocol, ReadsAnAnthropicReplyAndNormalizesItsStopReason) {
  auto reply = ParseChatReply(ChatProtocol::kAnthropic, 200, R"({"content":[{"type":"text","text":"part one "},
      {"type":"thinking","thinking":"..."},{"type":"text","text":"part two"}],"stop_reason":"max_tokens",
      "usage":{"input_tokens":5,"output_tokens":7}})");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "part one part two");
  EXPECT_TRUE(reply->truncated());
  EXPECT_EQ(reply->output_tokens, 7);
}

TEST(ChatProtocol, ATruncatedReplyIsAReplyNotAnError) {
  auto reply = ParseChatReply(ChatProtocol::kOpenAi, 200,
                              R"({"choices":[{"message":{"content":"```cpp\nvoid f("},"finish_reason":"length"}]})");
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(reply->truncated());
}

// Every kind of garbage becomes an error that says what arrived.
TEST(ChatProtocol, GarbageRepliesAreExplainedErrors) {
  const struct {
    int status;
    const char* body;
    const char* says;
  } cases[] = {
      {502, "<html><body><h1>502 Bad Gateway</h1></body></html>", "HTML page"},
      {200, "{\"choices\": [", "not valid JSON"},
      {200, "", "empty"},
      {200, R"({"choices":[]})", "no choices"},
      {200, R"({"choices":[{"message":{"content":""},"finish_reason":"stop"}]})", "message is empty"},
      {200, R"({"choices":[{"message":{"content":null},"finish_reason":"stop"}]})", "message is empty"},
      {200, R"({"choices":[7]})", "expected shape"},
      {429, R"({"error":{"message":"Rate limit reached","type":"rate_limit"}})", "Rate limit reached"},
      {500, R"({"detail":"boom"})", "HTTP 500"},
      {200, R"([1, 2, 3])", "not a JSON object"},
  };
  for (const auto& garbage : cases) {
    auto reply = ParseChatReply(ChatProtocol::kOpenAi, garbage.status, garbage.body);
    ASSERT_FALSE(reply.ok()) << garbage.body;
    EXPECT_NE(reply.error().message.find(garbage.says), std::string::npos)
        << garbage.body << " -> " << reply.error().message;
  }
}

}  // namespace
}  // namespace ksmith
