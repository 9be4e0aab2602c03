// The `ksmith` command line: subcommands parse their flags here and call the library.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ksmith {

/// Exit codes: 0 when the command did its job (an evaluation ran, whatever its verdict),
/// 2 for usage errors (bad flags, unknown task, missing file, a path that cannot be written, a
/// run store that cannot be used as it is), 3 for infrastructure failures (ksmith or the machine
/// failed while doing a sound command).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfra = 3;

int RunCli(int argc, char** argv);

/// What `--json` prints on stdout for a command that ended with an error (docs: README, "Exit
/// codes and errors"): {"error": {"kind", "exit_code", "message"}}, kind "usage" (exit 2),
/// "infrastructure" (exit 3) or "internal" (a bug of ksmith's, exit 3).
nlohmann::json ErrorJson(const std::string& kind, int exit_code, const std::string& message);

/// Whether `args` (argv without the program name) ask for JSON output: a `--json` before any `--`.
bool WantsJson(const std::vector<std::string>& args);

}  // namespace ksmith
