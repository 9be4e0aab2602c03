#include "backend/cpu/disassembly.h"

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/subprocess.h"

namespace ksmith {
namespace {

// Builds `source` into a shared object with the system compiler.
std::filesystem::path BuildSharedObject(const ScopedTempDir& folder, const std::string& source) {
  const auto source_path = folder.path() / "k.cc";
  const auto object_path = folder.path() / "k.so";
  EXPECT_TRUE(WriteFileAtomic(source_path, source).ok());
  SpawnOptions options;
  options.argv = {"g++", "-O2", "-shared", "-fPIC", "-o", object_path.string(), source_path.string()};
  options.inherit_environment = true;
  auto run = RunCommand(options, std::chrono::seconds(60));
  EXPECT_TRUE(run.ok() && run->succeeded()) << (run.ok() ? run->output : run.error().message);
  return object_path;
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
