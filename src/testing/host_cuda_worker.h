// The CUDA worker's protocol served on the host, for the CUDA session's tests on machines without
// a GPU (backends/cuda/cuda_session_test.cc). It loads host builds of the kernels (the task's CPU
// sources, built by the CPU compiler: the same `ksmith_entry`), runs them on the shared case
// memory the evaluator sends, draws inputs as the device would (the host's draw, which the
// device repeats bit for bit), times both sides with the host's clock, and answers every request
// the session makes. Only the device is fake: the evaluator's side, the protocol, the shared
// memory and the judgments are the real ones.
//
// KSMITH_FAKE_CUDA_FAULT makes the candidate's worker report what a GPU worker would report
// about a misbehaving kernel, so that each verdict the session draws from such a reply is tested:
//   load_error            setup: the candidate does not load (after the walls went up)
//   no_device             setup: the device does not start (before anything of the candidate's)
//   cuda_error@N          the Nth checked call: an illegal address
//   crash@N               the Nth checked call: the worker dies of SIGSEGV
//   crash_at_new_shape    the first checked call at a shape other than the first call's: SIGSEGV
//   hang@N                the Nth checked call: the worker never answers
//   other_stream@N        the Nth checked call: a kernel ran outside the given stream
//   late_write@N          the Nth checked call: memory changed after the stream completed
//   zeros@N               the Nth checked call: the outputs are left as zeros
//   idle_work             the idle check: a kernel launched after the calls returned
//   timed_mismatch        timing: the outputs differed from the baseline's while timed
//   faster_on_reuse       timing: calls on reused inputs run far faster than on fresh ones
//   state_change          the state report: the candidate changed a torch flag
//   crash_in_second_timing timing against the second baseline: SIGSEGV (what torch.compile may do)
// The reference's worker (its setup names a reference) never misbehaves.
#pragma once

namespace ksmith::testing {

/// Serves requests on `channel_fd` until "bye" or end of stream; returns the exit code.
int RunHostCudaWorker(int channel_fd);

}  // namespace ksmith::testing
