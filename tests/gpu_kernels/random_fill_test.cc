// The worker's device-side input generator against the host's (tensor/random.h): the same
// values, element for element, for every distribution, so timed rounds on the GPU draw from the
// distributions the task declares, integer inputs from their range; different seeds and streams
// give different inputs. Needs an
// NVIDIA GPU; skips, saying why, everywhere else.
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "backends/cuda/worker/gpu_kernels.h"
#include "gpu_present.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

constexpr uint64_t kCount = 100'001;

// The device's values, as the host reads them back.
std::vector<uint16_t> DeviceBits16(GpuElement element, Distribution distribution, uint64_t seed, uint64_t stream) {
  void* data = nullptr;
  EXPECT_EQ(cudaMalloc(&data, kCount * 2), cudaSuccess);
  EXPECT_EQ(LaunchRandomFill(element, data, kCount, static_cast<int>(distribution), seed, stream, nullptr), cudaSuccess);
  std::vector<uint16_t> bits(kCount);
  EXPECT_EQ(cudaMemcpy(bits.data(), data, kCount * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(data);
  return bits;
}

std::vector<float> DeviceFloats(Distribution distribution, uint64_t seed, uint64_t stream) {
  void* data = nullptr;
  EXPECT_EQ(cudaMalloc(&data, kCount * 4), cudaSuccess);
  EXPECT_EQ(LaunchRandomFill(GpuElement::kFloat32, data, kCount, static_cast<int>(distribution), seed, stream, nullptr),
            cudaSuccess);
  std::vector<float> values(kCount);
  EXPECT_EQ(cudaMemcpy(values.data(), data, kCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(data);
  return values;
}

class DeviceRandomFill : public ::testing::TestWithParam<Distribution> {
 protected:
  void SetUp() override {
    if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(DeviceRandomFill, AnInputsOwnDrawMatchesTheHostsFillInput) {
  // A parameter's draw (an imported model's weight: its own distribution, scale and offset) and a
  // domain restriction: the device applies them as FillInput does, bit for bit.
  const Distribution distribution = GetParam();
  for (const InputDraw& draw : {InputDraw{std::nullopt, 0.0625, 0.0, false}, InputDraw{std::nullopt, 0.5, 1.0, false},
                                InputDraw{std::nullopt, 1.0, 0.0, true}}) {
    std::vector<float> host(kCount);
    FillInput(host.data(), kCount, draw, distribution, 99, 3);
    void* data = nullptr;
    ASSERT_EQ(cudaMalloc(&data, kCount * 4), cudaSuccess);
    ASSERT_EQ(LaunchRandomFill(GpuElement::kFloat32, data, kCount, static_cast<int>(distribution), 99, 3, nullptr,
                               draw.nonnegative, static_cast<float>(draw.scale), static_cast<float>(draw.offset)),
              cudaSuccess);
    std::vector<float> device(kCount);
    ASSERT_EQ(cudaMemcpy(device.data(), data, kCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(data);
    size_t differing = 0;
    for (uint64_t i = 0; i < kCount; ++i) differing += std::bit_cast<uint32_t>(device[i]) != std::bit_cast<uint32_t>(host[i]);
    EXPECT_EQ(differing, 0u) << DistributionName(distribution) << " scale " << draw.scale << " offset " << draw.offset;
  }
}

TEST_P(DeviceRandomFill, MatchesTheHostGeneratorValueForValue) {
  const Distribution distribution = GetParam();
  std::vector<float> host(kCount);
  FillRandom(host.data(), kCount, distribution, 1234, 7);
  const std::vector<float> device = DeviceFloats(distribution, 1234, 7);
  // Every step is exact or one IEEE rounding on both sides (tensor/normal_sample.h): the same bits.
  size_t differing = 0;
  for (uint64_t i = 0; i < kCount; ++i) differing += std::bit_cast<uint32_t>(device[i]) != std::bit_cast<uint32_t>(host[i]);
  EXPECT_EQ(differing, 0u) << DistributionName(distribution);

  // 16-bit inputs: the same values rounded once, to nearest even, on both sides.
  for (const auto& [element, dtype] : {std::pair{GpuElement::kBFloat16, DType::kBFloat16},
                                       std::pair{GpuElement::kFloat16, DType::kFloat16}}) {
    std::vector<uint16_t> expected(kCount);
    StoreAs(dtype, host.data(), kCount, expected.data());
    const std::vector<uint16_t> bits = DeviceBits16(element, distribution, 1234, 7);
    size_t off = 0;
    for (uint64_t i = 0; i < kCount; ++i) off += bits[i] != expected[i];
    EXPECT_EQ(off, 0u) << DistributionName(distribution) << (dtype == DType::kBFloat16 ? " bf16" : " fp16");
  }
}

TEST_P(DeviceRandomFill, EverySeedAndStreamGivesOtherValues) {
  const Distribution distribution = GetParam();
  const std::vector<float> first = DeviceFloats(distribution, 1, 0);
  const double allowed_same = distribution == Distribution::kTies ? 0.2 : 0.001;  // ties draws from 9 values
  for (const auto& other : {DeviceFloats(distribution, 2, 0), DeviceFloats(distribution, 1, 1)}) {
    size_t same = 0;
    for (uint64_t i = 0; i < kCount; ++i) same += first[i] == other[i];
    EXPECT_LT(static_cast<double>(same), allowed_same * kCount) << DistributionName(distribution);
  }
}

TEST(DeviceIntegerFill, MatchesTheHostsIntegerDrawValueForValue) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  // Labels of 4096 classes, and a mask of 0 and 1 drawn from [0, 2).
  for (const IntegerRange range : {IntegerRange{0, 4096}, IntegerRange{0, 2}, IntegerRange{-3, 11}}) {
    InputDraw draw;
    draw.integers = range;
    std::vector<float> host(kCount);
    FillInput(host.data(), kCount, draw, Distribution::kNormal, 77, 5);
    std::vector<int32_t> expected(kCount);
    StoreAs(DType::kInt32, host.data(), kCount, expected.data());
    void* data = nullptr;
    ASSERT_EQ(cudaMalloc(&data, kCount * 4), cudaSuccess);
    ASSERT_EQ(LaunchIntegerFill(data, kCount, 77, 5, range.low, range.high, nullptr), cudaSuccess);
    std::vector<int32_t> device(kCount);
    ASSERT_EQ(cudaMemcpy(device.data(), data, kCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(data);
    EXPECT_EQ(device, expected) << "[" << range.low << ", " << range.high << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Distributions, DeviceRandomFill,
                         ::testing::Values(Distribution::kNormal, Distribution::kUniform, Distribution::kLarge,
                                           Distribution::kPositive, Distribution::kTies),
                         [](const auto& info) { return std::string(DistributionName(info.param)); });

}  // namespace
}  // namespace ksmith
