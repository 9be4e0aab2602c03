#include "core/parallel.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
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

void ParallelCopy(void* destination, const void* source, size_t bytes) {
  if (bytes < kParallelMinBytes) {
    if (bytes > 0) std::memcpy(destination, source, bytes);
    return;
  }
  auto* to = static_cast<unsigned char*>(destination);
  const auto* from = static_cast<const unsigned char*>(source);
  ParallelFor(Pieces(bytes), [&](size_t piece) {
    const size_t begin = piece * kPieceBytes;
    std::memcpy(to + begin, from + begin, std::min(kPieceBytes, bytes - begin));
  });
}

void ParallelFillPattern(unsigned char* data, size_t size, uint32_t pattern) {
  // kPieceBytes is a multiple of 4, so every piece starts at the pattern's first byte.
  ParallelFor(size < kParallelMinBytes ? (size > 0 ? 1 : 0) : Pieces(size), [&](size_t piece) {
    const size_t begin = piece * kPieceBytes;
    const size_t end = size < kParallelMinBytes ? size : std::min(size, begin + kPieceBytes);
    unsigned char bytes[4];
    std::memcpy(bytes, &pattern, 4);
    size_t i = begin;
    for (; i + 4 <= end; i += 4) std::memcpy(data + i, &pattern, 4);
    for (; i < end; ++i) data[i] = bytes[i % 4];
  });
}

void PrefaultPages(void* data, size_t bytes) {
  if (bytes < kParallelMinBytes) return;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end <= begin) return;
  const size_t span = end - begin;
  ParallelFor(Pieces(span), [&](size_t piece) {
    const size_t offset = piece * kPieceBytes;  // a multiple of the page size
    // An error (an old kernel, memory the kernel will not populate) leaves the faults to the writes.
    (void)madvise(reinterpret_cast<void*>(begin + offset), std::min(kPieceBytes, span - offset), MADV_POPULATE_WRITE);
  });
}

size_t ParallelFirstDifference(const void* a, const void* b, size_t bytes) {
  const auto* left = static_cast<const unsigned char*>(a);
  const auto* right = static_cast<const unsigned char*>(b);
  const auto first_in = [&](size_t begin, size_t end) {
    if (std::memcmp(left + begin, right + begin, end - begin) == 0) return end;
    size_t i = begin;
    while (left[i] == right[i]) ++i;
    return i;
  };
  if (bytes < kParallelMinBytes) return bytes == 0 ? 0 : first_in(0, bytes);
  const size_t pieces = Pieces(bytes);
  std::vector<size_t> first(pieces);
  ParallelFor(pieces, [&](size_t piece) {
    const size_t begin = piece * kPieceBytes;
    const size_t end = std::min(bytes, begin + kPieceBytes);
    const size_t found = first_in(begin, end);
    first[piece] = found == end ? bytes : found;
  });
  return *std::min_element(first.begin(), first.end());
}

}  // namespace ksmith
