#include "binary/launch_origin.h"

#include <dlfcn.h>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

std::string LibraryOf(const void* address) {
  Dl_info info{};
  return ::dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

// Called from this test (the executable), the first library outside it up the stack is the C
// library that started main().
TEST(LaunchOrigin, TheCallerIsTheFirstLibraryOutsideTheExecutable) {
  const LaunchOrigin origin({});
  const std::string caller = origin.Caller();
  EXPECT_EQ(caller, LibraryOf(reinterpret_cast<const void*>(&::dladdr))) << caller;
}

// Named as plumbing, the C library is passed over: nothing on this stack is anyone's launch.
TEST(LaunchOrigin, PlumbingIsPassedOver) {
  const std::string libc = LibraryOf(reinterpret_cast<const void*>(&::dladdr));
  ASSERT_FALSE(libc.empty());
  const std::string name = libc.substr(libc.rfind('/') + 1);
  const LaunchOrigin origin({name.substr(0, name.find('.') + 1), "ld-linux"});
  EXPECT_EQ(origin.Caller(), "");
}

TEST(IsUnder, AFolderHoldsItsFilesAndNotItsNamesakes) {
  EXPECT_TRUE(IsUnder("/cache/build/ext.so", {"/cache/build"}));
  EXPECT_TRUE(IsUnder("/cache/build/triton/x/launcher.so", {"/other", "/cache/build/"}));
  EXPECT_TRUE(IsUnder("/objects/candidate.so", {"/objects/candidate.so"}));
  EXPECT_FALSE(IsUnder("/cache/build2/ext.so", {"/cache/build"}));
  EXPECT_FALSE(IsUnder("/usr/lib/libtorch_cuda.so", {"/cache/build", ""}));
}

}  // namespace
}  // namespace ksmith
