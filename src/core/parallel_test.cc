// The host's memory helpers: the same bytes and answers as their one-thread forms, at sizes that
// spread over threads and at sizes that do not.
#include "core/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace ksmith {
namespace {

// Bytes that differ from their neighbours, so that a piece copied to the wrong place shows.
std::vector<unsigned char> Counting(size_t bytes) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>((i * 131) ^ (i >> 11));
  return data;
}

TEST(ParallelFor, RunsEveryTaskOnce) {
  std::vector<std::atomic<int>> runs(1000);
  ParallelFor(runs.size(), [&](size_t task) { ++runs[task]; });
  for (const auto& count : runs) EXPECT_EQ(count.load(), 1);
  ParallelFor(0, [](size_t) { FAIL() << "no task to run"; });
}

TEST(ParallelCopy, CopiesEveryByteOfALargeAndASmallBuffer) {
  for (const size_t bytes : {size_t{1000}, kParallelMinBytes * 3 + 12345}) {
    const auto source = Counting(bytes);
    std::vector<unsigned char> copy(bytes + 1, 0xEE);
    ParallelCopy(copy.data(), source.data(), bytes);
    EXPECT_EQ(std::memcmp(copy.data(), source.data(), bytes), 0) << bytes;
    EXPECT_EQ(copy[bytes], 0xEE) << "wrote past the end at " << bytes;
  }
}

TEST(ParallelChunks, CoversEveryByteOnceInPiecesThatKeepAFourBytePatternAligned) {
  for (const size_t bytes : {size_t{0}, size_t{7}, kParallelMinBytes * 2 + 3}) {
    std::vector<std::atomic<int>> covered((bytes + 4095) / 4096 + 1);
    std::atomic<size_t> total{0};
    std::atomic<int> misaligned{0};
    ParallelChunks(bytes, [&](size_t begin, size_t end) {
      misaligned += begin % 4 != 0;
      total += end - begin;
      for (size_t page = begin / 4096; page * 4096 < end; ++page) ++covered[page];
    });
    EXPECT_EQ(total.load(), bytes);
    EXPECT_EQ(misaligned.load(), 0);
    for (size_t page = 0; page * 4096 < bytes; ++page) EXPECT_EQ(covered[page].load(), 1) << page << " of " << bytes;
  }
}

TEST(ParallelFirstDifference, FindsTheFirstChangeWhereverItIs) {
  const size_t bytes = kParallelMinBytes * 3 + 5;
  const auto a = Counting(bytes);
  auto b = a;
  EXPECT_EQ(ParallelFirstDifference(a.data(), b.data(), bytes), bytes);
  // Two changes in different pieces: the earlier is the answer whichever thread finds it first.
  b[bytes - 2] ^= 1;
  b[kParallelMinBytes + 77] ^= 1;
  EXPECT_EQ(ParallelFirstDifference(a.data(), b.data(), bytes), kParallelMinBytes + 77);
  b[3] ^= 1;
  EXPECT_EQ(ParallelFirstDifference(a.data(), b.data(), bytes), 3u);
  EXPECT_EQ(ParallelFirstDifference(a.data(), b.data(), 3), 3u);  // small and equal
  EXPECT_EQ(ParallelFirstDifference(a.data(), b.data(), 0), 0u);
}

TEST(ParallelFingerprint, ChangesWithAnyByteAndWithTheOrderOfWords) {
  const size_t bytes = (size_t{16} << 20) * 2 + 13;  // three pieces, the last ending in a tail
  const auto a = Counting(bytes);
  const uint64_t original = ParallelFingerprint(a.data(), bytes);
  EXPECT_EQ(ParallelFingerprint(a.data(), bytes), original);
  auto b = a;
  for (const size_t at : {size_t{0}, size_t{31}, (size_t{16} << 20) + 4097, bytes - 13, bytes - 1}) {
    b[at] ^= 0x40;
    EXPECT_NE(ParallelFingerprint(b.data(), bytes), original) << "byte " << at;
    b[at] ^= 0x40;
  }
  EXPECT_EQ(ParallelFingerprint(b.data(), bytes), original);
  // Two words swapped: the same values, elsewhere.
  std::swap_ranges(b.begin(), b.begin() + 8, b.begin() + 64);
  EXPECT_NE(ParallelFingerprint(b.data(), bytes), original);
  // The length counts, even where the extra bytes are zeros.
  const std::vector<unsigned char> zeros(64, 0);
  EXPECT_NE(ParallelFingerprint(zeros.data(), 32), ParallelFingerprint(zeros.data(), 64));
  EXPECT_NE(ParallelFingerprint(zeros.data(), 0), ParallelFingerprint(zeros.data(), 1));
}

TEST(ResizeFaultedIn, GrowsToTheSizeAndKeepsMemoryThatFits) {
  std::vector<double> values;
  const size_t count = kParallelMinBytes / sizeof(double) + 1000;  // large enough to be faulted in
  ResizeFaultedIn(values, count);
  ASSERT_EQ(values.size(), count);
  std::fill(values.begin(), values.end(), 2.5);  // every page writable
  const double* memory = values.data();
  ResizeFaultedIn(values, count / 2);  // fits: the same memory, no new allocation
  EXPECT_EQ(values.size(), count / 2);
  EXPECT_EQ(values.data(), memory);
  std::string text;
  ResizeFaultedIn(text, 3);
  EXPECT_EQ(text.size(), 3u);
}

}  // namespace
}  // namespace ksmith
