#include "cli/app.h"

#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "cli/commands.h"
#include "cli/parse_errors.h"

namespace ksmith {
namespace {

// One line of JSON; bytes that are not UTF-8 (a message may quote a damaged file) are replaced,
// not thrown on.
void PrintErrorJson(const std::string& kind, int exit_code, const std::string& message) {
  const nlohmann::json json = ErrorJson(kind, exit_code, message);
  std::printf("%s\n", json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

// The last message PrintError printed: under --json, RunCli repeats it as the command's error
// object. Commands print errors from worker threads too (bench), hence the lock.
std::mutex g_error_mutex;
std::string g_last_error;  // guarded by g_error_mutex

std::string TakeLastError() {
  std::lock_guard lock(g_error_mutex);
  return std::exchange(g_last_error, std::string());
}

// The one place an error reaches a script: with --json, a command that fails with a message says
// so on stdout too, as one line after whatever it printed before failing. A command that fails
// without a message (optimize's "failed" run, whose summary says why) prints no error object.
int Finish(int exit_code, bool json) {
  const std::string message = TakeLastError();
  if (json && !message.empty() && (exit_code == kExitUsage || exit_code == kExitInfra)) {
    PrintErrorJson(exit_code == kExitUsage ? "usage" : "infrastructure", exit_code, message);
  }
  return exit_code;
}

}  // namespace

void PrintError(const std::string& message) {
  std::lock_guard lock(g_error_mutex);
  std::fprintf(stderr, "ksmith: error: %s\n", message.c_str());
  g_last_error = message;
}

nlohmann::json ErrorJson(const std::string& kind, int exit_code, const std::string& message) {
  return {{"error", {{"kind", kind}, {"exit_code", exit_code}, {"message", message}}}};
}

int StoreExitCode(const Error& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kNotFound:
    case ErrorKind::kDamaged:
    case ErrorKind::kUnsupported: return kExitUsage;
    default: return kExitInfra;
  }
}

bool WantsJson(const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (arg == "--") return false;
    if (arg == "--json") return true;
  }
  return false;
}

int RunCli(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const bool json = WantsJson(args);
  TakeLastError();  // nothing from an earlier call (the unit tests run several in one process)
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
  add("build", "Build a candidate as eval would (audit, compiler, binary audit) and report each kernel's registers, "
      "shared, local and constant memory and SASS; --backend cuda needs nvcc, not a GPU", &AddBuildCommand);
  add("optimize", "Search for a faster kernel: a model proposes, ksmith verifies and times, the model refines "
      "(or, with no model, tune the seed kernel's knobs); every attempt is kept in the run store",
      &AddOptimizeCommand);
  add("runs", "List the recorded runs, or show one (`ksmith runs show <run_id>`)", &AddRunsCommand);
  add("knowledge", "The knowledge base: notes on techniques and experience from runs (add, search, list, harvest)",
      &AddKnowledgeCommand);
  add("export", "Write a run as JSONL: trajectories, SFT examples or preference pairs", &AddExportCommand);
  add("bench", "Run a strategy over a suite of tasks and report pass@k, fast_p, speedup@k, efficiency@k and "
      "the geometric-mean speedup", &AddBenchCommand);
  add("tasks", "List the tasks (built-in and imported), show one (`ksmith tasks show softmax`), or check that they can tell a "
      "right kernel from a wrong one (`ksmith tasks check`)", &AddTasksCommand);
  add("import", "Turn another benchmark's problems into ksmith tasks (`ksmith import kernelbench <dir>`)",
      &AddImportCommand);
  add("kernelbench", "Judge KernelBench-format candidates the way KernelBench's scripts lay them out, writing its "
      "result format (`ksmith kernelbench run <folder>`)", &AddKernelBenchCommand);
  add("serve", "Serve evaluations and rewards over HTTP for RL trainers (ksmith's /v1 API and KernelGYM's "
      "/evaluate); jobs run here or on `ksmith worker`s through Redis (docs/serve.md)", &AddServeCommand);
  add("worker", "Judge jobs that `ksmith serve --broker redis://...` queues, on this host's devices", &AddWorkerCommand);
  add("doctor", "Describe this machine: cores, caches, measured bandwidth and FLOP rate, compilers, "
      "sandbox support", &AddDoctorCommand);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    PrintError(DescribeParseError(app, error, args));
    return Finish(kExitUsage, json);
  }
  for (auto& [command, handler] : handlers) {
    if (!command->parsed()) continue;
    try {
      return Finish(handler(), json);
    } catch (const std::exception& error) {
      // A bug of ours: said as one, and under --json as an error object all the same.
      std::fprintf(stderr, "ksmith: internal error: %s\n", error.what());
      if (json) PrintErrorJson("internal", kExitInfra, error.what());
      return kExitInfra;
    }
  }
  return Finish(kExitUsage, json);
}

}  // namespace ksmith
