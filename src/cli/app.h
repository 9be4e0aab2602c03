// The `ksmith` command line: subcommands parse their flags here and call the library.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// Exit codes: 0 when the command did its job (an evaluation ran, whatever its verdict),
/// 2 for usage errors (bad flags, unknown task, missing file, a path that cannot be written, a
/// run store that cannot be used as it is), 3 for infrastructure failures (ksmith or the machine
/// failed while doing a sound command).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfra = 3;

int RunCli(int argc, char** argv);

/// The exit code for an error from opening, reading or writing the run store, the same in every
/// command: 2 where the store cannot be used as it is and the fix is the user's (its folder
/// missing or read-only, the file read-only, damaged, another program's or a newer ksmith's; an
/// unknown run id), 3 for a failure of a usable store (disk full, an I/O error, another process
/// holding it past the busy timeout).
int StoreExitCode(const Error& error);

/// What `--json` prints on stdout for a command that ended with an error (docs: README, "Exit
/// codes and errors"): {"error": {"kind", "exit_code", "message"}}, kind "usage" (exit 2),
/// "infrastructure" (exit 3) or "internal" (a bug of ksmith's, exit 3).
nlohmann::json ErrorJson(const std::string& kind, int exit_code, const std::string& message);

/// Whether `args` (argv without the program name) ask for JSON output: a `--json` before any `--`.
bool WantsJson(const std::vector<std::string>& args);

}  // namespace ksmith
