#include "core/work_folders.h"

#include <fstream>
#include <string>
#include <system_error>

#include "core/files.h"
#include "core/process_owner.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kMarkSuffix = ".owner";

fs::path MarkOf(const fs::path& folder) { return folder.string() + std::string(kMarkSuffix); }

// The owner written by MarkWorkFolder; an empty owner (kUnknown) when there is no readable mark.
ProcessOwner ReadMark(const fs::path& mark) {
  std::ifstream in(mark);
  ProcessOwner owner;
  if (!(in >> owner.host >> owner.pid >> owner.start_ticks)) return {};
  return owner;
}

bool OlderThanStaleAge(const fs::path& path) {
  std::error_code error;
  const auto written = fs::last_write_time(path, error);
  return !error && fs::file_time_type::clock::now() - written > kStaleWorkFolderAge;
}

bool IsStale(const fs::path& folder) {
  switch (ReadMark(MarkOf(folder)).Check()) {
    case ProcessOwner::Liveness::kAlive: return false;
    case ProcessOwner::Liveness::kGone: return true;
    case ProcessOwner::Liveness::kElsewhere:
    case ProcessOwner::Liveness::kUnknown: return OlderThanStaleAge(folder);
  }
  return false;
}

}  // namespace

void MarkWorkFolder(const fs::path& folder) {
  const ProcessOwner self = ProcessOwner::Current();
  // Atomic, so that a cleanup in another process never reads half a mark.
  (void)WriteFileAtomic(MarkOf(folder), self.host + " " + std::to_string(self.pid) + " " +
                                            std::to_string(self.start_ticks) + "\n");
}

void RemoveWorkFolder(const fs::path& folder) {
  std::error_code error;
  fs::remove_all(folder, error);
  fs::remove(MarkOf(folder), error);
}

size_t RemoveStaleWorkFolders(const fs::path& parent) {
  size_t removed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    std::error_code entry_error;
    const fs::path& path = entry.path();
    const std::string name = path.filename().string();
    const bool is_mark = name.size() > kMarkSuffix.size() && name.ends_with(kMarkSuffix);
    if (is_mark) {
      // A mark whose folder is gone (removed by hand, or by a cleanup between its two removals):
      // a mark is written only after its folder exists, so no folder can be on its way.
      const fs::path folder = path.string().substr(0, path.string().size() - kMarkSuffix.size());
      if (!fs::exists(folder, entry_error) && !entry_error) fs::remove(path, entry_error);
      continue;
    }
    if (!entry.is_directory(entry_error) || !IsStale(path)) continue;
    RemoveWorkFolder(path);
    ++removed;
  }
  return removed;
}

}  // namespace ksmith
