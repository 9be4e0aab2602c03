// ksmith-fake-llm: a scripted OpenAI-compatible and Anthropic endpoint on 127.0.0.1 for end-to-end
// tests. The script format is described in src/testing/scripted_llm_server.h. Prints one line,
// "port N", once listening; serves until SIGTERM or SIGINT.
#include <signal.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

#include "testing/scripted_llm_server.h"

namespace {

constexpr int kExitServerFailed = 1;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  std::string script_path;
  std::string log_path;
  int port = 0;
  CLI::App app{"ksmith-fake-llm: answers chat requests (OpenAI and Anthropic formats) from a script"};
  app.add_option("--script", script_path, "The script (JSON)")->required();
  app.add_option("--log", log_path, "Append each request received to this file, one JSON line each");
  app.add_option("--port", port, "Port on 127.0.0.1 (0: any free port)")->check(CLI::Range(0, 65535));
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    return kExitUsage;
  }
  try {
    // Blocked before the server starts its threads, which inherit the mask: the signals then
    // reach only the sigwait below, and the server stops cleanly.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    auto script = ksmith::testing::ReadScriptFile(script_path);
    if (!script.ok()) {
      std::fprintf(stderr, "ksmith-fake-llm: %s\n", script.error().message.c_str());
      return kExitUsage;
    }
    auto server = ksmith::testing::ScriptedLlmServer::Start(
        *script, std::filesystem::path(script_path).parent_path(), {port, log_path});
    if (!server.ok()) {
      std::fprintf(stderr, "ksmith-fake-llm: %s: %s\n", script_path.c_str(), server.error().message.c_str());
      return server.error().kind == ksmith::ErrorKind::kInvalidArgument ? kExitUsage : kExitServerFailed;
    }
    std::printf("port %d\n", (*server)->port());
    std::fflush(stdout);
    int received = 0;
    sigwait(&stop_signals, &received);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ksmith-fake-llm: internal error: %s\n", error.what());
    return kExitServerFailed;
  }
}
