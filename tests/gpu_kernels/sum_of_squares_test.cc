// The timing loop's output scale on the device (backends/cuda/worker/gpu_kernels.h's LaunchSumOfSquares):
// the root mean square the host's RootMeanSquare gives, non-finite elements left out, for fp32,
// fp16 and bf16, across many blocks. Needs an NVIDIA GPU; skips, saying why, everywhere else.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "backends/cuda/worker/gpu_kernels.h"
#include "gpu_present.h"
#include "tensor/compare.h"

namespace ksmith {
namespace {

// The device's sum of squares of `elements` (already in the element type's bytes).
template <typename Element>
double DeviceSumOfSquares(GpuElement element, const std::vector<Element>& elements) {
  void* data = nullptr;
  double* sum = nullptr;
  EXPECT_EQ(cudaMalloc(&data, elements.size() * sizeof(Element)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&sum, sizeof(double)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(data, elements.data(), elements.size() * sizeof(Element), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(sum, 0, sizeof(double)), cudaSuccess);
  EXPECT_EQ(LaunchSumOfSquares(element, data, elements.size(), sum, nullptr), cudaSuccess);
  double result = 0;
  EXPECT_EQ(cudaMemcpy(&result, sum, sizeof(result), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(data);
  cudaFree(sum);
  return result;
}

TEST(DeviceSumOfSquares, GivesTheHostsRootMeanSquareWithoutNonFiniteElements) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  // More elements than 4096 blocks of 256 threads cover in one pass, and values of both signs.
  const size_t count = (size_t{1} << 21) + 77;
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = std::sin(static_cast<float>(i) * 0.37f) * (1.0f + (i % 13));
  values[5] = std::numeric_limits<float>::quiet_NaN();
  values[count - 1] = std::numeric_limits<float>::infinity();
  const double host_rms = RootMeanSquare(values.data(), count);
  ASSERT_GT(host_rms, 1.0);
  EXPECT_NEAR(std::sqrt(DeviceSumOfSquares(GpuElement::kFloat32, values) / count), host_rms, 1e-9 * host_rms);

  std::vector<__half> halves(count);
  std::vector<__nv_bfloat16> bfloats(count);
  std::vector<float> half_values(count), bfloat_values(count);
  for (size_t i = 0; i < count; ++i) {
    halves[i] = __float2half(values[i]);
    bfloats[i] = __float2bfloat16(values[i]);
    half_values[i] = __half2float(halves[i]);
    bfloat_values[i] = __bfloat162float(bfloats[i]);
  }
  const double half_rms = RootMeanSquare(half_values.data(), count);
  const double bfloat_rms = RootMeanSquare(bfloat_values.data(), count);
  EXPECT_NEAR(std::sqrt(DeviceSumOfSquares(GpuElement::kFloat16, halves) / count), half_rms, 1e-9 * half_rms);
  EXPECT_NEAR(std::sqrt(DeviceSumOfSquares(GpuElement::kBFloat16, bfloats) / count), bfloat_rms, 1e-9 * bfloat_rms);
  // Nothing to sum: zero.
  EXPECT_EQ(DeviceSumOfSquares(GpuElement::kFloat32, std::vector<float>{}), 0.0);
}

}  // namespace
}  // namespace ksmith
