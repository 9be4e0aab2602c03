// The CUDA worker: one process per GPU holding the CUDA context, the only process that runs
// candidate CUDA code. It speaks the worker protocol of sandbox/protocol.h:
//   setup  -> ready | load_error   create the context, wall itself in, load the kernels
//   arena  -> arena_ready          map a shared case arena and mirror it on the GPU
//   run    -> result | cuda_error  upload the arena, call one kernel on its stream, download
//   time   -> timed | cuda_error   the nvbench-method loop on the bench case (gpu_timing.h)
//   bye    -> goodbye
// After a CUDA error the context is unusable (illegal address, launch failure): the worker
// reports it and exits, and the evaluator starts a fresh one for the next candidate.
// Like the CPU worker it never judges correctness: the evaluator reads the raw bytes back.
#pragma once

namespace ksmith {

/// Serves requests on `channel_fd` until "bye", end of stream or a CUDA error. `report_fd`: where
/// the sandbox hands over its listener for forbidden calls (sandbox/policy.h).
int RunCudaWorker(int channel_fd, int device, int report_fd = -1);

}  // namespace ksmith
