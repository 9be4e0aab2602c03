#include "llm/chat_protocol.h"

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {
namespace {

constexpr size_t kQuotedBodyBytes = 200;

std::string Quote(std::string_view body) {
  std::string text(Trim(body.substr(0, kQuotedBodyBytes)));
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return body.size() > kQuotedBodyBytes ? text + "..." : text;
}

// An error object in either protocol: {"error": {"message": ...}} or {"error": "..."}.
std::string ErrorMessage(const nlohmann::json& body) {
  if (!body.is_object() || !body.contains("error")) return {};
  const auto& error = body["error"];
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object()) return error.value("message", error.dump());
  return error.dump();
}

Result<ChatReply> ParseOpenAi(const nlohmann::json& body) {
  const auto choices = body.value("choices", nlohmann::json::array());
  if (!choices.is_array() || choices.empty()) {
    return MakeError(ErrorKind::kProtocol, "the reply has no choices");
  }
  const auto& choice = choices.front();
  ChatReply reply;
  const auto message = choice.value("message", nlohmann::json::object());
  const auto content = message.value("content", nlohmann::json());
  if (content.is_string()) reply.content = content.get<std::string>();
  const auto finish = choice.value("finish_reason", nlohmann::json());
  reply.finish_reason = finish.is_string() ? finish.get<std::string>() : "";
  const auto usage = body.value("usage", nlohmann::json::object());
  if (usage.is_object()) {
    reply.input_tokens = usage.value("prompt_tokens", int64_t{0});
    reply.output_tokens = usage.value("completion_tokens", int64_t{0});
  }
  return reply;
}

Result<ChatReply> ParseAnthropic(const nlohmann::json& body) {
  const auto blocks = body.value("content", nlohmann::json::array());
  if (!blocks.is_array()) return MakeError(ErrorKind::kProtocol, "the reply's content is not a list");
  ChatReply reply;
  for (const auto& block : blocks) {
    if (block.is_object() && block.value("type", std::string()) == "text") reply.content += block.value("text", std::string());
  }
  const auto stop = body.value("stop_reason", nlohmann::json());
  const std::string reason = stop.is_string() ? stop.get<std::string>() : "";
  reply.finish_reason = reason == "max_tokens" ? "length" : (reason == "end_turn" || reason == "stop_sequence" ? "stop" : reason);
  const auto usage = body.value("usage", nlohmann::json::object());
  if (usage.is_object()) {
    reply.input_tokens = usage.value("input_tokens", int64_t{0});
    reply.output_tokens = usage.value("output_tokens", int64_t{0});
  }
  return reply;
}

}  // namespace

nlohmann::json BuildChatBody(ChatProtocol protocol, const ChatRequest& request) {
  nlohmann::json messages = nlohmann::json::array();
  std::string system;
  for (const auto& message : request.messages) {
    if (protocol == ChatProtocol::kAnthropic && message.role == "system") {
      system += (system.empty() ? "" : "\n\n") + message.content;
      continue;
    }
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  nlohmann::json body = {{"model", request.model}, {"messages", messages},
                         {"max_tokens", request.max_output_tokens}, {"temperature", request.temperature}};
  if (!system.empty()) body["system"] = system;
  return body;
}

Result<ChatReply> ParseChatReply(ChatProtocol protocol, int status, std::string_view body) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    const std::string_view start = Trim(body.substr(0, 64));
    const bool html = start.starts_with("<");
    return MakeError(ErrorKind::kProtocol, "HTTP {}: the reply is {}: {}", status,
                     html ? "an HTML page, not JSON" : (body.empty() ? "empty" : "not valid JSON"), Quote(body));
  }
  if (const std::string error = ErrorMessage(json); !error.empty()) {
    return MakeError(ErrorKind::kProtocol, "HTTP {}: the server answered with an error: {}", status, error);
  }
  if (status < 200 || status >= 300) {
    return MakeError(ErrorKind::kProtocol, "HTTP {}: {}", status, Quote(body));
  }
  if (!json.is_object()) return MakeError(ErrorKind::kProtocol, "the reply is not a JSON object: {}", Quote(body));
  Result<ChatReply> reply = MakeError(ErrorKind::kProtocol, "unread");
  try {
    reply = protocol == ChatProtocol::kOpenAi ? ParseOpenAi(json) : ParseAnthropic(json);
  } catch (const nlohmann::json::exception& error) {
    // A field of the wrong type somewhere (a choice that is a number, usage that is a string).
    return MakeError(ErrorKind::kProtocol, "the reply does not have the expected shape ({}): {}", error.what(),
                     Quote(body));
  }
  if (!reply.ok()) return reply;
  if (reply->content.empty() && !reply->truncated()) {
    return MakeError(ErrorKind::kProtocol, "the reply's message is empty (finish reason '{}')", reply->finish_reason);
  }
  return reply;
}

}  // namespace ksmith
