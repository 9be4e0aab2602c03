// Who may use the GPU when several candidates are evaluated at once: correctness work of many
// evaluations shares it (their kernels are tiny next to the host-side work around them), while
// timing takes it alone, so no other kernel runs while a candidate is timed. Writers are
// preferred: once timing asks, new shared users wait until it is done. The cpu backend, which
// times on the cores, holds the same gate for them: correctness work and builds share the cores,
// and timing takes them alone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace ksmith {

class GpuGate {
 public:
  /// Tensors of one case beyond this [bytes] make a verification large: the KernelBench problems
  /// judged at their own sizes (up to a tenth of the GPU's memory in tensors, several copies of
  /// which a verification holds). The old 1 GiB cap, under which verifications shared the GPU.
  static constexpr int64_t kLargeCaseBytes = int64_t{1} << 30;
  /// Large verifications take turns with each other, from their first case to their release, so
  /// that two of them never hold the device's memory at once; small ones share the device beside
  /// them as before.
  std::mutex& large_verifications() { return large_verifications_; }

  void LockShared();
  void UnlockShared();
  void LockExclusive();
  void UnlockExclusive();

  /// Holds the gate shared for a scope; a null gate holds nothing.
  class Shared {
   public:
    explicit Shared(GpuGate* gate) : gate_(gate) { if (gate_) gate_->LockShared(); }
    ~Shared() { if (gate_) gate_->UnlockShared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    GpuGate* gate_;
  };
  /// Holds the gate alone for a scope; a null gate holds nothing.
  class Exclusive {
   public:
    explicit Exclusive(GpuGate* gate) : gate_(gate) { if (gate_) gate_->LockExclusive(); }
    ~Exclusive() { if (gate_) gate_->UnlockExclusive(); }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    GpuGate* gate_;
  };

 private:
  std::mutex large_verifications_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int readers_ = 0;          // guarded by mutex_
  int waiting_writers_ = 0;  // guarded by mutex_
  bool writing_ = false;     // guarded by mutex_
};

}  // namespace ksmith
