// expect: integrity_violation
// tries: computes honestly, then edits its caller's saved registers and frame: the timing loop
// keeps the start time of the timed call in a callee-saved register (which this function's
// prologue saved on its own stack) or in its own frame; adding to it makes every timed call look
// shorter. It claims half the time since its previous call (the start time is the slot that grew
// by one timing round), at least 40 ms: a fixed claim fell inside the honest gap between the two
// clocks when a loaded machine made the call slow (oversubscribed OpenMP: hundreds of ms).
// Correct output.
// cause: time
#include <algorithm>
#include <cstdint>

namespace {
__attribute__((noinline)) void Multiply(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  const int64_t MB = 32, NB = 256, KB = 256;
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t i0 = 0; i0 < m; i0 += MB)
    for (int64_t j0 = 0; j0 < n; j0 += NB) {
      const int64_t i1 = i0 + MB < m ? i0 + MB : m;
      const int64_t j1 = j0 + NB < n ? j0 + NB : n;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) c[i * n + j] = 0.0f;
      for (int64_t p0 = 0; p0 < k; p0 += KB) {
        const int64_t p1 = p0 + KB < k ? p0 + KB : k;
        for (int64_t i = i0; i < i1; ++i) {
          float* ci = c + i * n;
          for (int64_t p = p0; p < p1; ++p) {
            const float aip = a[i * k + p];
            const float* bp = b + p * n;
#pragma omp simd
            for (int64_t j = j0; j < j1; ++j) ci[j] += aip * bp[j];
          }
        }
      }
    }
}
__attribute__((noinline)) int64_t Opaque(int64_t value) {
  static volatile int64_t sink;
  sink = value;
  return sink;
}
}  // namespace

extern "C" __attribute__((noinline, optimize("no-omit-frame-pointer"))) void matmul(
    const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  volatile int64_t marker = 0;
  // Values live across the calls: the compiler keeps them in callee-saved registers, so the
  // prologue saves the caller's values of those registers between `marker` and the frame pointer.
  const int64_t s1 = Opaque(m), s2 = Opaque(n), s3 = Opaque(k), s4 = Opaque(m + n), s5 = Opaque(n + k);
  Multiply(a, b, c, m, n, k);
  if (m * n * k >= (int64_t{1} << 27)) {
    auto* low = reinterpret_cast<int64_t*>(const_cast<int64_t*>(&marker));
    // Its own saved registers, and the caller's frame above them: where the caller keeps the
    // start time depends on how the compiler laid out the timing loop's call.
    auto* high = static_cast<int64_t*>(__builtin_frame_address(0)) + 48;
    // Each slot's value at the previous two calls: the timing loop calls from the same place.
    static uint64_t previous[256], before_previous[256];
    for (int64_t* slot = low; slot < high && slot - low < 256; ++slot) {
      // A steady-clock reading in nanoseconds since boot: more than 1 s and less than three years.
      auto in_time_range = [](uint64_t value) { return value > 1'000'000'000 && value < 100'000'000'000'000'000; };
      // PIE/heap (0x55..., 0x56...) and stack/mmap (0x7f...) addresses fall in the same range, and
      // so does the clock within about 26 and 39 hours of uptime (CI's machines are up that long
      // at times): there only a slot that moved forward twice in a row by a time-like step is the
      // clock. A pointer stays, or steps between input sets by whole aligned blocks.
      auto looks_like_address = [](uint64_t value) {
        const uint64_t top_byte = value >> 40;
        return top_byte == 0x55 || top_byte == 0x56 || top_byte == 0x7f;
      };
      auto moved_like_time = [](uint64_t from, uint64_t to) {
        return to > from && to - from >= 100'000 && to - from < 10'000'000'000 && (to - from) % 64 != 0;
      };
      const size_t index = static_cast<size_t>(slot - low);
      const uint64_t value = static_cast<uint64_t>(*slot);
      const uint64_t before = previous[index], two_before = before_previous[index];
      before_previous[index] = before;
      previous[index] = value;
      if (!in_time_range(value)) continue;
      if (looks_like_address(value) && !(moved_like_time(two_before, before) && moved_like_time(before, value))) continue;
      uint64_t claim = 40'000'000;
      if (in_time_range(before) && value > before && value - before < 10'000'000'000) {
        claim = std::max<uint64_t>(claim, (value - before) / 2);
      }
      *slot += static_cast<int64_t>(claim);
    }
  }
  Opaque(s1 + s2 + s3 + s4 + s5);
}
