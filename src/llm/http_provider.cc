#include "llm/http_provider.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>
#include <semaphore>
#include <thread>

#include <fmt/format.h>

#include "core/clock.h"
#include "llm/provider.h"
#include "llm/response_cache.h"

namespace ksmith {
namespace {

constexpr std::string_view kRedacted = "[redacted]";

// Holds one of the provider's request slots for the duration of one attempt. Slots are not held
// through retry waits: a sleeping request is not in flight.
class SlotGuard {
 public:
  explicit SlotGuard(std::counting_semaphore<>& slots) : slots_(slots) { slots_.acquire(); }
  ~SlotGuard() { slots_.release(); }
  SlotGuard(const SlotGuard&) = delete;
  SlotGuard& operator=(const SlotGuard&) = delete;

 private:
  std::counting_semaphore<>& slots_;
};

// One attempt's result as the retry loop needs it.
struct Attempt {
  AttemptOutcome outcome;
  std::optional<ChatReply> reply;
  std::string failure;       // why there is no reply
  std::string short_reason;  // for progress lines: "HTTP 429", "timed out"
  bool final = false;        // a failure no retry can cure, whatever the policy says
};

// The request as sent. Prompts quote compiler output, which may hold bytes that are not UTF-8:
// those are replaced (in `request` too, so that whoever stores it later can serialize it).
std::string SerializeRequest(nlohmann::json& request) {
  try {
    return request.dump();
  } catch (const nlohmann::json::type_error&) {
    std::string body = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    request = nlohmann::json::parse(body);
    return body;
  }
}

class HttpProvider final : public ChatProvider {
 public:
  explicit HttpProvider(ProviderSettings settings)
      : settings_(std::move(settings)),
        protocol_(ProtocolOf(settings_.provider)),
        url_(ChatEndpoint(protocol_, settings_.base_url)),
        slots_(std::max(1, settings_.max_concurrency)),
        random_(std::random_device{}()) {
    if (!settings_.cache_directory.empty()) cache_.emplace(settings_.cache_directory);
  }

  LlmCall Complete(const ChatRequest& request) override {
    ChatRequest effective = request;
    if (effective.model.empty()) effective.model = settings_.model;
    LlmCall call;
    call.provider = settings_.provider;
    call.model = effective.model;
    call.request = BuildChatBody(protocol_, effective);
    const std::string body = SerializeRequest(call.request);
    const auto start = SteadyClock::now();
    if (cache_ && AnswerFromCache(body, call)) {
      call.latency_s = SecondsSince(start);
      return Redacted(std::move(call));
    }
    for (int attempt_number = 1;; ++attempt_number) {
      call.attempts = attempt_number;
      Attempt attempt = Send(body, call);
      if (attempt.reply) {
        call.reply = std::move(attempt.reply);
        break;
      }
      const std::optional<std::chrono::milliseconds> delay =
          attempt.final ? std::nullopt : settings_.retry.DelayAfter(attempt_number, attempt.outcome, Uniform01());
      if (!delay) {
        call.error = GiveUpMessage(attempt, attempt_number);
        break;
      }
      call.retry_reasons.push_back(attempt.short_reason);
      Progress(fmt::format("{}: {}; retrying in {:.1f} s (attempt {} of {})", settings_.provider,
                           attempt.short_reason, std::chrono::duration<double>(*delay).count(), attempt_number + 1,
                           settings_.retry.max_attempts));
      std::this_thread::sleep_for(*delay);
    }
    call.latency_s = SecondsSince(start);
    if (call.reply) {
      call.input_tokens = call.reply->input_tokens;
      call.output_tokens = call.reply->output_tokens;
      call.cost_dollars = (static_cast<double>(call.input_tokens) * settings_.price.input_per_million +
                           static_cast<double>(call.output_tokens) * settings_.price.output_per_million) / 1e6;
      if (cache_ && call.http_status == 200) StoreInCache(body, call.response_body);
    }
    return Redacted(std::move(call));
  }

  std::string name() const override { return settings_.provider; }

 private:
  Attempt Send(const std::string& body, LlmCall& call) {
    Attempt attempt;
    Result<HttpResponse> response = [&] {
      SlotGuard slot(slots_);
      return HttpPost(url_, ChatHeaders(protocol_, settings_.api_key), body, settings_.connect_timeout,
                      settings_.request_timeout);
    }();
    if (!response.ok()) {
      call.http_status = 0;
      call.response_body.clear();
      attempt.failure = response.error().message;
      attempt.outcome.timed_out = response.error().kind == ErrorKind::kTimeout;
      attempt.short_reason = attempt.outcome.timed_out ? "timed out" : attempt.failure;
      // Only a missing answer (kIo) or a late one (kTimeout) may come right next time.
      attempt.final = response.error().kind != ErrorKind::kIo && !attempt.outcome.timed_out;
      return attempt;
    }
    call.http_status = response->status;
    call.response_body = std::move(response->body);
    attempt.outcome.http_status = response->status;
    if (const auto header = response->headers.find("retry-after"); header != response->headers.end()) {
      attempt.outcome.retry_after = ParseRetryAfter(header->second);
    }
    attempt.short_reason = fmt::format("HTTP {}", response->status);
    auto reply = ParseChatReply(protocol_, response->status, call.response_body);
    if (reply.ok()) {
      attempt.reply = std::move(*reply);
      return attempt;
    }
    attempt.failure = reply.error().message;
    if (response->status == 401 || response->status == 403) {
      attempt.failure += fmt::format("; check {}{}", ApiKeyVariable(protocol_),
                                     settings_.api_key.empty() ? " (no key was sent: it is not set)" : "");
    }
    return attempt;
  }

  std::string GiveUpMessage(const Attempt& attempt, int attempts) const {
    if (attempt.final || !RetryPolicy::Retryable(attempt.outcome)) {
      return attempts == 1 ? attempt.failure : fmt::format("{} (attempt {})", attempt.failure, attempts);
    }
    if (attempts >= settings_.retry.max_attempts) {
      return fmt::format("gave up after {} attempt{}; the last failed: {}", attempts, attempts == 1 ? "" : "s",
                         attempt.failure);
    }
    // Retryable and attempts left: only a Retry-After beyond max_delay stops here.
    const double wait_s = std::chrono::duration<double>(attempt.outcome.retry_after.value_or(
                                                             std::chrono::milliseconds(0))).count();
    return fmt::format("gave up after {} attempts: the server asks to retry after {:.0f} s, more than the "
                       "{:.0f} s allowed; the last failed: {}", attempts, wait_s,
                       std::chrono::duration<double>(settings_.retry.max_delay).count(), attempt.failure);
  }

  bool AnswerFromCache(const std::string& body, LlmCall& call) const {
    std::optional<CachedReply> cached = cache_->Find(protocol_, url_, body);
    if (!cached) return false;
    call.cached = true;
    call.http_status = 200;
    call.response_body = std::move(cached->response_body);
    call.input_tokens = cached->reply.input_tokens;
    call.output_tokens = cached->reply.output_tokens;
    call.cost_dollars = 0;  // nothing was spent on this call
    call.reply = std::move(cached->reply);
    return true;
  }

  void StoreInCache(const std::string& body, const std::string& response_body) {
    const Status stored = cache_->Store(protocol_, url_, body, response_body);
    // A cache that cannot be written slows runs down but breaks nothing: say so once.
    if (!stored.ok() && !cache_warned_.exchange(true)) {
      Progress(fmt::format("{}: the response cache is not written: {}", settings_.provider,
                           stored.error().message));
    }
  }

  LlmCall Redacted(LlmCall call) const {
    const std::string& key = settings_.api_key;
    if (key.size() < kMinRedactedKeyBytes) return call;
    call.error = Redact(std::move(call.error), key);
    call.response_body = Redact(std::move(call.response_body), key);
    if (call.reply) call.reply->content = Redact(std::move(call.reply->content), key);
    if (SerializeRequest(call.request).find(key) != std::string::npos) call.request = RedactJson(call.request, key);
    return call;
  }

  void Progress(const std::string& line) const {
    if (settings_.progress) settings_.progress(Redact(line, settings_.api_key));
  }

  double Uniform01() {
    std::lock_guard lock(random_mutex_);
    return std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  }

  const ProviderSettings settings_;
  const ChatProtocol protocol_;
  const std::string url_;
  std::optional<ResponseCache> cache_;
  std::counting_semaphore<> slots_;  // one per request allowed in flight
  std::atomic<bool> cache_warned_{false};
  std::mutex random_mutex_;
  std::mt19937_64 random_;  // guarded by random_mutex_; retry jitter only
};

}  // namespace

ChatProtocol ProtocolOf(const std::string& provider) {
  // Everything but Anthropic speaks the OpenAI format (vLLM, SGLang, Ollama, DeepSeek, OpenRouter).
  return provider == "anthropic" ? ChatProtocol::kAnthropic : ChatProtocol::kOpenAi;
}

std::unique_ptr<ChatProvider> MakeHttpProvider(ProviderSettings settings) {
  return std::make_unique<HttpProvider>(std::move(settings));
}

std::string ChatEndpoint(ChatProtocol protocol, std::string_view base_url) {
  const bool anthropic = protocol == ChatProtocol::kAnthropic;
  std::string url(base_url.empty() ? (anthropic ? kDefaultAnthropicBaseUrl : kDefaultOpenAiBaseUrl) : base_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url + (anthropic ? "/messages" : "/chat/completions");
}

HttpHeaders ChatHeaders(ChatProtocol protocol, const std::string& api_key) {
  HttpHeaders headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  if (protocol == ChatProtocol::kAnthropic) {
    headers["anthropic-version"] = std::string(kAnthropicApiVersion);
    if (!api_key.empty()) headers["x-api-key"] = api_key;
  } else if (!api_key.empty()) {
    headers["Authorization"] = "Bearer " + api_key;
  }
  return headers;
}

const char* ApiKeyVariable(ChatProtocol protocol) {
  return protocol == ChatProtocol::kAnthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

std::string Redact(std::string text, const std::string& secret) {
  if (secret.size() < kMinRedactedKeyBytes) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + kRedacted.size())) {
    text.replace(at, secret.size(), kRedacted);
  }
  return text;
}

nlohmann::json RedactJson(const nlohmann::json& value, const std::string& secret) {
  if (value.is_string()) return Redact(value.get<std::string>(), secret);
  if (value.is_array()) {
    nlohmann::json redacted = nlohmann::json::array();
    for (const auto& item : value) redacted.push_back(RedactJson(item, secret));
    return redacted;
  }
  if (value.is_object()) {
    nlohmann::json redacted = nlohmann::json::object();
    for (const auto& [name, item] : value.items()) redacted[Redact(name, secret)] = RedactJson(item, secret);
    return redacted;
  }
  return value;
}

}  // namespace ksmith
