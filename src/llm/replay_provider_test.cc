// Replay: calls recorded from a live provider (over loopback, against the scripted endpoint) are
// answered again, in order, with no network; failures replay as the same failures.
#include "llm/replay_provider.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "testing/scripted_llm_server.h"

namespace ksmith {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

ChatRequest Request() { return {"m", {{"user", "relu"}}, 100, 0.0}; }

RecordedCall Record(const LlmCall& call) {
  return {call.provider, call.http_status, call.response_body, call.error};
}

// Given a live run of an answer, a truncated answer, garbage and a bad key, replay gives the same
// replies and the same failures in the same order, then says it has nothing left.
TEST(ReplayProvider, ReproducesALiveRunInOrderThenReportsExhaustion) {
  for (const std::string provider_name : {"openai", "anthropic"}) {
    auto server = testing::ScriptedLlmServer::Start(
        {{"steps", {{{"content", "one"}, {"input_tokens", 11}, {"output_tokens", 22}},
                    {{"content", "two"}, {"finish_reason", "length"}},
                    {{"raw", "<html>proxy error</html>"}},
                    {{"status", 401}, {"content", "bad key"}}}}});
    ASSERT_TRUE(server.ok()) << server.error().message;
    ProviderSettings settings;
    settings.provider = provider_name;
    settings.base_url = (*server)->base_url();
    auto live = MakeHttpProvider(settings);
    std::vector<LlmCall> recorded;
    std::vector<RecordedCall> recording;
    for (int call = 0; call < 4; ++call) {
      recorded.push_back(live->Complete(Request()));
      recording.push_back(Record(recorded.back()));
    }
    auto replay = MakeReplayProvider(recording);
    EXPECT_EQ(replay->name(), "replay");
    for (const LlmCall& original : recorded) {
      const LlmCall again = replay->Complete(Request());
      EXPECT_EQ(again.reply.has_value(), original.reply.has_value()) << original.error;
      if (original.reply) {
        EXPECT_EQ(again.reply->content, original.reply->content);
        EXPECT_EQ(again.reply->truncated(), original.reply->truncated());
      }
      EXPECT_EQ(again.error, original.error);
      EXPECT_EQ(again.input_tokens, original.input_tokens);
      EXPECT_EQ(again.output_tokens, original.output_tokens);
      EXPECT_EQ(again.http_status, original.http_status);
      EXPECT_EQ(again.request, original.request);
      EXPECT_FALSE(again.provider_exhausted);
    }
    EXPECT_EQ((*server)->served(), 4u);  // the replay never touched the network
    const LlmCall past_the_end = replay->Complete(Request());
    EXPECT_TRUE(past_the_end.provider_exhausted);
    EXPECT_FALSE(past_the_end.reply);
    EXPECT_NE(past_the_end.error.find("4 calls were recorded"), std::string::npos) << past_the_end.error;
  }
}

TEST(ReplayProvider, ARecordedTransportFailureReplaysAsItsError) {
  auto replay = MakeReplayProvider({{"openai", 0, "", "gave up after 6 attempts; the last failed: no answer"}});
  const LlmCall call = replay->Complete(Request());
  EXPECT_FALSE(call.reply);
  EXPECT_EQ(call.error, "gave up after 6 attempts; the last failed: no answer");
  EXPECT_EQ(call.http_status, 0);
}

TEST(ReplayProvider, AnEmptyRecordingIsExhaustedAtOnce) {
  const LlmCall call = MakeReplayProvider({})->Complete(Request());
  EXPECT_TRUE(call.provider_exhausted);
  EXPECT_NE(call.error.find("0 calls were recorded"), std::string::npos) << call.error;
}

// Calls made in parallel arrive in any order: each gets the answer recorded for its prompt.
TEST(ReplayProvider, EachPromptGetsTheAnswerRecordedForIt) {
  std::vector<RecordedCall> recording;
  for (const std::string prompt : {"first", "second", "third"}) {
    const json body = {{"choices", {{{"message", {{"content", "answer to " + prompt}}}, {"finish_reason", "stop"}}}}};
    const ChatRequest asked{"m", {{"user", prompt}}, 100, 0.0};
    recording.push_back({"openai", 200, body.dump(), "", BuildChatBody(ChatProtocol::kOpenAi, asked)});
  }
  recording.push_back({"openai", 200, json{{"choices", {{{"message", {{"content", "unmatched"}}}}}}}.dump(), ""});
  auto replay = MakeReplayProvider(recording);
  for (const std::string prompt : {"third", "first", "second"}) {
    const LlmCall call = replay->Complete({"m", {{"user", prompt}}, 100, 0.0});
    ASSERT_TRUE(call.reply) << call.error;
    EXPECT_EQ(call.reply->content, "answer to " + prompt);
  }
  // A prompt never recorded gets the next unused recording; then the replay is spent.
  EXPECT_EQ(replay->Complete({"m", {{"user", "new"}}, 100, 0.0}).reply->content, "unmatched");
  EXPECT_TRUE(replay->Complete(Request()).provider_exhausted);
}

// Given concurrent callers, each recording is handed out exactly once.
TEST(ReplayProvider, ConcurrentCallersEachGetADifferentRecording) {
  std::vector<RecordedCall> recording;
  for (int index = 0; index < 64; ++index) {
    const json body = {{"choices", {{{"message", {{"content", std::to_string(index)}}}, {"finish_reason", "stop"}}}}};
    recording.push_back({"openai", 200, body.dump(), ""});
  }
  auto replay = MakeReplayProvider(recording);
  std::mutex mutex;
  std::multiset<std::string> contents;
  std::atomic<int> exhausted{0};
  std::vector<std::thread> callers;
  for (int caller = 0; caller < 8; ++caller) {
    callers.emplace_back([&] {
      for (int call = 0; call < 9; ++call) {
        const LlmCall answer = replay->Complete(Request());
        if (answer.provider_exhausted) {
          ++exhausted;
          continue;
        }
        std::lock_guard lock(mutex);
        contents.insert(answer.reply->content);
      }
    });
  }
  for (auto& thread : callers) thread.join();
  EXPECT_EQ(exhausted.load(), 8);
  EXPECT_EQ(contents.size(), 64u);
  EXPECT_EQ(std::set<std::string>(contents.begin(), contents.end()).size(), 64u);
}

}  // namespace
}  // namespace ksmith
