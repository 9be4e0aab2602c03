// The worker's side of timing: rotating input sets, one kernel call per request, and a check of
// each round's outputs. The evaluator drives it call by call and times every call with its own
// clock (eval/timing_driver.h), so nothing the candidate does to this process's memory, stack or
// clocks changes the times that count; the time measured here is kept only as a cross-check.
//
// Before each round a few input elements of the set change, so no call ever sees inputs it has
// seen before, and the candidate's output is checked against the baseline's for the same
// inputs: a kernel that caches, counts calls, or skips work when timed is caught in the act.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary/shared_library.h"
#include "core/result.h"
#include "sandbox/layout.h"
#include "tensor/compare.h"
#include "tensor/random.h"

namespace ksmith {

/// Bytes of input data for `sets` rounds of `layout`: per set, each input tensor in slot order.
size_t TimingInputBytes(const CaseLayout& layout, size_t sets);

/// Fills the timing inputs. The evaluator does this ahead of time, while correctness runs, in
/// memory it then shares with the worker.
/// Each tensor is drawn in fp32 and stored in its slot's dtype.
void FillTimingInputs(const CaseLayout& layout, size_t sets, Distribution distribution,
                      uint64_t seed, void* inputs);

/// Whether this build, on this CPU, can write memory back and drop it from every cache level
/// (EvictFromCaches). Where it can, a timed call's inputs are cold because its set was evicted
/// after its last round, and two sets suffice; where it cannot, the sets rotate through more
/// memory than the last-level cache holds.
bool CanEvictFromCaches();

/// Writes [data, data + bytes) back to memory and drops it from every cache; nothing where
/// CanEvictFromCaches() is false.
void EvictFromCaches(const void* data, size_t bytes);

/// Runs enough unpredictable branches to fill the calling core's branch predictors, so that they
/// forget the branches of the calls before. An honest kernel with data-dependent branches runs
/// faster on inputs it saw a moment ago because the predictors remember their outcomes (a masked
/// sum over 3840 elements, 14.6 us on fresh inputs and 4.9 us on barely changed ones, on this
/// project's AMD EPYC VM), which the samples on barely changed inputs would read as skipped work.
/// A kernel's own memory of earlier calls is untouched: it is what those samples look for.
/// The timing driver asks for it (`time_scrub`, untimed) before each round on barely changed
/// inputs; on fresh inputs what the predictors remember cannot help. About 0.5 ms on that VM.
void ScrubBranchPredictors();

/// An anonymous private mapping, advised to use huge pages.
class PrivateMemory {
 public:
  explicit PrivateMemory(size_t bytes);
  ~PrivateMemory();
  PrivateMemory(const PrivateMemory&) = delete;
  PrivateMemory& operator=(const PrivateMemory&) = delete;
  unsigned char* data() const { return data_; }

 private:
  size_t size_;
  unsigned char* data_ = nullptr;
};

class TimingBench {
 public:
  /// `request` holds the layout (see CaseLayout), "sets", "seed", "distribution", "mutations"
  /// and "tolerance" {norm, elem, epsilon, accumulation}; `inputs` is TimingInputBytes long.
  /// Runs one untimed call of each kernel first (page faults, OpenMP start-up).
  static Result<std::unique_ptr<TimingBench>> Create(const nlohmann::json& request, const void* inputs,
                                                     KernelEntry candidate, KernelEntry baseline,
                                                     KernelFinish baseline_finish = nullptr,
                                                     KernelFinish candidate_finish = nullptr);

  /// Changes a few inputs of `set` for `round` when `tweak` (inputs that barely differ from the
  /// set's last call), then calls `target` ("candidate", "baseline" or "none") on the set.
  /// Returns the call's time in this process [ns].
  Result<double> Call(const std::string& target, size_t set, size_t round, bool tweak);
  /// The target's ksmith_finish, where it has one: its outputs into ksmith's buffers. A request of
  /// its own, after Call's, so that no clock of the timed request sees it.
  void Finish(const std::string& target) const;
  bool HasFinish(const std::string& target) const;

  /// Compares the candidate's output on `set` with the baseline's.
  Comparison Check(size_t set) const;

  /// Gives every input of `set` new contents for `round`: the first set's original values in a
  /// new order (64-byte blocks placed by a random affine permutation, each rotated by a random
  /// count of elements), so the values keep their distribution while no element is likely to
  /// stay where an earlier call saw it. Done after a set's round, untimed, so that the other
  /// sets' rounds push it out of the cache before its next use. A held input (a model's weight)
  /// keeps its values: a module's parameters do not change between calls.
  void Refresh(size_t set, size_t round);
  /// Writes every cache line of `set`'s inputs back with the values it holds (held inputs aside,
  /// as Refresh leaves them): the memory traffic of a Refresh without new values, for the side
  /// that runs second where a Refresh preceded the other order's second side (without a spare set:
  /// docs/benchmarks.md measured it leaving a 1-2% bias against the candidate).
  void Rewrite(size_t set);

  /// Drops every buffer of `set` (inputs and both sides' outputs) from the caches, so that its
  /// next call starts cold, as on a machine whose cache the rotating sets overflow. Done after a
  /// set's round and between its two calls.
  void Evict(size_t set) const;
  bool HasSet(size_t set) const { return set < sets_.size(); }

  /// One buffer of a set in this process's memory, where a device's worker mirrors it.
  struct HostRegion {
    void* data = nullptr;
    size_t bytes = 0;
    bool output = false;
  };
  /// Every buffer of `set`: its inputs, then both sides' outputs.
  std::vector<HostRegion> Regions(size_t set) const;

 private:
  struct Buffer {  // one tensor of a set, in memory_
    unsigned char* data = nullptr;
    size_t count = 0;  // elements
    DType dtype = DType::kFloat32;
    InputDraw draw;
  };
  struct SetBuffers {
    std::vector<Buffer> inputs;
    std::vector<Buffer> candidate_outputs;
    std::vector<Buffer> baseline_outputs;
    std::vector<void*> candidate_pointers;
    std::vector<void*> baseline_pointers;
  };

  TimingBench() = default;
  static std::vector<float> Widen(const Buffer& buffer);
  static const float* AsFloats(const Buffer& buffer, std::vector<float>& storage);

  CaseLayout layout_;
  std::unique_ptr<PrivateMemory> memory_;
  std::vector<SetBuffers> sets_;
  KernelEntry candidate_ = nullptr;
  KernelEntry baseline_ = nullptr;
  KernelFinish baseline_finish_ = nullptr;
  KernelFinish candidate_finish_ = nullptr;  // only a shim ksmith generated has one (EvalOptions)
  Distribution distribution_ = Distribution::kNormal;
  uint64_t seed_ = 0;
  size_t mutations_ = 16;
  // Per input tensor: the first set's original bytes, each 64-byte block stored twice in a row,
  // so that a rotated block is one contiguous 64-byte copy. The tail past the last whole block
  // follows once.
  std::vector<std::unique_ptr<unsigned char[]>> pool_;
  Tolerance tolerance_;
  double epsilon_ = 0x1p-24;
  double accumulation_ = 1;
  double input_rms_ = 0;  // of set 0's inputs: the scale of rounding noise where outputs vanish
};

}  // namespace ksmith
