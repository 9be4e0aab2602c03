// Writes a wrong_output verdict's failing case (eval/failed_case.h) as files a person can open:
// `ksmith eval --dump-failure DIR`. The folder holds
//   inputs/<name>.npy    each input as the candidate got it, in its own dtype (bf16 as its raw
//                        uint16 bits: numpy has no bf16);
//   expected/<name>.npy  each output as the task's reference computed it, in double precision;
//   actual/<name>.npy    each output as the candidate wrote it, in its own dtype;
//   case.json            the task, backend, shape, distribution, seeds, tolerance, the verdict's
//                        mismatch numbers, the first element that differs, and the rerun command;
//   README.md            the same for a person;
//   rerun.sh             the command that replays the evaluation and fails on this same case.
// The evaluator writes it, after the worker is gone: nothing of the candidate's process touches it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "eval/failed_case.h"
#include "eval/verdict.h"

namespace ksmith {

/// The command that replays an evaluation: `prefix` (the ksmith executable, "eval", --task,
/// --backend and any flag the build depends on), then the evaluation's seed, its number of seeds,
/// --no-time (the case fails before timing) and the candidate's absolute path.
std::vector<std::string> RerunCommand(const std::vector<std::string>& prefix, const FailedCase& failed,
                                      const std::filesystem::path& candidate);

/// One line a POSIX shell runs as `argv`.
std::string ShellCommandLine(const std::vector<std::string>& argv);

/// The first element of each output that differs from the reference rounded to the output's
/// dtype: {"output", "index" (row-major, flat), "actual", "expected"}, or null when every element
/// equals it. Informative only: the verdict's tolerance decides (an honest kernel may differ by
/// rounding here and still pass).
nlohmann::json FirstDifference(const FailedCase& failed);

/// case.json's object (without the file names of the tensors' .npy files added by the writer).
nlohmann::json DescribeFailedCase(const FailedCase& failed, const Verdict& verdict,
                                  const std::vector<std::string>& rerun);

/// Writes the folder described above into `directory` (made with its parents); `rerun` is
/// RerunCommand's. The file's error when one cannot be written.
Status WriteFailureDump(const std::filesystem::path& directory, const FailedCase& failed, const Verdict& verdict,
                        const std::vector<std::string>& rerun);

}  // namespace ksmith
