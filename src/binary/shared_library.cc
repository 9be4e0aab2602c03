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

CandidateReport ReadCandidateReport(StateChangesReport report) {
  CandidateReport read;
  const auto parsed = nlohmann::json::parse(report(), nullptr, false);
  if (!parsed.is_object()) return read;
  for (auto [key, into] : {std::pair{"changes", &read.changes}, std::pair{"restored", &read.restored}}) {
    if (const auto changes = parsed.find(key); changes != parsed.end() && changes->is_array()) {
      for (const auto& change : *changes) {
        if (change.is_string()) into->push_back("its Python " + change.get<std::string>());
      }
    }
  }
  const auto count = [&parsed](const char* key) {
    const auto found = parsed.find(key);
    return found != parsed.end() && found->is_number_integer() ? std::max<int64_t>(0, found->get<int64_t>()) : 0;
  };
  read.calls = count("calls");
  read.calls_without_custom_code = std::min(read.calls, count("calls_without_custom_code"));
  return read;
}

nlohmann::json CandidateReport::CustomCodeJson() const {
  return {{"calls", calls}, {"calls_without_custom_code", calls_without_custom_code}};
}

}  // namespace ksmith
