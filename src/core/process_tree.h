// The processes a child started, and the memory they hold together. A per-process limit
// (RLIMIT_DATA) bounds each compiler; a build of several processes (python running ninja running
// nvcc and g++) is bounded as a whole by watching its tree.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace ksmith {

/// `root` and every live descendant of it (by parent pid, read from /proc), `root` first. Empty
/// when `root` is gone.
std::vector<pid_t> ProcessTree(pid_t root);

/// The anonymous resident memory of `processes` together (RSS less file-backed pages, which the
/// kernel can drop: what the machine's memory pressure is made of) [bytes]. A process that ended
/// meanwhile counts 0.
uint64_t AnonymousResidentBytes(const std::vector<pid_t>& processes);

}  // namespace ksmith
