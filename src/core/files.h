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

/// Whether files can be written into the folder `path`, made with its parents where missing,
/// checked without making anything: `path` when it exists, else its nearest existing ancestor,
/// must be a folder this process may write into. kInvalidArgument names the folder that stops it
/// and the cause ("out: not a folder", "/data: Permission denied"). For output folders, checked
/// before a run spends its budget rather than when its results are written.
Status CheckWritableFolder(const std::filesystem::path& path);

/// Whether the file `path` can be written: not a folder, and its folder writable as
/// CheckWritableFolder says.
Status CheckWritableFile(const std::filesystem::path& path);

/// Where compiled objects and machine facts are cached: $KSMITH_CACHE_DIR, else
/// $XDG_CACHE_HOME/ksmith, else ~/.cache/ksmith. Created if missing.
Result<std::filesystem::path> CacheDirectory();

/// One of ksmith's helper programs: the path in `variable` where it is set, else `name` beside
/// this executable (the build folder, or `.gpu/bin`).
std::filesystem::path HelperExecutable(const char* variable, const char* name);

/// Whether a work folder is marked with its owner, so that RemoveStaleWorkFolders
/// (core/work_folders.h) can remove it once a killed process left it behind.
enum class OwnerMark { kNone, kMark };

/// A fresh private directory (mode 0700) under `parent` (default: the system temp dir), removed
/// on destruction.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(std::string_view prefix, const std::filesystem::path& parent = {},
                         OwnerMark mark = OwnerMark::kNone);
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  bool ok() const { return !path_.empty(); }
  /// When !ok(): why, naming the parent folder and the system's reason ("cannot create a folder
  /// under /c/tmp: Permission denied").
  const std::string& error() const { return error_; }

 private:
  std::filesystem::path path_;
  std::string error_;
};

}  // namespace ksmith
