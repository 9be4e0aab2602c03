// The `ksmith` command line: subcommands parse their flags here and call the library.
#pragma once

namespace ksmith {

/// Exit codes: 0 when the command did its job (an evaluation ran, whatever its verdict),
/// 2 for usage errors (bad flags, unknown task, missing file), 3 for infrastructure failures.
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfra = 3;

int RunCli(int argc, char** argv);

}  // namespace ksmith
