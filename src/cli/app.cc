#include "cli/app.h"

#include <cstdio>
#include <map>

#include "cli/commands.h"
#include "cli/parse_errors.h"

namespace ksmith {

void PrintError(const std::string& message) { std::fprintf(stderr, "ksmith: error: %s\n", message.c_str()); }

int RunCli(int argc, char** argv) {
  CLI::App app{"ksmith: verified, measured kernels. Builds a candidate kernel, checks it on hidden "
               "inputs in a sandbox, and times it against what you would otherwise call."};
  app.set_version_flag("--version", KSMITH_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, CommandHandler> handlers;
  auto add = [&](const char* name, const char* description,
                 CommandHandler (*register_command)(CLI::App&)) {
    CLI::App* command = app.add_subcommand(name, description);
    handlers[command] = register_command(*command);
  };
  add("eval", "Evaluate a candidate kernel: audit, build, verify, time; prints a verdict",
      &AddEvalCommand);
  add("optimize", "Search for a faster kernel: a model proposes, ksmith verifies and times, the model refines "
      "(or, with no model, tune the seed kernel's knobs); every attempt is kept in the run store",
      &AddOptimizeCommand);
  add("runs", "List the recorded runs, or show one (`ksmith runs show <run_id>`)", &AddRunsCommand);
  add("export", "Write a run as JSONL: trajectories, SFT examples or preference pairs", &AddExportCommand);
  add("bench", "Run a strategy over a suite of tasks and report pass@k, fast_p, speedup@k, efficiency@k and "
      "the geometric-mean speedup", &AddBenchCommand);
  add("tasks", "List the tasks (built-in and imported), show one (`ksmith tasks show softmax`), or check that they can tell a "
      "right kernel from a wrong one (`ksmith tasks check`)", &AddTasksCommand);
  add("import", "Turn another benchmark's problems into ksmith tasks (`ksmith import kernelbench <dir>`)",
      &AddImportCommand);
  add("kernelbench", "Judge KernelBench-format candidates the way KernelBench's scripts lay them out, writing its "
      "result format (`ksmith kernelbench run <folder>`)", &AddKernelBenchCommand);
  add("doctor", "Describe this machine: cores, caches, measured bandwidth and FLOP rate, compilers, "
      "sandbox support", &AddDoctorCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    PrintError(DescribeParseError(app, error, std::vector<std::string>(argv + 1, argv + argc)));
    return kExitUsage;
  }
  for (auto& [command, handler] : handlers) {
    if (command->parsed()) return handler();
  }
  return kExitUsage;
}

}  // namespace ksmith
