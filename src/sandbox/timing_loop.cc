#include "sandbox/timing_loop.h"

#include <sys/mman.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <new>

#include "core/parallel.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;

// Stream ids keep the timing inputs and their mutations independent of each other.
constexpr uint64_t kSetStreamBase = 1'000'000;
constexpr uint64_t kMutationPositionStream = 2'000'000;
constexpr uint64_t kMutationValueStream = 3'000'000;
constexpr uint64_t kRefreshStream = 4'000'000;
constexpr size_t kRefreshBlockBytes = 64;
constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t RoundUp64(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

std::vector<float> TimingBench::Widen(const Buffer& buffer) {
  std::vector<float> values(buffer.count);
  LoadAsFloat(buffer.dtype, buffer.data, buffer.count, values.data());
  return values;
}

// The check runs after every timed round: fp32 outputs are read in place, not copied.
const float* TimingBench::AsFloats(const Buffer& buffer, std::vector<float>& storage) {
  if (buffer.dtype == DType::kFloat32) return reinterpret_cast<const float*>(buffer.data);
  storage = Widen(buffer);
  return storage.data();
}

#if defined(__x86_64__) && defined(__GNUC__)
bool CanEvictFromCaches() {
  static const bool supported = __builtin_cpu_supports("clflushopt");
  return supported;
}

// clflushopt, not clflush: the ordered clflush takes 13 times as long (53 ms for 96 MiB of
// dirty lines on the development VM, against 4 ms).
__attribute__((target("clflushopt"))) void EvictFromCaches(const void* data, size_t bytes) {
  if (!CanEvictFromCaches() || bytes == 0) return;
  const auto begin = reinterpret_cast<uintptr_t>(data) & ~uintptr_t{63};
  const auto end = reinterpret_cast<uintptr_t>(data) + bytes;
  for (uintptr_t line = begin; line < end; line += 64) _mm_clflushopt(reinterpret_cast<void*>(line));
  _mm_sfence();
}
#else
bool CanEvictFromCaches() { return false; }
void EvictFromCaches(const void*, size_t) {}
#endif

void ScrubBranchPredictors() {
  // 8192 rounds of 8 branch sites on a xorshift stream: 65536 branches, half of them
  // mispredicted, each misprediction taking a predictor entry (about 0.5 ms). The empty asm in
  // each taken arm keeps the compiler from turning the branches into conditional moves.
  static thread_local uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t x = state;
  uint64_t taken = 0;
  for (int i = 0; i < 8192; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
#define KSMITH_SCRUB_SITE(bit)              \
  if ((x >> (bit)) & 1) {                   \
    asm volatile("" : "+r"(taken));         \
    ++taken;                                \
  }
    KSMITH_SCRUB_SITE(3)
    KSMITH_SCRUB_SITE(11)
    KSMITH_SCRUB_SITE(19)
    KSMITH_SCRUB_SITE(27)
    KSMITH_SCRUB_SITE(35)
    KSMITH_SCRUB_SITE(43)
    KSMITH_SCRUB_SITE(51)
    KSMITH_SCRUB_SITE(59)
#undef KSMITH_SCRUB_SITE
  }
  state = x ^ taken;
}

PrivateMemory::PrivateMemory(size_t bytes) : size_((bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes) {
  void* data = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) throw std::bad_alloc();
  ::madvise(data, size_, MADV_HUGEPAGE);  // a hint: without huge pages, plain pages
  data_ = static_cast<unsigned char*>(data);
  // Faulted in on several threads now, not one page at a time by the copies: the same pages
  // (huge ones where the kernel has them) at a fraction of the set-up's time.
  PrefaultPages(data_, size_);
}

PrivateMemory::~PrivateMemory() { ::munmap(data_, size_); }

size_t TimingInputBytes(const CaseLayout& layout, size_t sets) {
  size_t bytes = 0;
  for (const auto& slot : layout.tensors) bytes += slot.output ? 0 : slot.bytes;
  return bytes * sets;
}

void FillTimingInputs(const CaseLayout& layout, size_t sets, Distribution distribution,
                      uint64_t seed, void* inputs) {
  auto* next = static_cast<unsigned char*>(inputs);
  std::vector<float> values;
  for (size_t set = 0; set < sets; ++set) {
    for (size_t t = 0; t < layout.tensors.size(); ++t) {
      const auto& slot = layout.tensors[t];
      if (slot.output) continue;
      values.resize(slot.Elements());
      layout.FillSlot(slot, values.data(), distribution, seed, kSetStreamBase + set * 64 + t);
      StoreAs(slot.dtype, values.data(), values.size(), next);
      next += slot.bytes;
    }
  }
}

Result<std::unique_ptr<TimingBench>> TimingBench::Create(const nlohmann::json& request,
                                                         const void* inputs, KernelEntry candidate,
                                                         KernelEntry baseline, KernelFinish baseline_finish,
                                                         KernelFinish candidate_finish) {
  auto layout = CaseLayout::FromJson(request);
  if (!layout.ok()) return layout.error();
  if (candidate == nullptr || baseline == nullptr) {
    return MakeError(ErrorKind::kProtocol, "kernels not loaded");
  }
  std::unique_ptr<TimingBench> bench(new TimingBench());
  bench->layout_ = std::move(layout.value());
  bench->candidate_ = candidate;
  bench->baseline_ = baseline;
  bench->baseline_finish_ = baseline_finish;
  bench->candidate_finish_ = candidate_finish;
  auto distribution = ParseDistribution(request.value("distribution", std::string("normal")));
  if (!distribution.ok()) return distribution.error();
  bench->distribution_ = *distribution;
  bench->seed_ = request.value("seed", uint64_t{1});
  bench->mutations_ = request.value("mutations", size_t{16});
  const auto& tolerance = request.at("tolerance");
  bench->tolerance_ = {tolerance.value("norm", 1e-5), tolerance.value("elem", 1e-4)};
  bench->epsilon_ = tolerance.value("epsilon", 0x1p-24);
  bench->accumulation_ = tolerance.value("accumulation", 1.0);

  const size_t sets = std::max<size_t>(1, request.value("sets", size_t{1}));
  // One more set past the evaluator's, its inputs set 0's to start with: the second side's of a
  // round on fresh inputs, given new ones just before (timing_driver.h's PlanRound).
  const size_t spare = request.value("spare_set", false) ? 1 : 0;
  // Inputs are copied out of the shared memory and every buffer lives in one private mapping
  // backed by huge pages where the kernel has them: each run then sees the same page sizes, and
  // a memory-bound kernel's speed no longer depends on how a run's pages happened to fall.
  // Every buffer starts on a 64-byte boundary, as in the correctness arena.
  size_t set_bytes = 0;
  for (const auto& slot : bench->layout_.tensors) set_bytes += (slot.output ? 2 : 1) * RoundUp64(slot.bytes);
  bench->memory_ = std::make_unique<PrivateMemory>(std::max<size_t>(set_bytes * (sets + spare), 64));
  unsigned char* next = bench->memory_->data();
  const auto* source = static_cast<const unsigned char*>(inputs);
  bench->sets_.resize(sets + spare);
  const auto& scalars = bench->layout_.scalars;
  for (size_t index = 0; index < bench->sets_.size(); ++index) {
    SetBuffers& set = bench->sets_[index];
    if (index == sets) source = static_cast<const unsigned char*>(inputs);  // the spare starts as set 0
    set.candidate_pointers.assign(scalars.size(), nullptr);
    set.baseline_pointers.assign(scalars.size(), nullptr);
    for (const auto& slot : bench->layout_.tensors) {
      const Buffer buffer{next, slot.Elements(), slot.dtype, slot.draw};
      next += RoundUp64(slot.bytes);
      if (slot.output) {
        // Poisoned once: a kernel that writes nothing leaves NaN behind and fails the check.
        const Buffer expected{next, slot.Elements(), slot.dtype};
        next += RoundUp64(slot.bytes);
        for (unsigned char* poisoned : {buffer.data, expected.data}) {
          // Pieces start at multiples of 4 bytes: the pattern stays in phase.
          ParallelChunks(slot.bytes, [poisoned, pattern = DTypePoisonPattern(slot.dtype)](size_t begin, size_t end) {
            FillPattern(poisoned + begin, end - begin, pattern);
          });
        }
        set.candidate_outputs.push_back(buffer);
        set.baseline_outputs.push_back(expected);
        set.candidate_pointers[slot.parameter] = buffer.data;
        set.baseline_pointers[slot.parameter] = expected.data;
      } else {
        ParallelCopy(buffer.data, source, slot.bytes);
        source += slot.bytes;
        set.inputs.push_back(buffer);
        set.candidate_pointers[slot.parameter] = buffer.data;
        set.baseline_pointers[slot.parameter] = buffer.data;
      }
    }
  }
  double square_sum = 0;
  size_t input_count = 0;
  for (const auto& input : bench->sets_[0].inputs) {
    if (!IsFloatingPoint(input.dtype)) continue;  // labels and masks are not magnitudes
    std::vector<float> widened;
    const float* values = AsFloats(input, widened);
    const double rms = RootMeanSquare(values, input.count);
    square_sum += rms * rms * static_cast<double>(input.count);
    input_count += input.count;
  }
  bench->input_rms_ = input_count > 0 ? std::sqrt(square_sum / static_cast<double>(input_count)) : 0;
  for (const auto& input : bench->sets_[0].inputs) {
    const size_t bytes = input.count * DTypeBytes(input.dtype);
    const size_t blocks = bytes / kRefreshBlockBytes;
    // Not zeroed first: every byte is copied below.
    const size_t pool_bytes = bytes + blocks * kRefreshBlockBytes;
    unsigned char* pool = bench->pool_.emplace_back(new unsigned char[std::max<size_t>(pool_bytes, 1)]).get();
    PrefaultPages(pool, pool_bytes);
    ParallelChunks(blocks * kRefreshBlockBytes, [&](size_t begin, size_t end) {  // whole blocks per piece
      for (size_t b = begin / kRefreshBlockBytes; b < end / kRefreshBlockBytes; ++b) {
        std::memcpy(pool + 2 * b * kRefreshBlockBytes, input.data + b * kRefreshBlockBytes, kRefreshBlockBytes);
        std::memcpy(pool + (2 * b + 1) * kRefreshBlockBytes, input.data + b * kRefreshBlockBytes, kRefreshBlockBytes);
      }
    });
    std::memcpy(pool + 2 * blocks * kRefreshBlockBytes, input.data + blocks * kRefreshBlockBytes,
                bytes - blocks * kRefreshBlockBytes);
  }
  candidate(bench->sets_[0].candidate_pointers.data(), scalars.data());
  if (candidate_finish != nullptr) candidate_finish(nullptr);
  baseline(bench->sets_[0].baseline_pointers.data(), scalars.data());
  if (baseline_finish != nullptr) baseline_finish(nullptr);
  bench->Refresh(0, ~size_t{0});  // the first calls saw set 0: its first timed round must not
  for (size_t set = 0; set < bench->sets_.size(); ++set) bench->Evict(set);
  return bench;
}

void TimingBench::Refresh(size_t set_index, size_t round) {
  SetBuffers& set = sets_.at(set_index);
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const Buffer& input = set.inputs[i];
    if (input.draw.held) continue;  // a model's weights stay as drawn: only its inputs move
    const unsigned char* pool = pool_[i].get();
    const size_t element_bytes = DTypeBytes(input.dtype);
    const size_t block_elements = kRefreshBlockBytes / element_bytes;
    const size_t blocks = input.count / block_elements;
    const uint64_t stream = kRefreshStream + set_index * 64 + i;
    uint64_t draw = 0;
    auto next = [&] { return MixCounter(seed_, stream, round * 1024 + draw++); };
    size_t stride = 1;
    if (blocks > 1) {
      do stride = 1 + next() % (blocks - 1);
      while (std::gcd(stride, blocks) != 1);
    }
    const size_t offset = blocks > 0 ? next() % blocks : 0;
    const size_t rotation = next() % block_elements;
    const size_t rotated_bytes = rotation * element_bytes;
    // Block b takes pool block (b * stride + offset) mod blocks, rotated left by `rotation`
    // elements: in the doubled pool, the 64 bytes from `rotated_bytes` on.
    // On this thread alone: refreshed from two threads, the next timed calls read 13% faster
    // for the candidate and 6% for the baseline (vector_add, 6 verdicts each, a 2-core VM),
    // most likely the second core kept awake; in any case not the kernels' own speed.
    size_t source = offset;
    for (size_t b = 0; b < blocks; ++b) {
      std::memcpy(input.data + b * kRefreshBlockBytes, pool + 2 * source * kRefreshBlockBytes + rotated_bytes,
                  kRefreshBlockBytes);
      source += stride;
      if (source >= blocks) source -= blocks;
    }
    // The tail past the last whole block: the pool's tail, rotated the same way.
    const size_t tail_elements = input.count - blocks * block_elements;
    const unsigned char* tail_from = pool + 2 * blocks * kRefreshBlockBytes;
    unsigned char* tail_to = input.data + blocks * kRefreshBlockBytes;
    for (size_t e = 0; e < tail_elements; ++e) {
      std::memcpy(tail_to + e * element_bytes, tail_from + ((e + rotation) % tail_elements) * element_bytes,
                  element_bytes);
    }
  }
}

void TimingBench::Rewrite(size_t set_index) {
  for (const Buffer& input : sets_.at(set_index).inputs) {
    if (input.draw.held) continue;
    auto* bytes = reinterpret_cast<volatile unsigned char*>(input.data);
    const size_t count = input.count * DTypeBytes(input.dtype);
    for (size_t i = 0; i < count; i += 64) bytes[i] = bytes[i];
  }
}

void TimingBench::Evict(size_t set_index) const {
  // On this thread alone: flushed from two threads at once, both sides' cold calls read 20%
  // faster (a 2-core VM), as after a refresh on two threads: what runs between the calls must
  // leave the machine as a single-threaded worker does.
  const SetBuffers& set = sets_.at(set_index);
  for (const auto* buffers : {&set.inputs, &set.candidate_outputs, &set.baseline_outputs}) {
    for (const Buffer& buffer : *buffers) EvictFromCaches(buffer.data, buffer.count * DTypeBytes(buffer.dtype));
  }
}

Result<double> TimingBench::Call(const std::string& target, size_t set_index, size_t round,
                                 bool tweak) {
  if (set_index >= sets_.size()) return MakeError(ErrorKind::kProtocol, "no timing set {}", set_index);
  SetBuffers& set = sets_[set_index];
  if (tweak) {
    for (size_t i = 0; i < set.inputs.size(); ++i) {
      const Buffer& input = set.inputs[i];
      if (input.draw.held) continue;  // a model's weights stay as they are between calls
      const size_t element_bytes = DTypeBytes(input.dtype);
      for (size_t m = 0; m < mutations_ && input.count > 0; ++m) {
        const uint64_t index = round * mutations_ + m;
        const size_t position = MixCounter(seed_, kMutationPositionStream + i, index) % input.count;
        float value;
        FillInput(&value, 1, input.draw, distribution_, MixCounter(seed_, kMutationValueStream + i, index), 0);
        StoreAs(input.dtype, &value, 1, input.data + position * element_bytes);
      }
    }
  }
  KernelEntry entry = nullptr;
  void* const* pointers = nullptr;
  if (target == "candidate") {
    entry = candidate_;
    pointers = set.candidate_pointers.data();
  } else if (target == "baseline") {
    entry = baseline_;
    pointers = set.baseline_pointers.data();
  } else if (target != "none") {
    return MakeError(ErrorKind::kProtocol, "unknown timing target '{}'", target);
  }
  const auto start = Clock::now();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (entry != nullptr) entry(pointers, layout_.scalars.data());
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  return static_cast<double>(elapsed);
}

bool TimingBench::HasFinish(const std::string& target) const {
  return (target == "baseline" ? baseline_finish_ : target == "candidate" ? candidate_finish_ : nullptr) != nullptr;
}

void TimingBench::Finish(const std::string& target) const {
  if (target == "baseline" && baseline_finish_ != nullptr) baseline_finish_(nullptr);
  if (target == "candidate" && candidate_finish_ != nullptr) candidate_finish_(nullptr);
}

Comparison TimingBench::Check(size_t set_index) const {
  const SetBuffers& set = sets_.at(set_index);
  // Both sides are fp32 here, so each may carry its own rounding: twice the bounds.
  const Tolerance doubled{2 * tolerance_.norm, 2 * tolerance_.elem};
  Comparison worst;
  worst.passed = true;
  for (size_t o = 0; o < set.candidate_outputs.size(); ++o) {
    std::vector<float> got_storage;
    std::vector<float> expected_storage;
    const float* got = AsFloats(set.candidate_outputs[o], got_storage);
    const float* expected = AsFloats(set.baseline_outputs[o], expected_storage);
    // A 16-bit output carries one rounding to its type on each side.
    const double rounding = DTypeBytes(set.candidate_outputs[o].dtype) == 2
                                ? DTypeEpsilon(set.candidate_outputs[o].dtype) : 0.0;
    const Tolerance bounds{doubled.norm + 2 * rounding, doubled.elem + 2 * rounding};
    Comparison comparison = CompareWithReference(got, expected, set.candidate_outputs[o].count, bounds,
                                                 2 * epsilon_, accumulation_,
                                                 2 * epsilon_ * input_rms_);
    if (!comparison.passed) return comparison;
  }
  return worst;
}

std::vector<TimingBench::HostRegion> TimingBench::Regions(size_t set) const {
  std::vector<HostRegion> regions;
  const SetBuffers& buffers = sets_.at(set);
  for (const auto& input : buffers.inputs) regions.push_back({input.data, input.count * DTypeBytes(input.dtype), false});
  for (const auto* outputs : {&buffers.candidate_outputs, &buffers.baseline_outputs}) {
    for (const auto& output : *outputs) regions.push_back({output.data, output.count * DTypeBytes(output.dtype), true});
  }
  return regions;
}

}  // namespace ksmith
