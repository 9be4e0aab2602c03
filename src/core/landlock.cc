#include "core/landlock.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

// Debian 12's kernel headers predate Landlock ABI 3; the values are fixed by the kernel ABI.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

namespace ksmith {
namespace {

constexpr uint64_t kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_TRUNCATE;

uint64_t HandledAccess(int abi) {
  uint64_t handled =
      LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
      LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
      LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return handled;
}

}  // namespace

int LandlockAbi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

Result<LandlockRuleset> LandlockRuleset::Create(const std::vector<std::filesystem::path>& readable,
                                                const std::vector<std::filesystem::path>& executable,
                                                const std::vector<std::filesystem::path>& writable) {
  const int abi = LandlockAbi();
  if (abi < 1) return MakeError(ErrorKind::kUnsupported, "Landlock is not available in this kernel");
  landlock_ruleset_attr attributes{};
  attributes.handled_access_fs = HandledAccess(abi);
  // Only the filesystem field: every ABI accepts a struct of this size.
  const size_t attributes_size = offsetof(landlock_ruleset_attr, handled_access_fs) + sizeof(uint64_t);
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, attributes_size, 0));
  if (ruleset < 0) {
    return MakeError(ErrorKind::kIo, "landlock_create_ruleset failed: {}", std::strerror(errno));
  }
  const uint64_t write = HandledAccess(abi) & ~LANDLOCK_ACCESS_FS_EXECUTE;
  auto add = [&](const std::filesystem::path& path, uint64_t access) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return;  // a folder this system lacks (e.g. /lib64)
    landlock_path_beneath_attr rule{};
    rule.parent_fd = fd;
    rule.allowed_access = access & attributes.handled_access_fs;
    struct stat info;
    if (::fstat(fd, &info) == 0 && !S_ISDIR(info.st_mode)) rule.allowed_access &= kFileRights;
    ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    ::close(fd);
  };
  for (const auto& path : readable) add(path, kRead);
  for (const auto& path : executable) add(path, kRead | LANDLOCK_ACCESS_FS_EXECUTE);
  for (const auto& path : writable) add(path, write);
  return LandlockRuleset(ruleset, abi);
}

bool LandlockRuleset::AllowWritingInChild(int ruleset_fd, const char* path) {
  const int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return false;
  const uint64_t handled = HandledAccess(LandlockAbi());
  landlock_path_beneath_attr rule{};
  rule.parent_fd = fd;
  rule.allowed_access = (handled & ~LANDLOCK_ACCESS_FS_EXECUTE);
  const bool added = ::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0;
  ::close(fd);
  return added;
}

LandlockRuleset::~LandlockRuleset() {
  if (fd_ >= 0) ::close(fd_);
}

bool LandlockRuleset::RestrictSelf(int ruleset_fd) {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return ::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) == 0;
}

}  // namespace ksmith
