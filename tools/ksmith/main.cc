// ksmith: parses the command line and hands over to the library.
#include <cstdio>
#include <exception>

#include "cli/app.h"

int main(int argc, char** argv) {
  try {
    return ksmith::RunCli(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ksmith: internal error: %s\n", error.what());
    return ksmith::kExitInfra;
  }
}
