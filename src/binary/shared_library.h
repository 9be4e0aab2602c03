// A loaded shared object (dlopen), closed on destruction.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "core/result.h"

namespace ksmith {

/// The entry every built kernel exports: parameters in signature order; `pointers[i]` holds the
/// i-th parameter when it is a tensor, `scalars[i]` when it is a dim.
using KernelEntry = void (*)(void* const* pointers, const int64_t* scalars);
inline constexpr const char* kKernelEntrySymbol = "ksmith_entry";

class SharedLibrary {
 public:
  /// RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: nothing in it can interpose on symbols of the loading program.
  static Result<std::unique_ptr<SharedLibrary>> Open(const std::filesystem::path& path);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  Result<void*> Symbol(const std::string& name) const;
  Result<KernelEntry> Entry() const;

 private:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  void* handle_;
};

}  // namespace ksmith
