// The one place ksmith speaks HTTP to the outside: a thin, thread-safe libcurl wrapper for the
// model providers. One POST, one answer; retries and meaning belong to the caller.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// Header name -> value. Request names are sent as written; response names are lower-case.
using HttpHeaders = std::map<std::string, std::string>;

/// A complete HTTP answer, whatever its status.
struct HttpResponse {
  int status = 0;
  HttpHeaders headers;  // names lower-case; a repeated header keeps its last value
  std::string body;
};

/// More than any real chat reply, little enough that a hostile server cannot exhaust memory.
inline constexpr size_t kMaxHttpResponseBytes = size_t{64} << 20;

/// POSTs `body` to `url` and waits for the whole answer. Redirects are not followed.
/// Any HTTP status is a success here (a 500 is still an answer). Errors name the URL and curl's
/// reason: kTimeout when `connect_timeout` or `total_timeout` ran out, kIo when no answer came
/// (connection refused or reset, DNS, TLS), kProtocol when the answer exceeds `max_response_bytes`.
/// Never includes the request headers (they carry the API key) in an error.
Result<HttpResponse> HttpPost(const std::string& url, const HttpHeaders& headers, std::string_view body,
                              std::chrono::milliseconds connect_timeout, std::chrono::milliseconds total_timeout,
                              size_t max_response_bytes = kMaxHttpResponseBytes);

}  // namespace ksmith
