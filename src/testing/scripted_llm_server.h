// A scripted model endpoint on 127.0.0.1: speaks OpenAI chat completions (POST .../chat/completions)
// and Anthropic messages (POST .../messages), answering each request with the next step of a
// script. The only fake in the LLM tests is the model itself; the HTTP is real. Used in-process by
// unit tests and, as `ksmith-fake-llm`, by end-to-end tests.
//
// Script: {"steps": [step, ...], "after_end": "error" | "repeat_last"}. One sequence shared by
// both paths. Step fields, all optional:
//   "status"        HTTP status (200)
//   "headers"       object of extra response headers, e.g. {"Retry-After": "1"}; a Content-Type
//                   here replaces the one chosen below
//   "delay_ms"      wait before answering (to provoke client timeouts)
//   "raw"           the body, sent as-is (text/html when it starts with '<', else application/json)
//   "content"       the assistant's text, in the protocol's envelope; with a non-2xx status, the
//                   message of a protocol-shaped error body instead ("scripted HTTP <status>" when
//                   there is no content)
//   "content_file"  read "content" from this file, relative to the script's folder
//   "finish_reason" "stop" (default) or "length" (Anthropic: "end_turn" / "max_tokens")
//   "input_tokens", "output_tokens"  usage numbers (100; the content's length / 4)
//   "empty_choices" true: "choices": [] (Anthropic: "content": [])
//   "repeat"        how many requests this step serves (1)
// Past the last step, "error" (the default) answers HTTP 500 with an error saying the script is
// exhausted; "repeat_last" serves the last step again.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace ksmith::testing {

/// One script step, as read from the script (see the top of this file).
struct ScriptStep {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;                    // [ms]
  std::optional<std::string> raw;
  std::string content;
  std::string finish_reason = "stop";
  int64_t input_tokens = 100;
  std::optional<int64_t> output_tokens;  // nullopt: the content's length / 4
  bool empty_choices = false;
  int repeat = 1;
};

struct ScriptedLlmServerOptions {
  int port = 0;                       // 0: any free port
  std::filesystem::path log_path;     // also append each request as a JSON line here; empty: no
};

class ScriptedLlmServer {
 public:
  /// Validates `script` (unknown fields, wrong types and unreadable content files are kInvalidArgument
  /// errors), binds 127.0.0.1 and serves on background threads until destroyed. kIo when the port
  /// cannot be bound.
  static Result<std::unique_ptr<ScriptedLlmServer>> Start(const nlohmann::json& script,
                                                          std::filesystem::path script_directory = {},
                                                          ScriptedLlmServerOptions options = {});
  ~ScriptedLlmServer();
  ScriptedLlmServer(const ScriptedLlmServer&) = delete;
  ScriptedLlmServer& operator=(const ScriptedLlmServer&) = delete;

  int port() const { return port_; }
  /// "http://127.0.0.1:PORT/v1": what a provider's base_url should be.
  std::string base_url() const;
  /// Every request received so far, in arrival order: {"path", "headers" (lower-case names),
  /// "body" (parsed JSON, or the raw text), "step" (index served; null past the end)}.
  std::vector<nlohmann::json> requests() const;
  /// How many requests were answered from the script (or refused past its end).
  size_t served() const;
  /// The most requests that were being answered at the same moment.
  int max_in_flight() const { return max_in_flight_.load(); }

 private:
  ScriptedLlmServer() = default;
  void Answer(bool anthropic, const httplib::Request& request, httplib::Response& response);
  // The step index for the next request, or -1 past the end of the script in "error" mode.
  int TakeStep();
  void Log(const nlohmann::json& entry);

  std::vector<ScriptStep> steps_;
  bool repeat_last_ = false;
  int port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;

  mutable std::mutex mutex_;
  size_t served_ = 0;                         // guarded by mutex_
  std::vector<nlohmann::json> requests_;      // guarded by mutex_
  std::ofstream log_file_;                    // guarded by mutex_
  bool stopping_ = false;                     // guarded by mutex_
  std::condition_variable stop_requested_;    // wakes delayed answers on destruction

  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
};

/// Reads and parses a script file; kNotFound, kIo or kInvalidArgument (not JSON) with the path.
Result<nlohmann::json> ReadScriptFile(const std::filesystem::path& path);

}  // namespace ksmith::testing
