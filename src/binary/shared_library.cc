#include "binary/shared_library.h"

#include <dlfcn.h>

#include <nlohmann/json.hpp>

namespace ksmith {

Result<std::unique_ptr<SharedLibrary>> SharedLibrary::Open(const std::filesystem::path& path) {
  // NODELETE: unloading a library whose OpenMP threads still exist crashes at exit.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    return MakeError(ErrorKind::kIo, "cannot load {}: {}", path.string(), reason ? reason : "?");
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(handle));
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

Result<void*> SharedLibrary::Symbol(const std::string& name) const {
  ::dlerror();
  void* address = ::dlsym(handle_, name.c_str());
  if (address == nullptr) return MakeError(ErrorKind::kNotFound, "symbol '{}' not found", name);
  return address;
}

Result<KernelEntry> SharedLibrary::Entry() const {
  auto address = Symbol(kKernelEntrySymbol);
  if (!address.ok()) return address.error();
  return reinterpret_cast<KernelEntry>(*address);
}

std::vector<std::string> ReadStateChanges(StateChangesReport report) {
  std::vector<std::string> changes;
  const auto parsed = nlohmann::json::parse(report(), nullptr, false);
  if (!parsed.is_array()) return changes;
  for (const auto& change : parsed) {
    if (change.is_string()) changes.push_back("its Python " + change.get<std::string>());
  }
  return changes;
}

}  // namespace ksmith
