// The worker side: the only process that ever runs candidate code.
//
// It loads the trusted baseline, walls itself in (sandbox/policy.h), loads the candidate, then
// serves requests: run one case with guarded buffers, or time candidate against baseline.
// It never judges correctness against the reference; the evaluator does that from the raw bytes
// sent back, so nothing the candidate does inside this process can forge a pass.
#pragma once

namespace ksmith {

/// Serves requests on `channel_fd` until "bye" or end of stream; returns the exit code.
/// `report_fd`: where the sandbox hands over its listener for forbidden calls (policy.h).
int RunWorker(int channel_fd, int report_fd = -1);

}  // namespace ksmith
