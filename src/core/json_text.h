// JSON as text for what leaves the process (HTTP bodies, Redis, stdout). A verdict carries the tail
// of what a candidate printed, cut at a byte count, so its strings may hold invalid UTF-8: such
// bytes become U+FFFD instead of an exception that would end the request, or the process.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ksmith {

inline std::string JsonText(const nlohmann::json& json, int indent = -1) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ksmith
