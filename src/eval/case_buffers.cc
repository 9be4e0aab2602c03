#include "eval/case_buffers.h"

#include <algorithm>

namespace ksmith {
namespace {

size_t Capacity(const std::string& buffer) { return buffer.capacity(); }

size_t Capacity(const std::vector<std::vector<double>>& outputs) {
  size_t elements = 0;
  for (const auto& output : outputs) elements += output.capacity();
  return elements;
}

// The smallest buffer of at least `wanted`, else the largest; taken out of `kept`.
template <typename Buffer>
Buffer TakeBestFit(std::vector<Buffer>& kept, size_t wanted) {
  if (kept.empty()) return {};
  auto best = kept.end();
  for (auto it = kept.begin(); it != kept.end(); ++it) {
    const size_t capacity = Capacity(*it);
    if (capacity >= wanted && (best == kept.end() || capacity < Capacity(*best))) best = it;
  }
  if (best == kept.end()) {
    best = std::max_element(kept.begin(), kept.end(),
                            [](const Buffer& a, const Buffer& b) { return Capacity(a) < Capacity(b); });
  }
  Buffer taken = std::move(*best);
  kept.erase(best);
  return taken;
}

// Adds `buffer` to `kept`, then drops the smallest while more than `limit` are kept.
template <typename Buffer>
void KeepLargest(std::vector<Buffer>& kept, Buffer buffer, size_t limit) {
  if (Capacity(buffer) == 0) return;
  kept.push_back(std::move(buffer));
  while (kept.size() > limit) {
    kept.erase(std::min_element(kept.begin(), kept.end(),
                                [](const Buffer& a, const Buffer& b) { return Capacity(a) < Capacity(b); }));
  }
}

}  // namespace

std::string CaseBuffers::TakeInputs(size_t bytes) {
  std::lock_guard lock(mutex_);
  return TakeBestFit(inputs_, bytes);
}

std::vector<std::vector<double>> CaseBuffers::TakeOutputs(size_t elements) {
  std::lock_guard lock(mutex_);
  return TakeBestFit(outputs_, elements);
}

void CaseBuffers::Keep(PreparedCase&& judged) {
  std::lock_guard lock(mutex_);
  KeepLargest(inputs_, std::move(judged.inputs), kept_);
  KeepLargest(outputs_, std::move(judged.expected), kept_);
}

void CaseBuffers::Clear() {
  std::vector<std::string> inputs;
  std::vector<std::vector<std::vector<double>>> outputs;
  {
    std::lock_guard lock(mutex_);
    inputs.swap(inputs_);
    outputs.swap(outputs_);
  }
  // Freed here, outside the lock.
}

size_t CaseBuffers::HeldBytes() const {
  std::lock_guard lock(mutex_);
  size_t bytes = 0;
  for (const auto& buffer : inputs_) bytes += buffer.capacity();
  for (const auto& outputs : outputs_) bytes += Capacity(outputs) * sizeof(double);
  return bytes;
}

}  // namespace ksmith
