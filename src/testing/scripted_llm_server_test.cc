// The scripted model endpoint, spoken to over real HTTP (HttpPost): both envelopes, the script's
// sequencing, the request log, and clear refusals of malformed scripts.
#include "testing/scripted_llm_server.h"

#include <chrono>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "llm/chat_protocol.h"
#include "llm/http_client.h"

namespace ksmith::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr milliseconds kTimeout{5000};

std::unique_ptr<ScriptedLlmServer> StartOrDie(const json& script, const std::filesystem::path& directory = {},
                                              ScriptedLlmServerOptions options = {}) {
  auto server = ScriptedLlmServer::Start(script, directory, options);
  EXPECT_TRUE(server.ok()) << server.error().message;
  return server.ok() ? std::move(*server) : nullptr;
}

HttpResponse Post(const ScriptedLlmServer& server, const std::string& path, const json& body = json::object()) {
  auto response = HttpPost(server.base_url() + path, {{"Content-Type", "application/json"}, {"X-Probe", "yes"}},
                           body.dump(), kTimeout, kTimeout);
  EXPECT_TRUE(response.ok()) << response.error().message;
  return response.ok() ? *response : HttpResponse{};
}

TEST(ScriptedLlmServer, AnswersOpenAiRequestsInTheOpenAiEnvelope) {
  auto server = StartOrDie({{"steps", {{{"content", "hello there"}, {"input_tokens", 12}, {"output_tokens", 3}}}}});
  ASSERT_TRUE(server);
  const HttpResponse response = Post(*server, "/chat/completions", {{"model", "m-1"}});
  EXPECT_EQ(response.status, 200);
  const json body = json::parse(response.body);
  EXPECT_EQ(body["model"], "m-1");
  auto reply = ParseChatReply(ChatProtocol::kOpenAi, response.status, response.body);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "hello there");
  EXPECT_EQ(reply->finish_reason, "stop");
  EXPECT_EQ(reply->input_tokens, 12);
  EXPECT_EQ(reply->output_tokens, 3);
}

TEST(ScriptedLlmServer, AnswersAnthropicRequestsInTheAnthropicEnvelope) {
  auto server = StartOrDie({{"steps", {{{"content", "12345678"}, {"finish_reason", "length"}}}}});
  ASSERT_TRUE(server);
  const HttpResponse response = Post(*server, "/messages");
  const json body = json::parse(response.body);
  EXPECT_EQ(body["stop_reason"], "max_tokens");
  auto reply = ParseChatReply(ChatProtocol::kAnthropic, response.status, response.body);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "12345678");
  EXPECT_TRUE(reply->truncated());
  EXPECT_EQ(reply->input_tokens, 100);  // the defaults: 100 in, content length / 4 out
  EXPECT_EQ(reply->output_tokens, 2);
}

TEST(ScriptedLlmServer, ServesStepsInOrderAcrossBothPathsThenRefuses) {
  auto server = StartOrDie({{"steps", {{{"content", "a"}, {"repeat", 2}}, {{"content", "b"}}}}});
  ASSERT_TRUE(server);
  EXPECT_EQ(ParseChatReply(ChatProtocol::kOpenAi, 200, Post(*server, "/chat/completions").body)->content, "a");
  EXPECT_EQ(ParseChatReply(ChatProtocol::kAnthropic, 200, Post(*server, "/messages").body)->content, "a");
  EXPECT_EQ(ParseChatReply(ChatProtocol::kOpenAi, 200, Post(*server, "/chat/completions").body)->content, "b");
  const HttpResponse exhausted = Post(*server, "/chat/completions");
  EXPECT_EQ(exhausted.status, 500);
  EXPECT_NE(exhausted.body.find("the script is exhausted"), std::string::npos) << exhausted.body;
  EXPECT_EQ(server->served(), 4u);
  EXPECT_TRUE(server->requests().back()["step"].is_null());
}

TEST(ScriptedLlmServer, RepeatLastServesTheLastStepForever) {
  auto server = StartOrDie({{"steps", {{{"content", "a"}}, {{"content", "z"}}}}, {"after_end", "repeat_last"}});
  ASSERT_TRUE(server);
  for (int request = 0; request < 4; ++request) Post(*server, "/chat/completions");
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0]["step"], 0);
  EXPECT_EQ(requests[3]["step"], 1);
}

TEST(ScriptedLlmServer, ErrorStatusesGetAProtocolShapedErrorBody) {
  auto server = StartOrDie({{"steps", {{{"status", 401}, {"content", "bad key"}}, {{"status", 429}}}}});
  ASSERT_TRUE(server);
  const HttpResponse unauthorized = Post(*server, "/chat/completions");
  EXPECT_EQ(unauthorized.status, 401);
  EXPECT_EQ(json::parse(unauthorized.body)["error"]["message"], "bad key");
  const HttpResponse limited = Post(*server, "/messages");
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(json::parse(limited.body)["type"], "error");
}

TEST(ScriptedLlmServer, SendsRawBodiesAndExtraHeadersAsScripted) {
  auto server = StartOrDie({{"steps", {{{"status", 502}, {"raw", "<html>Bad gateway</html>"},
                                        {"headers", {{"Retry-After", "7"}}}},
                                       {{"raw", "{not json"}}, {{"empty_choices", true}}}}});
  ASSERT_TRUE(server);
  const HttpResponse html = Post(*server, "/chat/completions");
  EXPECT_EQ(html.status, 502);
  EXPECT_EQ(html.body, "<html>Bad gateway</html>");
  EXPECT_EQ(html.headers.at("retry-after"), "7");
  EXPECT_EQ(html.headers.at("content-type"), "text/html");
  EXPECT_EQ(Post(*server, "/chat/completions").body, "{not json");
  EXPECT_EQ(json::parse(Post(*server, "/chat/completions").body)["choices"], json::array());
}

TEST(ScriptedLlmServer, LogsEveryRequestInMemoryAndAsJsonLines) {
  ScopedTempDir directory("ksmith-scripted-server");
  ASSERT_TRUE(directory.ok());
  const auto log_path = directory.path() / "requests.jsonl";
  auto server = StartOrDie({{"steps", {{{"content", "x"}}}}}, {}, {0, log_path});
  ASSERT_TRUE(server);
  Post(*server, "/chat/completions", {{"model", "m"}, {"messages", json::array()}});
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["path"], "/v1/chat/completions");
  EXPECT_EQ(requests[0]["headers"]["x-probe"], "yes");
  EXPECT_FALSE(requests[0]["headers"].contains("remote_addr"));  // httplib's, not the client's
  EXPECT_EQ(requests[0]["body"]["model"], "m");
  EXPECT_EQ(requests[0]["step"], 0);
  auto log = ReadFile(log_path);
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(json::parse(*log), requests[0]);
}

TEST(ScriptedLlmServer, ReadsContentFilesBesideTheScript) {
  ScopedTempDir directory("ksmith-scripted-server");
  ASSERT_TRUE(directory.ok());
  ASSERT_TRUE(WriteFileAtomic(directory.path() / "answer.md", "```cpp\nint x;\n```\n").ok());
  auto server = StartOrDie({{"steps", {{{"content_file", "answer.md"}}}}}, directory.path());
  ASSERT_TRUE(server);
  auto reply = ParseChatReply(ChatProtocol::kOpenAi, 200, Post(*server, "/chat/completions").body);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "```cpp\nint x;\n```\n");
}

TEST(ScriptedLlmServer, RefusesMalformedScriptsSayingWhatIsWrong) {
  const struct {
    json script;
    const char* says;
  } cases[] = {
      {json::array(), "\"steps\" list"},
      {{{"steps", {{{"contnet", "x"}}}}}, "unknown field \"contnet\""},
      {{{"steps", {{{"status", "200"}}}}}, "\"status\" must be an integer"},
      {{{"steps", {{{"repeat", 0}}}}}, "\"repeat\" must be an integer from 1"},
      {{{"steps", {{{"content_file", "missing.md"}}}}}, "missing.md: no such file"},
      {{{"steps", json::array()}, {"after_end", "loop"}}, "\"after_end\" must be"},
      {{{"steps", json::array()}, {"after_end", "repeat_last"}}, "needs at least one step"},
  };
  for (const auto& test : cases) {
    auto server = ScriptedLlmServer::Start(test.script, "/nonexistent");
    ASSERT_FALSE(server.ok()) << test.script.dump();
    EXPECT_EQ(server.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(server.error().message.find(test.says), std::string::npos) << server.error().message;
  }
}

TEST(ScriptedLlmServer, ReadScriptFileExplainsAMissingOrBrokenFile) {
  ScopedTempDir directory("ksmith-scripted-server");
  ASSERT_TRUE(directory.ok());
  EXPECT_EQ(ReadScriptFile(directory.path() / "none.json").error().kind, ErrorKind::kNotFound);
  ASSERT_TRUE(WriteFileAtomic(directory.path() / "bad.json", "{\"steps\": [").ok());
  auto broken = ReadScriptFile(directory.path() / "bad.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("not valid JSON"), std::string::npos);
}

// Given an answer delayed far beyond the test, destroying the server must not wait for it.
TEST(ScriptedLlmServer, StopsPromptlyWhileAnAnswerIsDelayed) {
  auto server = StartOrDie({{"steps", {{{"content", "late"}, {"delay_ms", 60'000}}}}});
  ASSERT_TRUE(server);
  auto response = HttpPost(server->base_url() + "/chat/completions", {}, "{}", kTimeout, milliseconds(100));
  EXPECT_EQ(response.error().kind, ErrorKind::kTimeout);
  const auto start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace ksmith::testing
