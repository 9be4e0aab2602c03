// Work folders under the cache (a build's under cache/tmp, a worker's under cache/scratch) that a
// killed process leaves behind, told from those of a running process by the owner each is marked
// with, and removed.
//
// The mark is a file beside the folder, `<folder>.owner`, not in it: what is inside a build's or a
// worker's folder is the compiler's and the sandboxed candidate's, and stays theirs alone.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>

namespace ksmith {

/// How old an unmarked work folder (made by an older ksmith, or by a process killed between making
/// and marking it), or one marked by another host's process, must be before it is removed. Longer
/// than anything can use one: a build's wall-clock limit is at most 1.5 times the largest
/// --build-cpu-s (24 h), 36 h, and an evaluation's worker lives within one evaluation.
inline constexpr std::chrono::hours kStaleWorkFolderAge{48};

/// Marks `folder` as this process's (host, pid, start time) in `<folder>.owner`. Best effort: an
/// unmarked folder is still removed once kStaleWorkFolderAge old.
void MarkWorkFolder(const std::filesystem::path& folder);

/// Removes `folder`, with everything in it, and its mark.
void RemoveWorkFolder(const std::filesystem::path& folder);

/// Removes the folders directly under `parent` that no live process can be using: those marked by
/// a process of this host that is gone (killed mid-build), and those unmarked or marked on another
/// host once older than kStaleWorkFolderAge; and marks left without their folder. A folder of a
/// live process is never touched. Returns how many folders were removed; failures are skipped
/// (another process may be removing the same one).
size_t RemoveStaleWorkFolders(const std::filesystem::path& parent);

}  // namespace ksmith
