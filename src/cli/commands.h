// One function per subcommand; each registers its flags on `app` and returns the handler that
// runs once parsing succeeded.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace ksmith {

using CommandHandler = std::function<int()>;

CommandHandler AddEvalCommand(CLI::App& app);
CommandHandler AddBuildCommand(CLI::App& app);
CommandHandler AddTasksCommand(CLI::App& app);
CommandHandler AddDoctorCommand(CLI::App& app);
CommandHandler AddOptimizeCommand(CLI::App& app);
CommandHandler AddRunsCommand(CLI::App& app);
CommandHandler AddKnowledgeCommand(CLI::App& app);
CommandHandler AddExportCommand(CLI::App& app);
CommandHandler AddBenchCommand(CLI::App& app);
CommandHandler AddImportCommand(CLI::App& app);
CommandHandler AddKernelBenchCommand(CLI::App& app);
CommandHandler AddServeCommand(CLI::App& app);
CommandHandler AddWorkerCommand(CLI::App& app);

/// Prints "ksmith: error: ..." to stderr. Under --json, the last such message of a command that
/// then exits 2 or 3 is also printed on stdout as an error object, by RunCli (cli/app.h).
void PrintError(const std::string& message);

}  // namespace ksmith
