#include "binary/disassembly.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/shared_object.h"

namespace ksmith {
namespace {

std::filesystem::path BuildSharedObject(const ScopedTempDir& folder, const std::string& source) {
  const std::string failure = testing::BuildSharedObject(folder.path(), "k", source);
  EXPECT_TRUE(failure.empty()) << failure;
  return folder.path() / "k.so";
}

TEST(FindInstructions, SeesTokenPastedAssemblyAndIntrinsics) {
  ScopedTempDir folder("disassembly-test");
  const auto object = BuildSharedObject(folder, R"(
#include <x86intrin.h>
#define GLUE(a, b) a##b
extern "C" long sneaky() { long r; GLUE(as, m) volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11"); return r; }
extern "C" unsigned long long clock_reader() { return __rdtsc(); }
)");
  auto uses = FindInstructions(object, {"syscall", "rdtsc", "int $0x80"});
  ASSERT_TRUE(uses.ok()) << uses.error().message;
  bool saw_syscall = false, saw_rdtsc = false;
  for (const auto& use : *uses) {
    saw_syscall |= use.mnemonic == "syscall" && use.function == "sneaky";
    saw_rdtsc |= use.mnemonic == "rdtsc" && use.function == "clock_reader";
  }
  EXPECT_TRUE(saw_syscall);
  EXPECT_TRUE(saw_rdtsc);
}

TEST(FindInstructions, FindsNothingInPlainArithmetic) {
  ScopedTempDir folder("disassembly-test");
  const auto object = BuildSharedObject(
      folder, "extern \"C\" void add(const float* a, float* b, long n) { for (long i = 0; i < n; ++i) b[i] += a[i]; }\n");
  auto uses = FindInstructions(object, {"syscall", "rdtsc", "rdtscp", "int $0x80"});
  ASSERT_TRUE(uses.ok()) << uses.error().message;
  EXPECT_TRUE(uses->empty());
}

TEST(FindInstructions, ReportsAMissingFileAsAnError) {
  EXPECT_FALSE(FindInstructions("/nonexistent/k.so", {"syscall"}).ok());
}

}  // namespace
}  // namespace ksmith
