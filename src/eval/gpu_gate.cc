#include "eval/gpu_gate.h"

namespace ksmith {

void GpuGate::LockShared() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !writing_ && waiting_writers_ == 0; });
  ++readers_;
}

void GpuGate::UnlockShared() {
  std::lock_guard lock(mutex_);
  if (--readers_ == 0) changed_.notify_all();
}

void GpuGate::LockExclusive() {
  std::unique_lock lock(mutex_);
  ++waiting_writers_;
  changed_.wait(lock, [this] { return !writing_ && readers_ == 0; });
  --waiting_writers_;
  writing_ = true;
}

void GpuGate::UnlockExclusive() {
  std::lock_guard lock(mutex_);
  writing_ = false;
  changed_.notify_all();
}

}  // namespace ksmith
