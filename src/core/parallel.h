// Host memory work spread over the cores: at a problem's own sizes a case is gigabytes, and one
// thread copying, filling or comparing them is most of a verdict (docs/benchmarks.md, "Where a
// full-size verdict's 319 s goes").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ksmith {

/// Below this many bytes the work stays on the calling thread: starting threads costs more.
inline constexpr size_t kParallelMinBytes = size_t{32} << 20;

/// Threads the helpers below use at most, the caller's included (at most 8: the copies are
/// bound by memory bandwidth well before that).
size_t ParallelThreads();

/// Runs body(task) for every task in [0, tasks), on up to ParallelThreads() threads (the
/// caller's among them); returns when all have run. Which thread runs a task is not fixed, so
/// a body that combines results writes them per task and the caller combines them in order.
void ParallelFor(size_t tasks, const std::function<void(size_t task)>& body);

/// memcpy, spread over threads when `bytes` is large.
void ParallelCopy(void* destination, const void* source, size_t bytes);

/// Runs body(begin, end) over [0, bytes) in pieces of 16 MiB (each begins at a multiple of 16 MiB,
/// so a 4-byte pattern written per piece lines up), spread over threads when `bytes` is large and
/// in one call on this thread otherwise; nothing for 0 bytes.
void ParallelChunks(size_t bytes, const std::function<void(size_t begin, size_t end)>& body);

/// Asks the kernel for the pages of [data, data + bytes) now, on several threads: memory fresh
/// from the allocator otherwise faults in page by page on the one thread that first writes it
/// (about 1.4 GB/s on an H200 host, seconds a buffer at a problem's own sizes). Only the whole
/// pages inside the range; does nothing below kParallelMinBytes or where the kernel cannot
/// (before Linux 5.14), which costs only the time it saves.
void PrefaultPages(void* data, size_t bytes);

/// `buffer` (a std::string or std::vector) resized to `count` elements, its new pages faulted
/// in on several threads first when it must grow: what a resize then writes runs at memory speed.
template <typename Buffer>
void ResizeFaultedIn(Buffer& buffer, size_t count) {
  if (buffer.size() == count) return;
  if (buffer.capacity() < count) {
    Buffer grown;
    grown.reserve(count);  // nothing of `buffer` is kept: every caller overwrites every element
    PrefaultPages(grown.data(), count * sizeof(*grown.data()));
    buffer = std::move(grown);
  }
  buffer.resize(count);
}

/// A 64-bit fingerprint of `bytes` bytes at `data`, computed in pieces on several threads: equal
/// for equal bytes; a change of one 8-byte word always changes it, and other changes (words
/// swapped, scattered writes) leave it equal only by a chance of the order of 2^-64. For
/// checking that memory stayed as it was without keeping a copy of it (not against an adversary).
uint64_t ParallelFingerprint(const void* data, size_t bytes);

/// The first offset where `a` and `b` (both `bytes` long) differ, or `bytes` when they are equal.
size_t ParallelFirstDifference(const void* a, const void* b, size_t bytes);

}  // namespace ksmith
