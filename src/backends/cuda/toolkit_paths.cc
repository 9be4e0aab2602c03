#include "backends/cuda/toolkit_paths.h"

#include <string>
#include <system_error>

#include "core/strings.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

/// The words of one `#$ NAME=...` value: quoted words keep their spaces, quotes dropped.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, started = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      started = true;
    } else if (!quoted && (c == ' ' || c == '\t')) {
      if (started) words.push_back(std::move(word));
      word.clear();
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push_back(std::move(word));
  return words;
}

void AddFolder(std::vector<fs::path>& folders, const fs::path& path) {
  std::error_code error;
  const fs::path resolved = fs::canonical(path, error);
  if (error || !fs::is_directory(resolved, error)) return;
  for (const auto& known : folders) {
    if (known == resolved) return;
  }
  folders.push_back(resolved);
}

}  // namespace

ToolkitPaths ParseNvccDryRun(std::string_view dry_run_output) {
  ToolkitPaths paths;
  for (const auto& line : SplitLines(dry_run_output)) {
    const std::string_view text = Trim(line);
    if (!text.starts_with("#$ ")) continue;
    const size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = Trim(text.substr(3, equals - 3));
    const auto words = Words(text.substr(equals + 1));
    if (name == "TOP" && !words.empty()) {
      std::error_code error;
      const fs::path root = fs::canonical(words.front(), error);
      if (!error && fs::is_directory(root, error)) paths.root = root;
      continue;
    }
    std::vector<fs::path>* folders = name == "INCLUDES"          ? &paths.include_dirs
                                     : name == "SYSTEM_INCLUDES" ? &paths.system_include_dirs
                                     : name == "LIBRARIES"       ? &paths.library_dirs
                                                                 : nullptr;
    const std::string_view option = name == "INCLUDES" ? "-I" : name == "SYSTEM_INCLUDES" ? "-isystem" : "-L";
    if (folders == nullptr) continue;
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string_view word = words[i];
      if (word == option && i + 1 < words.size()) {
        AddFolder(*folders, words[++i]);  // "-isystem" "/path"
      } else if (word.starts_with(option) && word.size() > option.size()) {
        AddFolder(*folders, word.substr(option.size()));  // "-I/path"
      }
    }
  }
  return paths;
}

ToolkitPaths ToolkitPathsOr(ToolkitPaths from_nvcc, const fs::path& toolkit_root) {
  if (from_nvcc.root.empty()) from_nvcc.root = toolkit_root;
  if (from_nvcc.include_dirs.empty()) AddFolder(from_nvcc.include_dirs, toolkit_root / "include");
  if (from_nvcc.system_include_dirs.empty()) {
    for (const auto& include : std::vector<fs::path>(from_nvcc.include_dirs)) {
      AddFolder(from_nvcc.system_include_dirs, include / "cccl");
    }
  }
  if (from_nvcc.library_dirs.empty()) AddFolder(from_nvcc.library_dirs, toolkit_root / "lib64");
  return from_nvcc;
}

}  // namespace ksmith
