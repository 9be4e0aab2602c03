// Reading back the JSON columns the run store wrote (settings, knobs, verdicts, requests): each is
// checked against the type the store wrote, and one that reads back wrong is a damaged store,
// never a JSON exception at whichever reader trips on it first.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// A record the store wrote that reads back wrong: the file was damaged (a disk fault, a hand
/// edit, a tool that rewrote it). kDamaged, naming the file `store`, the record (`what`, e.g.
/// "candidate 7 of run R: its verdict"), the `problem` and the fix, wherever it is found, so
/// that every command exits alike for it (2: cli/app.h, StoreExitCode).
Error DamagedStoreError(const std::filesystem::path& store, std::string_view what, std::string_view problem);

/// `text` as JSON of `type`; DamagedStoreError when it does not parse (bytes that are not UTF-8
/// included) or is of another type.
Result<nlohmann::json> ParseStoredJson(const std::filesystem::path& store, const std::string& text,
                                       std::string_view what, nlohmann::json::value_t type);

/// `text` as a verdict: an object with a known status whose fields that readers take without
/// checking (docs/verdict.md's top level, and what Verdict::FromJson reads) have their types.
Result<nlohmann::json> ParseStoredVerdict(const std::filesystem::path& store, const std::string& text,
                                          std::string_view what);

}  // namespace ksmith
