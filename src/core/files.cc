#include "core/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <system_error>

#include "core/work_folders.h"

namespace ksmith {

namespace fs = std::filesystem;

Result<std::string> ReadFile(const fs::path& path, size_t max_bytes) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    return MakeError(ErrorKind::kNotFound, "{}: no such file", path.string());
  }
  if (fs::is_directory(status)) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: is a directory, not a file", path.string());
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return MakeError(ErrorKind::kIo, "{}: cannot open: {}", path.string(), std::strerror(errno));
  }
  std::string contents;
  char buffer[1 << 16];
  while (true) {
    const ssize_t count = ::read(fd, buffer, sizeof(buffer));
    if (count < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      return MakeError(ErrorKind::kIo, "{}: cannot read: {}", path.string(), std::strerror(saved));
    }
    if (count == 0) break;
    contents.append(buffer, static_cast<size_t>(count));
    if (contents.size() > max_bytes) {
      ::close(fd);
      return MakeError(ErrorKind::kInvalidArgument, "{}: larger than the limit of {} bytes",
                       path.string(), max_bytes);
    }
  }
  ::close(fd);
  return contents;
}

Status WriteFileAtomic(const fs::path& path, std::string_view contents) {
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);
  // A unique name per writer: threads and processes may write the same path at once.
  std::string temporary_name = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary_name.data());
  if (fd < 0) {
    return MakeError(ErrorKind::kIo, "{}: cannot create a temporary file: {}", path.string(),
                     std::strerror(errno));
  }
  const fs::path temporary = temporary_name;
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t count = ::write(fd, contents.data() + written, contents.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) {
      ::close(fd);
      fs::remove(temporary, error);
      return MakeError(ErrorKind::kIo, "{}: cannot write", temporary.string());
    }
    written += static_cast<size_t>(count);
  }
  ::fchmod(fd, 0644);
  ::close(fd);
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    return MakeError(ErrorKind::kIo, "{}: cannot rename into place", path.string());
  }
  return {};
}

Status CheckWritableFolder(const fs::path& path) {
  std::error_code error;
  fs::path existing = path.empty() ? fs::path(".") : path;
  // The nearest part of the path that exists is where the folders would be made.
  while (!fs::exists(fs::symlink_status(existing, error)) && existing.has_parent_path() &&
         existing.parent_path() != existing) {
    existing = existing.parent_path();
  }
  if (!fs::exists(existing, error)) existing = ".";  // a relative path with no existing part
  if (!fs::is_directory(existing, error)) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: not a folder", existing.string());
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: {}", existing.string(), std::strerror(errno));
  }
  return {};
}

Status CheckWritableFile(const fs::path& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return MakeError(ErrorKind::kInvalidArgument, "{}: a folder, not a file", path.string());
  if (fs::exists(path, error) && ::access(path.c_str(), W_OK) != 0) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: {}", path.string(), std::strerror(errno));
  }
  return CheckWritableFolder(path.has_parent_path() ? path.parent_path() : fs::path("."));
}

Result<fs::path> CacheDirectory() {
  fs::path directory;
  if (const char* explicit_dir = std::getenv("KSMITH_CACHE_DIR"); explicit_dir && *explicit_dir) {
    directory = explicit_dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    directory = fs::path(xdg) / "ksmith";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    directory = fs::path(home) / ".cache" / "ksmith";
  } else {
    directory = fs::temp_directory_path() / "ksmith-cache";
  }
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) {
    return MakeError(ErrorKind::kIo, "cannot create the cache directory {}: {}; set KSMITH_CACHE_DIR to a folder you "
                     "can write", directory.string(), error.message());
  }
  // Every command that needs the cache writes to it (builds, measurements, the default run store):
  // a read-only one is said here, with the folder and the cause, before any work is done.
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    return MakeError(ErrorKind::kIo, "the cache directory {} cannot be written: {}; make it writable, or set "
                     "KSMITH_CACHE_DIR to a folder you can write", directory.string(), std::strerror(errno));
  }
  return directory;
}

ScopedTempDir::ScopedTempDir(std::string_view prefix, const fs::path& parent, OwnerMark mark) {
  const fs::path base = parent.empty() ? fs::temp_directory_path() : parent;
  std::error_code error;
  fs::create_directories(base, error);
  std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    // mkdtemp's errno says why (a read-only cache: EACCES or EROFS); a missing base says more.
    const std::string cause = error ? error.message() : std::strerror(errno);
    error_ = "cannot create a folder under " + base.string() + ": " + cause;
    return;
  }
  path_ = pattern;
  if (mark == OwnerMark::kMark) MarkWorkFolder(path_);
}

ScopedTempDir::~ScopedTempDir() {
  if (!path_.empty()) RemoveWorkFolder(path_);
}

std::filesystem::path HelperExecutable(const char* variable, const char* name) {
  if (const char* configured = std::getenv(variable); configured && *configured) return configured;
  std::error_code error;
  return std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / name;
}

}  // namespace ksmith
