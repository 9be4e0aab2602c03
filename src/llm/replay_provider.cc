#include "llm/replay_provider.h"

#include <atomic>

#include <fmt/format.h>

namespace ksmith {
namespace {

class ReplayProvider final : public ChatProvider {
 public:
  explicit ReplayProvider(std::vector<RecordedCall> calls) : calls_(std::move(calls)) {}

  LlmCall Complete(const ChatRequest& request) override {
    // Each call takes its own index, so concurrent callers never share or skip a recording.
    const size_t index = next_.fetch_add(1);
    if (index < calls_.size()) return ReplayRecordedCall(calls_[index], request);
    LlmCall call;
    call.provider = name();
    call.model = request.model;
    call.request = BuildChatBody(calls_.empty() ? ChatProtocol::kOpenAi : ProtocolOf(calls_.back().provider), request);
    call.provider_exhausted = true;
    call.error = fmt::format("the replay has no answer left: {} call{} {} recorded and all were replayed; "
                             "this run asks more than the recorded one did",
                             calls_.size(), calls_.size() == 1 ? "" : "s", calls_.size() == 1 ? "was" : "were");
    return call;
  }

  std::string name() const override { return "replay"; }

 private:
  const std::vector<RecordedCall> calls_;
  std::atomic<size_t> next_{0};
};

}  // namespace

LlmCall ReplayRecordedCall(const RecordedCall& recorded, const ChatRequest& request) {
  const ChatProtocol protocol = ProtocolOf(recorded.provider);
  LlmCall call;
  call.provider = "replay";
  call.model = request.model;
  call.request = BuildChatBody(protocol, request);
  call.http_status = recorded.http_status;
  call.response_body = recorded.response_body;
  call.attempts = 1;
  // A recorded transport failure (no HTTP answer, no body) has nothing to parse.
  if (recorded.http_status == 0 && recorded.response_body.empty()) {
    call.error = recorded.error.empty() ? "the recorded call has neither an answer nor an error" : recorded.error;
    return call;
  }
  auto reply = ParseChatReply(protocol, recorded.http_status, recorded.response_body);
  if (!reply.ok()) {
    // The recorded message may say more (retries, "check OPENAI_API_KEY") than the body alone.
    call.error = recorded.error.empty() ? reply.error().message : recorded.error;
    return call;
  }
  call.input_tokens = reply->input_tokens;
  call.output_tokens = reply->output_tokens;
  call.reply = std::move(*reply);
  return call;
}

std::unique_ptr<ChatProvider> MakeReplayProvider(std::vector<RecordedCall> calls) {
  return std::make_unique<ReplayProvider>(std::move(calls));
}

}  // namespace ksmith
