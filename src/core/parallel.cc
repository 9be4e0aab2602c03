#include "core/parallel.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

// Linux 5.14's; headers older than that lack the name, and such a kernel refuses the advice.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace ksmith {
namespace {

// Pieces of a large buffer: big enough that a thread's start is noise, small enough that eight
// threads share a few gigabytes evenly.
constexpr size_t kPieceBytes = size_t{16} << 20;

size_t Pieces(size_t bytes) { return (bytes + kPieceBytes - 1) / kPieceBytes; }

}  // namespace

size_t ParallelThreads() {
  static const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  return threads;
}

void ParallelFor(size_t tasks, const std::function<void(size_t task)>& body) {
  const size_t threads = std::min(tasks, ParallelThreads());
  if (threads <= 1) {
    for (size_t task = 0; task < tasks; ++task) body(task);
    return;
  }
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t task = next++; task < tasks; task = next++) body(task);
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  try {
    for (size_t i = 1; i < threads; ++i) helpers.emplace_back(work);
  } catch (const std::system_error&) {
    // No thread to be had (a process limit, many verdicts at once): fewer threads do every task.
  }
  work();
  for (auto& helper : helpers) helper.join();
}

void ParallelChunks(size_t bytes, const std::function<void(size_t begin, size_t end)>& body) {
  if (bytes < kParallelMinBytes) {
    if (bytes > 0) body(0, bytes);
    return;
  }
  ParallelFor(Pieces(bytes), [&](size_t piece) {
    const size_t begin = piece * kPieceBytes;
    body(begin, std::min(bytes, begin + kPieceBytes));
  });
}

void ParallelCopy(void* destination, const void* source, size_t bytes) {
  auto* to = static_cast<unsigned char*>(destination);
  const auto* from = static_cast<const unsigned char*>(source);
  ParallelChunks(bytes, [&](size_t begin, size_t end) { std::memcpy(to + begin, from + begin, end - begin); });
}

namespace {

// A piece's fingerprint: four lanes of multiply-and-rotate over 8-byte words (so that a word's
// position counts, not only its value), folded with the piece's length and the tail's bytes.
uint64_t PieceFingerprint(const unsigned char* data, size_t bytes) {
  constexpr uint64_t kMultiplier = 0x9e3779b97f4a7c15ull;
  uint64_t lanes[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
  size_t offset = 0;
  for (; offset + 32 <= bytes; offset += 32) {
    for (int lane = 0; lane < 4; ++lane) {
      uint64_t word;
      std::memcpy(&word, data + offset + 8 * lane, 8);
      lanes[lane] = std::rotl((lanes[lane] ^ word) * kMultiplier, 29);
    }
  }
  uint64_t tail = bytes;
  for (; offset < bytes; ++offset) tail = std::rotl((tail ^ data[offset]) * kMultiplier, 29);
  uint64_t folded = tail;
  for (const uint64_t lane : lanes) folded = std::rotl((folded ^ lane) * kMultiplier, 31);
  return folded;
}

}  // namespace

uint64_t ParallelFingerprint(const void* data, size_t bytes) {
  const auto* from = static_cast<const unsigned char*>(data);
  // Fixed pieces, whatever the thread count: the same bytes give the same fingerprint anywhere.
  std::vector<uint64_t> pieces(std::max<size_t>(1, Pieces(bytes)), 0);
  ParallelFor(pieces.size(), [&](size_t piece) {
    const size_t begin = piece * kPieceBytes;
    pieces[piece] = PieceFingerprint(from + begin, std::min(bytes, begin + kPieceBytes) - begin);
  });
  uint64_t folded = bytes;
  for (const uint64_t piece : pieces) folded = std::rotl((folded ^ piece) * 0xff51afd7ed558ccdull, 33);
  return folded;
}

void PrefaultPages(void* data, size_t bytes) {
  if (bytes < kParallelMinBytes) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end <= begin) return;
  const size_t span = end - begin;
  ParallelChunks(span, [begin](size_t offset, size_t stop) {  // offsets: multiples of the page size
    // An error (an old kernel, memory the kernel will not populate) leaves the faults to the writes.
    (void)madvise(reinterpret_cast<void*>(begin + offset), stop - offset, MADV_POPULATE_WRITE);
  });
}

size_t ParallelFirstDifference(const void* a, const void* b, size_t bytes) {
  const auto* left = static_cast<const unsigned char*>(a);
  const auto* right = static_cast<const unsigned char*>(b);
  std::atomic<size_t> first{bytes};
  ParallelChunks(bytes, [&](size_t begin, size_t end) {
    if (std::memcmp(left + begin, right + begin, end - begin) == 0) return;
    size_t i = begin;
    while (left[i] == right[i]) ++i;
    // The earliest of the pieces' first differences, whichever thread finds its own first.
    for (size_t seen = first.load(); i < seen && !first.compare_exchange_weak(seen, i);) {
    }
  });
  return first.load();
}

}  // namespace ksmith
