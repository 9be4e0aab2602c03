// Turns one problem's analysis (ksmith_kb/importer.py's spec) into a task folder ksmith loads like its own:
// task.toml, the float64 reference and torch-eager baseline shims, the problem's source.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// Writes <root>/kernelbench/<name>/ and returns that folder.
Result<std::filesystem::path> WriteKernelBenchTask(const nlohmann::json& spec, const std::filesystem::path& root);

}  // namespace ksmith
