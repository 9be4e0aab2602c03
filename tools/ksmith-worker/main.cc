// ksmith-worker: runs candidate kernels for the evaluator, inside a sandbox.
// Started by the evaluator only; it talks over the descriptor given by --channel-fd.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "backends/cpu/worker/cpu_worker.h"

int main(int argc, char** argv) {
  int channel_fd = -1;
  int report_fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--channel-fd") == 0) channel_fd = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--report-fd") == 0) report_fd = std::atoi(argv[i + 1]);
  }
  if (channel_fd < 0) {
    std::fprintf(stderr,
                 "ksmith-worker is started by `ksmith eval`, not by hand.\n"
                 "usage: ksmith-worker --channel-fd N [--report-fd M]\n");
    return 2;
  }
  try {
    return ksmith::RunWorker(channel_fd, report_fd);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ksmith-worker: internal error: %s\n", error.what());
    return 5;
  }
}
