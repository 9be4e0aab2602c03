// What a backend's traits decide in the service's set-up: how many verifications a device runs by
// default, and whether `--devices` means anything for it.
#include "service/service_setup.h"

#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"

namespace ksmith {
namespace {

TEST(ServiceSetup, EachBackendSaysHowManyVerificationsADeviceRunsByDefault) {
  EXPECT_EQ(DefaultVerificationWorkers(CpuBackendTraits()), 1u);   // timing takes every core
  EXPECT_EQ(DefaultVerificationWorkers(CudaBackendTraits()), 3u);  // checks overlap one timing
  BackendTraits unset;
  unset.default_verifications_per_device = 0;
  EXPECT_EQ(DefaultVerificationWorkers(unset), 1u);
}

TEST(ServiceSetup, DevicesAreRefusedForABackendWithOnlyThisMachine) {
  LocalServiceRequest request;
  request.backend = "cpu";
  request.devices = {"0", "1"};
  auto service = StartLocalService(request);
  ASSERT_FALSE(service.ok());
  EXPECT_EQ(service.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(service.error().message.find("--devices is for GPU backends"), std::string::npos)
      << service.error().message;
  EXPECT_FALSE(CpuBackendTraits().selects_devices);
  EXPECT_TRUE(CudaBackendTraits().selects_devices);
}

}  // namespace
}  // namespace ksmith
