// libcurl against a real HTTP server on loopback (the scripted model endpoint): answers of any
// status, headers, timeouts, refused connections and oversized answers.
#include "llm/http_client.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "testing/scripted_llm_server.h"

namespace ksmith {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::ScriptedLlmServer;

constexpr milliseconds kTimeout{5000};

std::unique_ptr<ScriptedLlmServer> StartOrDie(const json& script) {
  auto server = ScriptedLlmServer::Start(script);
  EXPECT_TRUE(server.ok()) << server.error().message;
  return server.ok() ? std::move(*server) : nullptr;
}

TEST(HttpClient, ReturnsStatusLowerCaseHeadersAndBody) {
  auto server = StartOrDie({{"steps", {{{"status", 201}, {"raw", R"({"ok":true})"}, {"headers", {{"X-Trace", "abc"}}}}}}});
  ASSERT_TRUE(server);
  auto response = HttpPost(server->base_url() + "/chat/completions",
                           {{"Content-Type", "application/json"}, {"X-Sent", "1"}}, R"({"q":1})", kTimeout, kTimeout);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, R"({"ok":true})");
  EXPECT_EQ(response->headers.at("x-trace"), "abc");
  const auto requests = server->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0]["headers"]["x-sent"], "1");
  EXPECT_EQ(requests[0]["body"]["q"], 1);
}

TEST(HttpClient, AServerErrorIsStillAnAnswer) {
  auto server = StartOrDie({{"steps", {{{"status", 503}}}}});
  ASSERT_TRUE(server);
  auto response = HttpPost(server->base_url() + "/chat/completions", {}, "{}", kTimeout, kTimeout);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 503);
}

TEST(HttpClient, ALateAnswerIsATimeoutNamingTheUrl) {
  auto server = StartOrDie({{"steps", {{{"content", "late"}, {"delay_ms", 2000}}}}});
  ASSERT_TRUE(server);
  const std::string url = server->base_url() + "/chat/completions";
  const auto start = std::chrono::steady_clock::now();
  auto response = HttpPost(url, {}, "{}", kTimeout, milliseconds(150));
  ASSERT_FALSE(response.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1500));
  EXPECT_EQ(response.error().kind, ErrorKind::kTimeout);
  EXPECT_NE(response.error().message.find(url), std::string::npos) << response.error().message;
  EXPECT_NE(response.error().message.find("timed out"), std::string::npos) << response.error().message;
}

TEST(HttpClient, NothingListeningIsAnIoErrorWithCurlsReason) {
  std::string url;
  {
    auto server = StartOrDie({{"steps", json::array()}});
    ASSERT_TRUE(server);
    url = server->base_url() + "/chat/completions";
  }  // the port is free again: connections are refused
  auto response = HttpPost(url, {{"Authorization", "Bearer sk-never-in-errors"}}, "{}", kTimeout, kTimeout);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kIo);
  EXPECT_NE(response.error().message.find(url), std::string::npos) << response.error().message;
  EXPECT_NE(response.error().message.find("connect"), std::string::npos) << response.error().message;
  EXPECT_EQ(response.error().message.find("sk-never-in-errors"), std::string::npos);
}

TEST(HttpClient, RefusesAnAnswerLargerThanTheCap) {
  auto server = StartOrDie({{"steps", {{{"raw", std::string(100'000, 'x')}}}}});
  ASSERT_TRUE(server);
  auto response = HttpPost(server->base_url() + "/chat/completions", {}, "{}", kTimeout, kTimeout, 10'000);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(response.error().message.find("exceeds the limit of 10000 bytes"), std::string::npos)
      << response.error().message;
}

TEST(HttpClient, RefusesUrlsThatAreNotHttp) {
  auto response = HttpPost("file:///etc/passwd", {}, "{}", kTimeout, kTimeout);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kIo);
}

}  // namespace
}  // namespace ksmith
