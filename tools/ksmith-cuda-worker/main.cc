// ksmith-cuda-worker: holds one GPU's CUDA context and runs CUDA kernels for the evaluator.
//   --channel-fd N [--report-fd M] [--device D]
//                                 serve the evaluator (started by `ksmith eval`, not by hand)
//   --describe [--device D]       print the GPU's identity and properties as JSON
//   --probe [--device D]          identity plus measured peaks, as JSON (for `ksmith doctor`)
//   --replay DIR [--device D]     call the kernel in DIR once on its saved case (for ncu)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "backends/cuda/worker/cuda_worker.h"
#include "backends/cuda/worker/probe.h"
#include "backends/cuda/worker/replay.h"

namespace {

const char* kUsage =
    "usage: ksmith-cuda-worker --channel-fd N [--report-fd M] [--device D]\n"
    "       ksmith-cuda-worker --describe | --probe [--device D]\n"
    "       ksmith-cuda-worker --replay DIR [--device D]\n"
    "It is started by `ksmith eval --backend cuda` and `ksmith doctor`, not by hand.\n";

}  // namespace

int main(int argc, char** argv) {
  int channel_fd = -1;
  int report_fd = -1;
  int device = 0;
  std::string mode;
  std::string replay_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    const bool has_value = i + 1 < argc;
    if (argument == "--channel-fd" && has_value) {
      channel_fd = std::atoi(argv[++i]);
      mode = "serve";
    } else if (argument == "--report-fd" && has_value) {
      report_fd = std::atoi(argv[++i]);
    } else if (argument == "--device" && has_value) {
      device = std::atoi(argv[++i]);
    } else if (argument == "--describe" || argument == "--probe") {
      mode = argument.substr(2);
    } else if (argument == "--replay" && has_value) {
      mode = "replay";
      replay_dir = argv[++i];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  try {
    if (mode == "serve" && channel_fd >= 0) return ksmith::RunCudaWorker(channel_fd, device, report_fd);
    if (mode == "describe") {
      std::cout << ksmith::DescribeGpu(device).dump() << "\n";
      return 0;
    }
    if (mode == "probe") {
      std::cout << nlohmann::json{{"describe", ksmith::DescribeGpu(device)},
                                  {"peaks", ksmith::MeasureGpuPeaks(device)}}.dump() << "\n";
      return 0;
    }
    if (mode == "replay") return ksmith::ReplayOnce(replay_dir, device);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ksmith-cuda-worker: internal error: %s\n", error.what());
    return 5;
  }
  std::fputs(kUsage, stderr);
  return 2;
}
