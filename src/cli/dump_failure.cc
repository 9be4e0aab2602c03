#include "cli/dump_failure.h"

#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/files.h"
#include "eval/failure_dump.h"

namespace ksmith {

Result<std::shared_ptr<DumpFailureRequest>> DumpFailureRequest::Create(const std::filesystem::path& directory,
                                                                       std::vector<std::string> rerun_prefix) {
  std::error_code error;
  if (std::filesystem::exists(directory, error) &&
      (!std::filesystem::is_directory(directory, error) || !std::filesystem::is_empty(directory, error))) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--dump-failure {}: it exists and is not an empty folder; name a new or empty folder, so that "
                     "no earlier case is taken for this one",
                     directory.string());
  }
  if (Status writable = CheckWritableFolder(directory); !writable.ok()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "--dump-failure {}: cannot write there ({}); name a folder you can write", directory.string(),
                     writable.error().message);
  }
  return std::shared_ptr<DumpFailureRequest>(new DumpFailureRequest(directory, std::move(rerun_prefix)));
}

FailedCaseSink DumpFailureRequest::Sink() {
  return [this](const FailedCase& failed) {
    std::lock_guard lock(mutex_);
    failed_ = failed;
  };
}

bool DumpFailureRequest::Finish(const Verdict& verdict) {
  std::lock_guard lock(mutex_);
  // Only a wrong output's case is written: a case kept on the way to another ending (a verdict
  // cancelled after it, say) stays secret.
  if (!failed_ || verdict.status != VerdictStatus::kWrongOutput) {
    const std::string why =
        verdict.status == VerdictStatus::kPassed
            ? "the verdict passed (a passing evaluation's cases stay secret)"
            : fmt::format("the verdict is {}, not wrong_output: only a wrong output has a case to replay",
                          VerdictStatusName(verdict.status));
    std::fprintf(stderr, "ksmith: --dump-failure: nothing written: %s\n", why.c_str());
    return true;
  }
  const auto rerun = RerunCommand(rerun_prefix_, *failed_, verdict.candidate);
  if (Status written = WriteFailureDump(directory_, *failed_, verdict, rerun); !written.ok()) {
    PrintError(fmt::format("--dump-failure {}: {}", directory_.string(), written.error().message));
    return false;
  }
  std::fprintf(stderr, "ksmith: wrote the failing case (%s) to %s\nksmith: rerun: %s\n", failed_->spec.label.c_str(),
               directory_.string().c_str(), ShellCommandLine(rerun).c_str());
  return true;
}

}  // namespace ksmith
