#include "testing/scripted_llm_server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "core/files.h"
#include "core/strings.h"

namespace ksmith::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Enough threads that a concurrency test sees every request its client lets through at once.
constexpr size_t kServerThreads = 16;
constexpr auto kStartLimit = std::chrono::seconds(5);

const std::set<std::string>& KnownStepFields() {
  static const std::set<std::string> fields = {
      "status", "headers", "delay_ms", "raw", "content", "content_file", "finish_reason",
      "input_tokens", "output_tokens", "empty_choices", "repeat"};
  return fields;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// cpp-httplib files the connection's addresses among the request headers; no client sent them.
bool IsConnectionPseudoHeader(const std::string& name) {
  return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" || name == "LOCAL_PORT";
}

Result<int64_t> IntegerField(const json& step, const char* name, int64_t minimum, int64_t maximum) {
  const json& value = step[name];
  if (!value.is_number_integer() || value.get<int64_t>() < minimum || value.get<int64_t>() > maximum) {
    return MakeError(ErrorKind::kInvalidArgument, "\"{}\" must be an integer from {} to {}, not {}", name,
                     minimum, maximum, value.dump());
  }
  return value.get<int64_t>();
}

Result<std::string> StringField(const json& step, const char* name) {
  if (!step[name].is_string()) {
    return MakeError(ErrorKind::kInvalidArgument, "\"{}\" must be a string, not {}", name, step[name].dump());
  }
  return step[name].get<std::string>();
}

Result<ScriptStep> ParseStep(const json& item, const fs::path& script_directory) {
  if (!item.is_object()) return MakeError(ErrorKind::kInvalidArgument, "a step must be an object");
  for (const auto& [name, value] : item.items()) {
    if (!KnownStepFields().contains(name)) {
      return MakeError(ErrorKind::kInvalidArgument, "unknown field \"{}\"", name);
    }
  }
  ScriptStep step;
  if (item.contains("status")) {
    auto status = IntegerField(item, "status", 100, 599);
    if (!status.ok()) return status.error();
    step.status = static_cast<int>(*status);
  }
  if (item.contains("headers")) {
    if (!item["headers"].is_object()) return MakeError(ErrorKind::kInvalidArgument, "\"headers\" must be an object");
    for (const auto& [name, value] : item["headers"].items()) {
      step.headers.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  if (item.contains("delay_ms")) {
    auto delay = IntegerField(item, "delay_ms", 0, 3'600'000);
    if (!delay.ok()) return delay.error();
    step.delay_ms = static_cast<int>(*delay);
  }
  if (item.contains("raw")) {
    auto raw = StringField(item, "raw");
    if (!raw.ok()) return raw.error();
    step.raw = *raw;
  }
  if (item.contains("content")) {
    auto content = StringField(item, "content");
    if (!content.ok()) return content.error();
    step.content = *content;
  }
  if (item.contains("content_file")) {
    auto name = StringField(item, "content_file");
    if (!name.ok()) return name.error();
    auto content = ReadFile(script_directory / *name);
    if (!content.ok()) return content.error();
    step.content = *content;
  }
  if (item.contains("finish_reason")) {
    auto reason = StringField(item, "finish_reason");
    if (!reason.ok()) return reason.error();
    step.finish_reason = *reason;
  }
  if (item.contains("input_tokens")) {
    auto tokens = IntegerField(item, "input_tokens", 0, int64_t{1} << 40);
    if (!tokens.ok()) return tokens.error();
    step.input_tokens = *tokens;
  }
  if (item.contains("output_tokens")) {
    auto tokens = IntegerField(item, "output_tokens", 0, int64_t{1} << 40);
    if (!tokens.ok()) return tokens.error();
    step.output_tokens = *tokens;
  }
  if (item.contains("empty_choices")) {
    if (!item["empty_choices"].is_boolean()) {
      return MakeError(ErrorKind::kInvalidArgument, "\"empty_choices\" must be true or false");
    }
    step.empty_choices = item["empty_choices"].get<bool>();
  }
  if (item.contains("repeat")) {
    auto repeat = IntegerField(item, "repeat", 1, 1'000'000);
    if (!repeat.ok()) return repeat.error();
    step.repeat = static_cast<int>(*repeat);
  }
  return step;
}

json ErrorBody(bool anthropic, int status, const std::string& message) {
  if (anthropic) return {{"type", "error"}, {"error", {{"type", "api_error"}, {"message", message}}}};
  return {{"error", {{"message", message}, {"type", "scripted_error"}, {"code", status}}}};
}

json ReplyBody(bool anthropic, const ScriptStep& step, const json& request_body, size_t request_number) {
  const std::string model = request_body.is_object() && request_body.value("model", json()).is_string()
                                ? request_body["model"].get<std::string>()
                                : "scripted-model";
  const int64_t output_tokens = step.output_tokens.value_or(static_cast<int64_t>(step.content.size() / 4));
  if (anthropic) {
    const std::string stop_reason = step.finish_reason == "stop"     ? "end_turn"
                                    : step.finish_reason == "length" ? "max_tokens"
                                                                     : step.finish_reason;
    json content = json::array();
    if (!step.empty_choices) content.push_back({{"type", "text"}, {"text", step.content}});
    return {{"id", fmt::format("msg_scripted_{}", request_number)}, {"type", "message"}, {"role", "assistant"},
            {"model", model}, {"content", content}, {"stop_reason", stop_reason}, {"stop_sequence", nullptr},
            {"usage", {{"input_tokens", step.input_tokens}, {"output_tokens", output_tokens}}}};
  }
  json choices = json::array();
  if (!step.empty_choices) {
    choices.push_back({{"index", 0},
                       {"message", {{"role", "assistant"}, {"content", step.content}}},
                       {"finish_reason", step.finish_reason}});
  }
  return {{"id", fmt::format("chatcmpl-scripted-{}", request_number)}, {"object", "chat.completion"},
          {"created", 0}, {"model", model}, {"choices", choices},
          {"usage", {{"prompt_tokens", step.input_tokens}, {"completion_tokens", output_tokens},
                     {"total_tokens", step.input_tokens + output_tokens}}}};
}

}  // namespace

Result<std::unique_ptr<ScriptedLlmServer>> ScriptedLlmServer::Start(const json& script,
                                                                    fs::path script_directory,
                                                                    ScriptedLlmServerOptions options) {
  if (!script.is_object() || !script.contains("steps") || !script["steps"].is_array()) {
    return MakeError(ErrorKind::kInvalidArgument, "the script must be an object with a \"steps\" list");
  }
  for (const auto& [name, value] : script.items()) {
    if (name != "steps" && name != "after_end") {
      return MakeError(ErrorKind::kInvalidArgument, "the script has an unknown field \"{}\"", name);
    }
  }
  std::unique_ptr<ScriptedLlmServer> server(new ScriptedLlmServer());
  const json after_end = script.value("after_end", json("error"));
  if (after_end != "error" && after_end != "repeat_last") {
    return MakeError(ErrorKind::kInvalidArgument, "\"after_end\" must be \"error\" or \"repeat_last\", not {}",
                     script["after_end"].dump());
  }
  server->repeat_last_ = after_end == "repeat_last";
  const json& steps = script["steps"];
  for (size_t index = 0; index < steps.size(); ++index) {
    auto step = ParseStep(steps[index], script_directory);
    if (!step.ok()) {
      return MakeError(ErrorKind::kInvalidArgument, "script step {}: {}", index, step.error().message);
    }
    server->steps_.push_back(std::move(*step));
  }
  if (server->repeat_last_ && server->steps_.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "\"after_end\": \"repeat_last\" needs at least one step");
  }
  if (!options.log_path.empty()) {
    server->log_file_.open(options.log_path, std::ios::app);
    if (!server->log_file_) {
      return MakeError(ErrorKind::kIo, "{}: cannot open the request log", options.log_path.string());
    }
  }

  server->server_ = std::make_unique<httplib::Server>();
  httplib::Server& http = *server->server_;
  http.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  ScriptedLlmServer* self = server.get();
  http.Post(R"(.*/chat/completions)", [self](const httplib::Request& request, httplib::Response& response) {
    self->Answer(/*anthropic=*/false, request, response);
  });
  http.Post(R"(.*/messages)", [self](const httplib::Request& request, httplib::Response& response) {
    self->Answer(/*anthropic=*/true, request, response);
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    response.status = 500;
    response.set_content(R"({"error":{"message":"the scripted server failed"}})", "application/json");
  });
  if (options.port == 0) {
    server->port_ = http.bind_to_any_port("127.0.0.1");
  } else if (http.bind_to_port("127.0.0.1", options.port)) {
    server->port_ = options.port;
  } else {
    server->port_ = -1;
  }
  if (server->port_ <= 0) {
    return MakeError(ErrorKind::kIo, "cannot listen on 127.0.0.1:{}", options.port);
  }
  server->listener_ = std::thread([&http] { http.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so the destructor must not come before it.
  const auto deadline = std::chrono::steady_clock::now() + kStartLimit;
  while (!http.is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!http.is_running()) return MakeError(ErrorKind::kIo, "the scripted server did not start");
  return server;
}

ScriptedLlmServer::~ScriptedLlmServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (server_) server_->stop();
  if (listener_.joinable()) listener_.join();
}

std::string ScriptedLlmServer::base_url() const { return fmt::format("http://127.0.0.1:{}/v1", port_); }

std::vector<json> ScriptedLlmServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

size_t ScriptedLlmServer::served() const {
  std::lock_guard lock(mutex_);
  return served_;
}

int ScriptedLlmServer::TakeStep() {
  std::lock_guard lock(mutex_);
  size_t position = served_++;
  for (size_t index = 0; index < steps_.size(); ++index) {
    const size_t repeat = static_cast<size_t>(steps_[index].repeat);
    if (position < repeat) return static_cast<int>(index);
    position -= repeat;
  }
  return repeat_last_ ? static_cast<int>(steps_.size()) - 1 : -1;
}

void ScriptedLlmServer::Log(const json& entry) {
  std::lock_guard lock(mutex_);
  requests_.push_back(entry);
  if (log_file_.is_open()) {
    log_file_ << entry.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  }
}

void ScriptedLlmServer::Answer(bool anthropic, const httplib::Request& request, httplib::Response& response) {
  const int now_in_flight = ++in_flight_;
  int seen = max_in_flight_.load();
  while (now_in_flight > seen && !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
  }
  struct Leave {
    std::atomic<int>& counter;
    ~Leave() { --counter; }
  } leave{in_flight_};

  const int index = TakeStep();
  json headers = json::object();
  for (const auto& [name, value] : request.headers) {
    if (!IsConnectionPseudoHeader(name)) headers[Lower(name)] = value;
  }
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) body = request.body;
  Log({{"path", request.path}, {"headers", headers}, {"body", body},
       {"step", index < 0 ? json(nullptr) : json(index)}});

  if (index < 0) {
    response.status = 500;
    const std::string message = fmt::format("the script is exhausted: it has {} steps, all served", steps_.size());
    response.set_content(ErrorBody(anthropic, 500, message).dump(), "application/json");
    return;
  }
  const ScriptStep& step = steps_[static_cast<size_t>(index)];
  if (step.delay_ms > 0) {
    std::unique_lock lock(mutex_);
    stop_requested_.wait_for(lock, std::chrono::milliseconds(step.delay_ms), [this] { return stopping_; });
  }
  std::string content_type;
  for (const auto& [name, value] : step.headers) {
    if (Lower(name) == "content-type") {
      content_type = value;
    } else {
      response.set_header(name, value);
    }
  }
  response.status = step.status;
  std::string reply;
  if (step.raw) {
    reply = *step.raw;
    if (content_type.empty()) content_type = Trim(reply).starts_with("<") ? "text/html" : "application/json";
  } else if (step.status >= 200 && step.status < 300) {
    reply = ReplyBody(anthropic, step, body, served()).dump();
  } else {
    const std::string message =
        step.content.empty() ? fmt::format("scripted HTTP {}", step.status) : step.content;
    reply = ErrorBody(anthropic, step.status, message).dump();
  }
  response.set_content(reply, content_type.empty() ? "application/json" : content_type);
}

Result<json> ReadScriptFile(const fs::path& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.error();
  json script = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (script.is_discarded()) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: not valid JSON", path.string());
  }
  return script;
}

}  // namespace ksmith::testing
