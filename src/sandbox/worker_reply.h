// A worker's reply to one request: its type and fields, with no shared memory attached. The one
// way every worker (CPU, CUDA, OpenCL, the tests' host stand-in) answers ServeRequests.
#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "sandbox/protocol.h"

namespace ksmith {

inline Message Reply(const std::string& type, nlohmann::json fields = nlohmann::json::object()) {
  fields["type"] = type;
  return Message{std::move(fields), {}};
}

}  // namespace ksmith
