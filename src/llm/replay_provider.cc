#include "llm/replay_provider.h"

#include <mutex>
#include <optional>

#include <fmt/format.h>

namespace ksmith {
namespace {

// What a request asked, in a body of either protocol: the system prompt and the messages.
nlohmann::json Asked(const nlohmann::json& body) {
  if (!body.is_object()) return nullptr;
  return {body.value("system", nlohmann::json()), body.value("messages", nlohmann::json())};
}

class ReplayProvider final : public ChatProvider {
 public:
  explicit ReplayProvider(std::vector<RecordedCall> calls) : calls_(std::move(calls)), used_(calls_.size(), false) {}

  LlmCall Complete(const ChatRequest& request) override {
    // Each call takes its own recording under the lock, so concurrent callers never share one.
    std::optional<size_t> index;
    {
      std::lock_guard lock(mutex_);
      for (size_t i = 0; i < calls_.size() && !index; ++i) {
        if (!used_[i] && !calls_[i].request.is_null() &&
            Asked(calls_[i].request) == Asked(BuildChatBody(ProtocolOf(calls_[i].provider), request))) {
          index = i;
        }
      }
      for (size_t i = 0; i < calls_.size() && !index; ++i) {
        if (!used_[i]) index = i;
      }
      if (index) used_[*index] = true;
    }
    if (index) return ReplayRecordedCall(calls_[*index], request);
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
  std::mutex mutex_;
  std::vector<bool> used_;
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
