// ksmith-opencl-worker: runs OpenCL programs for the evaluator, inside the same walls as the CPU
// worker, and speaks its protocol (backends/cpu/worker/cpu_worker.h): the evaluator's correctness cases, state
// report and timing driver are the CPU backend's, unchanged.
//
// What differs is where a call runs. A case's tensors are copied, each with its guard zones, from
// the shared arena into device buffers (the kernel gets a sub-buffer at the tensor's start), the
// program's launches run in order, and every tensor comes back with its guards, so the evaluator
// judges the bytes the device holds exactly as it judges the CPU worker's. Timing keeps each
// rotating set's buffers on the device: inputs go up only after the evaluator changed them, the
// outputs come back only for the round's check, and each timed call's time is the device's own
// (OpenCL profiling events, first launch's start to last launch's end).
#pragma once

namespace ksmith {

/// Serves requests on `channel_fd` until "bye" or end of stream; returns the exit code.
int RunOpenclWorker(int channel_fd, int report_fd);

}  // namespace ksmith
