// `ksmith eval --dump-failure DIR`: the failing case of a wrong_output verdict written as files
// (eval/failure_dump.h), or a line saying why nothing was written.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "eval/failed_case.h"
#include "eval/verdict.h"

namespace ksmith {

class DumpFailureRequest {
 public:
  /// Checks that `directory` is new or empty (a case left there by an earlier run would read as
  /// this one's) and writable. `rerun_prefix` starts the rerun command: the ksmith executable,
  /// "eval" and the flags that chose the task, the backend and the build. kInvalidArgument with
  /// the fix.
  static Result<std::shared_ptr<DumpFailureRequest>> Create(const std::filesystem::path& directory,
                                                           std::vector<std::string> rerun_prefix);

  /// What EvalOptions::failed_case_sink is set to; it keeps a copy of the case (thread-safe).
  FailedCaseSink Sink();

  /// After the verdict: writes its case, saying where on stderr, or says why there is none (a
  /// passing verdict, or a failure that is not a wrong output). Returns false when the files
  /// could not be written, the error printed.
  bool Finish(const Verdict& verdict);

 private:
  DumpFailureRequest(std::filesystem::path directory, std::vector<std::string> rerun_prefix)
      : directory_(std::move(directory)), rerun_prefix_(std::move(rerun_prefix)) {}

  std::filesystem::path directory_;
  std::vector<std::string> rerun_prefix_;
  std::mutex mutex_;
  std::optional<FailedCase> failed_;  // guarded by mutex_
};

}  // namespace ksmith
