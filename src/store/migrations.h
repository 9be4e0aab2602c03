// The run store's schema as an ordered list of steps. PRAGMA user_version holds the number of
// steps a file has had; opening a file applies the ones it lacks, each in its own transaction,
// so a file is always at one known version, whatever moment a process died at.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/database.h"

namespace ksmith {

struct Migration {
  int version = 0;  // user_version once applied: the steps are numbered 1, 2, 3...
  std::string_view description;
  std::string_view sql;  // one or more statements; no BEGIN/COMMIT (the runner adds them)
};

/// Marks a file as a run store (PRAGMA application_id, set by the first step): "ksmt".
inline constexpr int32_t kRunStoreApplicationId = 0x6B736D74;

/// The run store's steps, oldest first. Append only: a released step is never edited, since
/// files out there have already had it.
const std::vector<Migration>& RunStoreMigrations();

/// PRAGMA user_version: 0 for a new file. Reading it is the first read of the file, so a file
/// that is not SQLite fails here.
Result<int> SchemaVersion(const Database& database);

/// Brings the file up to the last step and returns the version it is at. A file at a version
/// above the last step is kUnsupported: "written by a newer ksmith (schema N, this build knows
/// M)". Safe against another process migrating the same file at the same time: each step
/// re-reads the version under the write lock.
Result<int> ApplyMigrations(Database& database, const std::vector<Migration>& migrations);

}  // namespace ksmith
