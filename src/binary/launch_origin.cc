#include "binary/launch_origin.h"

#include <dlfcn.h>
#include <execinfo.h>

namespace ksmith {
namespace {

// Deep enough to climb from CUPTI's callback through the driver and the runtime to the caller.
constexpr int kMaxFrames = 32;

std::string_view FileName(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

LaunchOrigin::LaunchOrigin(std::vector<std::string> plumbing) : plumbing_(std::move(plumbing)) {
  // This code is linked into the executable that asks (the worker, a test): dladdr names the
  // executable as it was started ("./ksmith-cuda-worker"), so it is known by where it was loaded.
  Dl_info self{};
  if (::dladdr(reinterpret_cast<const void*>(&IsUnder), &self) != 0) executable_base_ = self.dli_fbase;
  void* frames[1];
  ::backtrace(frames, 1);  // loads libgcc_s now, while the process may still open files
}

bool LaunchOrigin::Skipped(const void* base, std::string_view path) const {
  if (path.empty() || base == executable_base_) return true;
  const std::string_view name = FileName(path);
  for (const auto& prefix : plumbing_) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::string LaunchOrigin::Caller() const {
  void* frames[kMaxFrames];
  const int count = ::backtrace(frames, kMaxFrames);
  for (int i = 0; i < count; ++i) {
    Dl_info info{};
    // A return address points after the call; one byte back keeps it inside the calling function.
    if (::dladdr(static_cast<char*>(frames[i]) - 1, &info) == 0 || info.dli_fname == nullptr) continue;
    if (!Skipped(info.dli_fbase, info.dli_fname)) return info.dli_fname;
  }
  return "";
}

bool IsUnder(std::string_view library, const std::vector<std::string>& folders) {
  for (const auto& folder : folders) {
    if (folder.empty() || !library.starts_with(folder)) continue;
    if (library.size() == folder.size() || folder.back() == '/' || library[folder.size()] == '/') return true;
  }
  return false;
}

}  // namespace ksmith
