// The one shape of every error the HTTP API answers: a status, a short code a program can test,
// and a message for a person that says what was wrong and where in the request.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

struct ApiError {
  int http_status = 400;
  std::string code;     // "bad_request", "unauthorized", "unknown_task", "too_large", "busy"...
  std::string message;  // what was wrong and how to fix it
  std::string where;    // the request's part at fault ("candidates[2].source"); empty: the whole

  /// {"error": {"code", "message", "where"}}
  nlohmann::json ToJson() const {
    return {{"error", {{"code", code}, {"message", message}, {"where", where}}}};
  }
};

inline ApiError BadRequest(std::string where, std::string message) {
  return {400, "bad_request", std::move(message), std::move(where)};
}

}  // namespace ksmith
