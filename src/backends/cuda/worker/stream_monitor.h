// Watches every kernel and API call the process makes through CUPTI, so that work launched on
// another stream, from another thread, or after the candidate's call returned is seen even when
// its results happen to be right.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

/// Activity seen between Begin() and Collect().
struct StreamReport {
  int kernels_on_stream = 0;
  std::vector<std::string> violations;  // empty when the call kept to its stream and thread
  uint64_t device_time_ns = 0;          // summed kernel durations on the allowed stream
  // While launches are attributed: the allowed stream's kernels whose launching library lies in
  // the candidate's own code, and every kernel's launching library by file name ("unknown" where
  // CUPTI named no launch for it).
  int own_kernels = 0;
  uint64_t own_device_time_ns = 0;  // summed durations of those own kernels
  std::map<std::string, int> launched_by;
};

class StreamMonitor {
 public:
  /// Enables CUPTI activity records (kernels, copies, sets) and API callbacks. One per process.
  static Result<std::unique_ptr<StreamMonitor>> Start();
  ~StreamMonitor();
  StreamMonitor(const StreamMonitor&) = delete;
  StreamMonitor& operator=(const StreamMonitor&) = delete;

  /// Opens a window in which only `allowed` may run candidate work. `trusted_streams` are the
  /// worker's own (copies, flushes) and never count against the candidate.
  void Begin(cudaStream_t allowed, const std::vector<cudaStream_t>& trusted_streams);
  /// Marks the moment the candidate's call was complete: a copy or set on another stream that
  /// starts well after it is late work. (Kernels on other streams are violations anyway.)
  void MarkCallComplete();
  /// Flushes CUPTI's buffers and judges every record since Begin(). Call after a device-wide sync.
  /// With `idle`, the window had no call in it: any work at all outside the trusted streams is
  /// work a candidate left behind.
  StreamReport Collect(bool idle = false);

  /// The files and folders that are the candidate's own code (its library, its build's folder).
  void SetOwnCode(std::vector<std::string> own_code) {
    own_code_ = std::move(own_code);
    own_library_.clear();
  }
  /// From the next Begin(), each launch from the main thread is attributed to the library that
  /// made it (a stack walk per launch: for the checked calls, never the timed ones). Needs
  /// SetOwnCode first. Returns whether it attributes: only where own code was named.
  bool AttributeLaunches(bool on);
  /// From the next Begin(), work on the legacy default stream counts as the allowed stream's:
  /// only where the allowed stream is a blocking one, which that stream synchronizes with both
  /// ways, so such work is ordered with the caller's and inside its timed interval.
  void SetDefaultStreamOrdered(bool ordered) { default_stream_ordered_ = ordered; }

 private:
  StreamMonitor() = default;

  bool IsOwn(const std::string& library);

  bool default_stream_ordered_ = false;
  std::vector<std::string> own_code_;  // canonical paths
  std::map<std::string, bool> own_library_;  // each launching library, judged once
};

}  // namespace ksmith
