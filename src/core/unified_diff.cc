#include "core/unified_diff.h"

#include <chrono>

#include "core/files.h"
#include "core/subprocess.h"

namespace ksmith {

Result<std::string> UnifiedDiff(std::string_view before, std::string_view after, const std::string& before_label,
                                const std::string& after_label) {
  if (before == after) return std::string();
  ScopedTempDir folder("ksmith-diff-");
  if (!folder.ok()) return MakeError(ErrorKind::kIo, "a diff needs a temporary folder: {}", folder.error());
  const auto before_path = folder.path() / "before", after_path = folder.path() / "after";
  if (Status written = WriteFileAtomic(before_path, before); !written.ok()) return written.error();
  if (Status written = WriteFileAtomic(after_path, after); !written.ok()) return written.error();
  SpawnOptions options;
  options.argv = {"diff", "-u", "--label", before_label, "--label", after_label, before_path.string(),
                  after_path.string()};
  options.inherit_environment = true;
  auto ran = RunCommand(options, std::chrono::seconds(30));
  if (!ran.ok()) return ran.error();
  // diff exits 1 when the files differ, 2 on trouble.
  if (ran->signal != 0 || ran->timed_out || ran->exit_code > 1) {
    return MakeError(ErrorKind::kIo, "diff -u failed ({}): {}", ran->Describe(), ran->output.substr(0, 200));
  }
  return ran->output;
}

}  // namespace ksmith
