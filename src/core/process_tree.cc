#include "core/process_tree.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace ksmith {
namespace {

// The parent pid from /proc/<pid>/stat: the field after the state, which follows the command
// name's closing parenthesis (a name may itself hold spaces and parentheses).
pid_t ParentOf(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* file = std::fopen(path, "re");
  if (file == nullptr) return -1;
  char line[1024];
  const size_t length = std::fread(line, 1, sizeof(line) - 1, file);
  std::fclose(file);
  line[length] = '\0';
  const char* end_of_name = std::strrchr(line, ')');
  if (end_of_name == nullptr) return -1;
  char state = 0;
  int parent = -1;
  if (std::sscanf(end_of_name + 1, " %c %d", &state, &parent) != 2) return -1;
  return parent;
}

}  // namespace

std::vector<pid_t> ProcessTree(pid_t root) {
  std::unordered_multimap<pid_t, pid_t> children;
  bool root_alive = false;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* entry = ::readdir(proc)) {
      char* end = nullptr;
      const long value = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || *end != '\0') continue;
      const auto pid = static_cast<pid_t>(value);
      if (pid == root) root_alive = true;
      const pid_t parent = ParentOf(pid);
      if (parent > 0) children.emplace(parent, pid);
    }
    ::closedir(proc);
  }
  std::vector<pid_t> tree;
  if (!root_alive) return tree;
  tree.push_back(root);
  for (size_t next = 0; next < tree.size(); ++next) {
    const auto [first, last] = children.equal_range(tree[next]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

uint64_t AnonymousResidentBytes(const std::vector<pid_t>& processes) {
  static const uint64_t page_bytes = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t total = 0;
  for (const pid_t pid : processes) {
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/statm", static_cast<int>(pid));
    FILE* file = std::fopen(path, "re");
    if (file == nullptr) continue;
    unsigned long long size = 0, resident = 0, shared = 0;
    if (std::fscanf(file, "%llu %llu %llu", &size, &resident, &shared) == 3 && resident > shared) {
      total += (resident - shared) * page_bytes;
    }
    std::fclose(file);
  }
  return total;
}

}  // namespace ksmith
