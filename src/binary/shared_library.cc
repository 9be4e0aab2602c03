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

nlohmann::json TakeCandidateRaised(CandidateRaisedReport report) {
  constexpr size_t kMaxMessageBytes = 2000;
  const std::string text = report();
  if (text.empty()) return nullptr;
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  const auto field = [&parsed](const char* key) {
    const auto found = parsed.is_object() ? parsed.find(key) : parsed.end();
    return found != parsed.end() && found->is_string() ? found->get<std::string>() : std::string();
  };
  const std::string at = field("at") == "build" ? "build" : "call";
  std::string message = field("message");
  if (message.empty()) message = "its Python raised an exception (its report was unreadable)";
  if (message.size() > kMaxMessageBytes) {
    size_t cut = kMaxMessageBytes;
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    message.resize(cut);
  }
  return {{"at", at}, {"message", message}};
}

nlohmann::json CandidateReport::CustomCodeJson() const {
  return {{"calls", calls}, {"calls_without_custom_code", calls_without_custom_code}};
}

}  // namespace ksmith
