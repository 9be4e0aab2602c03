// ksmith-fake-cuda-worker: the CUDA worker's protocol served on the host (testing/host_cuda_worker.h),
// for the CUDA session's tests where there is no GPU. Tests only; started by the session under test.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "testing/host_cuda_worker.h"

int main(int argc, char** argv) {
  int channel_fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--channel-fd") == 0) channel_fd = std::atoi(argv[i + 1]);
  }
  if (channel_fd < 0) {
    std::fprintf(stderr, "ksmith-fake-cuda-worker is started by the CUDA session's tests.\n"
                         "usage: ksmith-fake-cuda-worker --channel-fd N [--report-fd M]\n");
    return 2;
  }
  try {
    return ksmith::testing::RunHostCudaWorker(channel_fd);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ksmith-fake-cuda-worker: internal error: %s\n", error.what());
    return 5;
  }
}
