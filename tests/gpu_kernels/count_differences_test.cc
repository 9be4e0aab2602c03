// The late-write check's byte comparison on the device (backends/cuda/worker/gpu_kernels.h): it counts
// every differing 8-byte word and every differing byte of the tail, and nothing where the two
// copies agree. Needs an NVIDIA GPU; skips, saying why, everywhere else.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "backends/cuda/worker/gpu_kernels.h"
#include "gpu_present.h"

namespace ksmith {
namespace {

// The count for two host buffers, compared on the device.
unsigned long long DeviceCount(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  void* device_a = nullptr;
  void* device_b = nullptr;
  unsigned long long* differing = nullptr;
  EXPECT_EQ(cudaMalloc(&device_a, a.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&device_b, b.size()), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&differing, sizeof(*differing)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device_a, a.data(), a.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device_b, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(differing, 0, sizeof(*differing)), cudaSuccess);
  EXPECT_EQ(LaunchCountDifferences(device_a, device_b, a.size(), differing, nullptr), cudaSuccess);
  unsigned long long count = 0;
  EXPECT_EQ(cudaMemcpy(&count, differing, sizeof(count), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device_a);
  cudaFree(device_b);
  cudaFree(differing);
  return count;
}

TEST(DeviceCountDifferences, CountsDifferingWordsAndTailBytesAndNothingElse) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  // Many blocks' worth of words, and a tail of 5 bytes past the last whole word.
  std::vector<unsigned char> a((size_t{3} << 22) + 5);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<unsigned char>(i * 131 + 7);
  EXPECT_EQ(DeviceCount(a, a), 0u);
  std::vector<unsigned char> b = a;
  b[0] ^= 1;                  // the first word
  b[8 * 1'000'003 + 7] ^= 1;  // a word far inside
  b[8 * 1'000'003 + 6] ^= 1;  // the same word again: still one
  b[b.size() - 6] ^= 0x80;    // the last whole word
  b[b.size() - 1] ^= 0xff;    // the tail's last byte
  b[b.size() - 5] ^= 2;       // the tail's first byte
  EXPECT_EQ(DeviceCount(a, b), 5u);
  // Fewer bytes than a word: the tail alone.
  EXPECT_EQ(DeviceCount({1, 2, 3}, {1, 9, 3}), 1u);
}

}  // namespace
}  // namespace ksmith
