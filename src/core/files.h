// File and directory helpers. All fallible calls return Result values with the path in the message.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// Reads a whole file; fails with kNotFound, kIo, or kInvalidArgument when it exceeds `max_bytes`.
Result<std::string> ReadFile(const std::filesystem::path& path,
                             size_t max_bytes = size_t{1} << 30);

/// Writes through a temporary file and a rename, so readers never see a half-written file.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents);

/// Where compiled objects and machine facts are cached: $KSMITH_CACHE_DIR, else
/// $XDG_CACHE_HOME/ksmith, else ~/.cache/ksmith. Created if missing.
Result<std::filesystem::path> CacheDirectory();

/// A fresh private directory (mode 0700) under `parent` (default: the system temp dir), removed
/// on destruction.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::string_view prefix, const std::filesystem::path& parent = {});
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool ok() const { return !path_.empty(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ksmith
