// The HTTP providers end to end over loopback against the scripted model endpoint, for both
// protocols: answers, retries, every kind of garbage, the key's secrecy, the concurrency limit and
// the response cache.
#include "llm/http_provider.h"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "llm/provider.h"
#include "testing/scripted_llm_server.h"

namespace ksmith {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::ScriptedLlmServer;

constexpr char kKey[] = "sk-test-SECRET-0123456789";

std::unique_ptr<ScriptedLlmServer> StartOrDie(const json& script) {
  auto server = ScriptedLlmServer::Start(script);
  EXPECT_TRUE(server.ok()) << server.error().message;
  return server.ok() ? std::move(*server) : nullptr;
}

ChatRequest Request(const std::string& text = "write relu") {
  return {"", {{"system", "You write kernels."}, {"user", text}}, 1000, 0.0};
}

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

// Parameterized by provider name: every behaviour holds for both wire formats.
class HttpProviderTest : public ::testing::TestWithParam<std::string> {
 protected:
  ProviderSettings Settings(const ScriptedLlmServer& server) {
    ProviderSettings settings;
    settings.provider = GetParam();
    settings.base_url = server.base_url();
    settings.model = "model-under-test";
    settings.api_key = kKey;
    settings.request_timeout = milliseconds(5000);
    settings.connect_timeout = milliseconds(2000);
    settings.retry.max_attempts = 3;
    settings.retry.base_delay = milliseconds(10);
    settings.retry.max_delay = milliseconds(2000);
    settings.progress = [this](const std::string& line) {
      std::lock_guard lock(progress_mutex_);
      progress_.push_back(line);
    };
    return settings;
  }
  bool anthropic() const { return GetParam() == "anthropic"; }

  std::mutex progress_mutex_;
  std::vector<std::string> progress_;  // guarded by progress_mutex_
};

TEST_P(HttpProviderTest, AnswersWithTokensAndCost) {
  auto server = StartOrDie({{"steps", {{{"content", "```cpp\nint relu;\n```"}, {"input_tokens", 1000},
                                        {"output_tokens", 500}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings = Settings(*server);
  settings.price = {2.0, 10.0};
  const LlmCall call = MakeHttpProvider(settings)->Complete(Request());
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_EQ(call.error, "");
  EXPECT_EQ(call.reply->content, "```cpp\nint relu;\n```");
  EXPECT_EQ(call.provider, GetParam());
  EXPECT_EQ(call.model, "model-under-test");
  EXPECT_EQ(call.request["model"], "model-under-test");
  EXPECT_EQ(call.http_status, 200);
  EXPECT_EQ(call.attempts, 1);
  EXPECT_FALSE(call.cached);
  EXPECT_EQ(call.input_tokens, 1000);
  EXPECT_EQ(call.output_tokens, 500);
  EXPECT_DOUBLE_EQ(call.cost_dollars, (1000 * 2.0 + 500 * 10.0) / 1e6);
  EXPECT_GT(call.latency_s, 0.0);

  const json sent = server->requests().at(0);
  EXPECT_EQ(sent["path"], anthropic() ? "/v1/messages" : "/v1/chat/completions");
  EXPECT_EQ(sent["headers"]["content-type"], "application/json");
  if (anthropic()) {
    EXPECT_EQ(sent["headers"]["x-api-key"], kKey);
    EXPECT_EQ(sent["headers"]["anthropic-version"], "2023-06-01");
    EXPECT_EQ(sent["body"]["system"], "You write kernels.");
  } else {
    EXPECT_EQ(sent["headers"]["authorization"], std::string("Bearer ") + kKey);
  }
}

TEST_P(HttpProviderTest, RetriesAServerErrorThenAnswers) {
  auto server = StartOrDie({{"steps", {{{"status", 500}}, {{"status", 529}, {"raw", "<html>overloaded</html>"}},
                                       {{"content", "fine"}}}}});
  ASSERT_TRUE(server);
  const LlmCall call = MakeHttpProvider(Settings(*server))->Complete(Request());
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_EQ(call.reply->content, "fine");
  EXPECT_EQ(call.attempts, 3);
  EXPECT_EQ(server->served(), 3u);
  std::lock_guard lock(progress_mutex_);
  ASSERT_EQ(progress_.size(), 2u);
  EXPECT_TRUE(Contains(progress_[0], "HTTP 500; retrying in"));
  EXPECT_TRUE(Contains(progress_[1], "(attempt 3 of 3)"));
}

TEST_P(HttpProviderTest, RetriesALateAnswerThenAnswers) {
  auto server = StartOrDie({{"steps", {{{"content", "too late"}, {"delay_ms", 1500}}, {{"content", "in time"}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings = Settings(*server);
  settings.request_timeout = milliseconds(200);
  const LlmCall call = MakeHttpProvider(settings)->Complete(Request());
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_EQ(call.reply->content, "in time");
  EXPECT_EQ(call.attempts, 2);
  EXPECT_GE(call.latency_s, 0.2);
}

TEST_P(HttpProviderTest, GivesUpWhenNothingListensSayingHowOftenItTried) {
  std::string base_url;
  {
    auto server = StartOrDie({{"steps", json::array()}});
    ASSERT_TRUE(server);
    base_url = server->base_url();
  }
  ProviderSettings settings;
  settings.provider = GetParam();
  settings.base_url = base_url;
  settings.retry.max_attempts = 3;
  settings.retry.base_delay = milliseconds(10);
  const LlmCall call = MakeHttpProvider(settings)->Complete(Request());
  EXPECT_FALSE(call.reply);
  EXPECT_EQ(call.attempts, 3);
  EXPECT_EQ(call.http_status, 0);
  EXPECT_TRUE(Contains(call.error, "gave up after 3 attempts"));
  EXPECT_TRUE(Contains(call.error, "no answer"));
  EXPECT_TRUE(Contains(call.error, base_url));
}

TEST_P(HttpProviderTest, ABadKeyIsNotRetriedAndNamesTheVariable) {
  auto server = StartOrDie({{"steps", {{{"status", 401}, {"content", "invalid api key"}}, {{"content", "never"}}}}});
  ASSERT_TRUE(server);
  const LlmCall call = MakeHttpProvider(Settings(*server))->Complete(Request());
  EXPECT_FALSE(call.reply);
  EXPECT_EQ(call.attempts, 1);
  EXPECT_EQ(call.http_status, 401);
  EXPECT_EQ(server->served(), 1u);
  EXPECT_TRUE(Contains(call.error, "HTTP 401"));
  EXPECT_TRUE(Contains(call.error, "invalid api key"));
  EXPECT_TRUE(Contains(call.error, anthropic() ? "check ANTHROPIC_API_KEY" : "check OPENAI_API_KEY"));
}

// Garbage with a 200 is not worth retrying: the same server says the same thing again.
TEST_P(HttpProviderTest, GarbageRepliesAreExplainedErrorsNotRetried) {
  const struct {
    json step;
    const char* says;
  } cases[] = {
      {{{"raw", "<!DOCTYPE html><html><body>Gateway</body></html>"}}, "an HTML page"},
      {{{"raw", "{\"choices\": [tru"}}, "not valid JSON"},
      {{{"raw", ""}}, "empty"},
      {{{"empty_choices", true}}, anthropic() ? "empty" : "no choices"},
      {{{"status", 400}, {"content", "max_tokens is too large"}}, "max_tokens is too large"},
  };
  for (const auto& test : cases) {
    auto server = StartOrDie({{"steps", {test.step}}, {"after_end", "repeat_last"}});
    ASSERT_TRUE(server);
    const LlmCall call = MakeHttpProvider(Settings(*server))->Complete(Request());
    EXPECT_FALSE(call.reply) << test.step.dump();
    EXPECT_EQ(call.attempts, 1) << test.step.dump();
    EXPECT_TRUE(Contains(call.error, test.says)) << test.step.dump();
    EXPECT_EQ(call.input_tokens + call.output_tokens, 0);
    EXPECT_EQ(call.cost_dollars, 0);
  }
}

TEST_P(HttpProviderTest, ATruncatedReplyIsAReply) {
  auto server = StartOrDie({{"steps", {{{"content", "```cpp\nvoid f("}, {"finish_reason", "length"}}}}});
  ASSERT_TRUE(server);
  const LlmCall call = MakeHttpProvider(Settings(*server))->Complete(Request());
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_TRUE(call.reply->truncated());
  EXPECT_EQ(call.error, "");
}

// Given a server that echoes the key back (in an error and in a reply), no part of any LlmCall
// holds it, while the server did receive it.
TEST_P(HttpProviderTest, TheKeyNeverAppearsInAnLlmCall) {
  const std::string echoed = std::string("Incorrect API key provided: ") + kKey;
  auto server = StartOrDie({{"steps", {{{"status", 401}, {"content", echoed}}, {{"content", echoed}}}}});
  ASSERT_TRUE(server);
  auto provider = MakeHttpProvider(Settings(*server));
  for (const LlmCall& call : {provider->Complete(Request()), provider->Complete(Request(kKey))}) {
    std::string everything = call.request.dump() + call.response_body + call.error + call.provider + call.model;
    if (call.reply) everything += call.reply->content;
    EXPECT_FALSE(Contains(everything, kKey));
    EXPECT_TRUE(Contains(everything, "[redacted]"));
  }
  EXPECT_TRUE(Contains(server->requests().at(0)["headers"].dump(), kKey));
}

TEST_P(HttpProviderTest, ASecondIdenticalRequestComesFromTheCache) {
  auto server = StartOrDie({{"steps", {{{"content", "first"}, {"input_tokens", 40}, {"output_tokens", 8}},
                                       {{"content", "second"}}}}});
  ASSERT_TRUE(server);
  ScopedTempDir cache("ksmith-response-cache");
  ASSERT_TRUE(cache.ok());
  ProviderSettings settings = Settings(*server);
  settings.cache_directory = cache.path();
  settings.price = {1.0, 1.0};
  auto provider = MakeHttpProvider(settings);
  const LlmCall live = provider->Complete(Request());
  const LlmCall cached = provider->Complete(Request());
  ASSERT_TRUE(cached.reply) << cached.error;
  EXPECT_TRUE(cached.cached);
  EXPECT_FALSE(live.cached);
  EXPECT_EQ(server->served(), 1u);
  EXPECT_EQ(cached.reply->content, "first");
  EXPECT_EQ(cached.input_tokens, 40);
  EXPECT_EQ(cached.output_tokens, 8);
  EXPECT_EQ(cached.cost_dollars, 0);  // nothing was spent
  EXPECT_GT(live.cost_dollars, 0);
  EXPECT_LT(cached.latency_s, 0.5);
  EXPECT_EQ(cached.response_body, live.response_body);
  // A different prompt is a different entry.
  EXPECT_EQ(provider->Complete(Request("write gelu")).reply->content, "second");
}

TEST_P(HttpProviderTest, FailuresAreNotCached) {
  auto server = StartOrDie({{"steps", {{{"empty_choices", true}}, {{"content", "real"}}}}});
  ASSERT_TRUE(server);
  ScopedTempDir cache("ksmith-response-cache");
  ASSERT_TRUE(cache.ok());
  ProviderSettings settings = Settings(*server);
  settings.cache_directory = cache.path();
  auto provider = MakeHttpProvider(settings);
  EXPECT_FALSE(provider->Complete(Request()).reply);
  const LlmCall second = provider->Complete(Request());
  ASSERT_TRUE(second.reply) << second.error;
  EXPECT_FALSE(second.cached);
  EXPECT_EQ(second.reply->content, "real");
}

INSTANTIATE_TEST_SUITE_P(HttpProvider, HttpProviderTest, ::testing::Values("openai", "anthropic"),
                         [](const auto& info) { return info.param; });

TEST(HttpProvider, WaitsForRetryAfterOnA429) {
  auto server = StartOrDie({{"steps", {{{"status", 429}, {"headers", {{"Retry-After", "1"}}}}, {{"content", "ok"}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings;
  settings.base_url = server->base_url();
  settings.retry.base_delay = milliseconds(10);
  std::vector<std::string> progress;
  settings.progress = [&progress](const std::string& line) { progress.push_back(line); };
  const LlmCall call = MakeHttpProvider(settings)->Complete(Request());
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_EQ(call.attempts, 2);
  EXPECT_GE(call.latency_s, 0.95);
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_TRUE(Contains(progress[0], "openai: HTTP 429; retrying in 1.0 s (attempt 2 of 6)"));
}

// Given 8 callers and room for 2, the server never sees a third request at once.
TEST(HttpProvider, NeverHasMoreRequestsInFlightThanAllowed) {
  auto server = StartOrDie({{"steps", {{{"content", "ok"}, {"delay_ms", 150}, {"repeat", 8}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings;
  settings.base_url = server->base_url();
  settings.max_concurrency = 2;
  auto provider = MakeHttpProvider(settings);
  std::vector<std::thread> callers;
  std::atomic<int> replies{0};
  for (int caller = 0; caller < 8; ++caller) {
    callers.emplace_back([&] { replies += provider->Complete(Request()).reply ? 1 : 0; });
  }
  for (auto& thread : callers) thread.join();
  EXPECT_EQ(replies.load(), 8);
  EXPECT_EQ(server->max_in_flight(), 2);
}

TEST(HttpProvider, UsesTheSettingsModelUnlessTheRequestNamesOne) {
  auto server = StartOrDie({{"steps", {{{"content", "ok"}, {"repeat", 2}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings;
  settings.base_url = server->base_url() + "/";
  settings.model = "default-model";
  auto provider = MakeHttpProvider(settings);
  ChatRequest named = Request();
  named.model = "named-model";
  EXPECT_EQ(provider->Complete(Request()).request["model"], "default-model");
  EXPECT_EQ(provider->Complete(named).model, "named-model");
  EXPECT_EQ(server->requests().at(0)["path"], "/v1/chat/completions");  // the trailing '/' dropped
  EXPECT_FALSE(server->requests().at(0)["headers"].contains("authorization"));  // no key: no header
}

// Prompts quote compiler output, which is not always UTF-8.
TEST(HttpProvider, APromptThatIsNotUtf8IsSentWithTheBadBytesReplaced) {
  auto server = StartOrDie({{"steps", {{{"content", "ok"}}}}});
  ASSERT_TRUE(server);
  ProviderSettings settings;
  settings.base_url = server->base_url();
  const LlmCall call = MakeHttpProvider(settings)->Complete(Request("error at \xff\xfe here"));
  ASSERT_TRUE(call.reply) << call.error;
  EXPECT_NO_THROW(call.request.dump());
  EXPECT_TRUE(Contains(server->requests().at(0)["body"].dump(), "error at"));
}

TEST(HttpProvider, EndpointsAndHeadersFollowEachProtocol) {
  EXPECT_EQ(ChatEndpoint(ChatProtocol::kOpenAi, ""), "https://api.openai.com/v1/chat/completions");
  EXPECT_EQ(ChatEndpoint(ChatProtocol::kAnthropic, ""), "https://api.anthropic.com/v1/messages");
  EXPECT_EQ(ChatEndpoint(ChatProtocol::kOpenAi, "http://localhost:8000/v1//"),
            "http://localhost:8000/v1/chat/completions");
  EXPECT_EQ(ProtocolOf("anthropic"), ChatProtocol::kAnthropic);
  EXPECT_EQ(ProtocolOf("openai"), ChatProtocol::kOpenAi);
  EXPECT_EQ(ChatHeaders(ChatProtocol::kAnthropic, "k").at("x-api-key"), "k");
  EXPECT_EQ(ChatHeaders(ChatProtocol::kOpenAi, "k").at("Authorization"), "Bearer k");
  EXPECT_EQ(ChatHeaders(ChatProtocol::kOpenAi, "").count("Authorization"), 0u);
}

TEST(HttpProvider, RedactsOnlyKeysLongEnoughToBeReal) {
  EXPECT_EQ(Redact("a sk-0123456789 b sk-0123456789", "sk-0123456789"), "a [redacted] b [redacted]");
  EXPECT_EQ(Redact("a b c", "a"), "a b c");
  EXPECT_EQ(RedactJson(json{{"k", {"x sk-0123456789"}}}, "sk-0123456789"), json({{"k", {"x [redacted]"}}}));
}

}  // namespace
}  // namespace ksmith
