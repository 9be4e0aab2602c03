// The CPU compiler: the generated wrapper, real g++ builds, the content-hash cache, and how
// compile failures are reported.
#include "backends/cpu/compiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "binary/elf_symbols.h"
#include "binary/shared_library.h"
#include "core/files.h"
#include "task/task_loader.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHonestVectorAdd = R"(
#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)";

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in:\n" << text;
}

class CpuCompilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    cache_env_.emplace("KSMITH_CACHE_DIR", (temp_.path() / "cache").string());
    auto cache = CacheDirectory();
    ASSERT_TRUE(cache.ok()) << cache.error().message;
    auto compiler = CpuCompiler::Create(*cache);
    ASSERT_TRUE(compiler.ok()) << compiler.error().message;
    compiler_.emplace(std::move(compiler.value()));
    auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::move(task.value());
  }

  void TearDown() override { cache_env_.reset(); }

  Result<BuildOutput> BuildCandidate(const std::string& source, const std::string& name = "candidate.cpp") {
    return compiler_->Build(task_, {source, name, KernelRole::kCandidate, {}});
  }

  ScopedTempDir temp_{"ksmith-compiler"};
  std::optional<testing::ScopedEnv> cache_env_;
  std::optional<CpuCompiler> compiler_;
  Task task_;
};

TEST_F(CpuCompilerTest, CreateFindsTheCompilerAndItsVersion) {
  EXPECT_EQ(compiler_->info().executable, "g++");
  EXPECT_FALSE(compiler_->info().version.empty());
  const auto& flags = compiler_->info().flags;
  for (const char* flag : {"-O3", "-shared", "-fPIC", "-fopenmp", "-fvisibility=hidden"}) {
    EXPECT_NE(std::find(flags.begin(), flags.end(), flag), flags.end()) << flag;
  }
  EXPECT_TRUE(fs::is_directory(temp_.path() / "cache" / "objects"));
}

TEST_F(CpuCompilerTest, CreateFailsClearlyWhenTheCompilerDoesNotRun) {
  ::setenv("KSMITH_CXX", "/nonexistent/bin/g++", 1);
  auto compiler = CpuCompiler::Create(temp_.path() / "other-cache");
  ::unsetenv("KSMITH_CXX");
  ASSERT_FALSE(compiler.ok());
  EXPECT_EQ(compiler.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(compiler.error().message, "KSMITH_CXX"));
}

TEST_F(CpuCompilerTest, WrapperSourceHoldsTheDeclarationAndTheEntry) {
  const std::string wrapper = CpuCompiler::WrapperSource(task_, KernelRole::kCandidate, "/work/k.cpp");
  EXPECT_TRUE(Contains(wrapper, "#include \"/work/k.cpp\""));
  EXPECT_TRUE(Contains(wrapper, task_.signature.Declaration() + ";"));
  EXPECT_TRUE(Contains(wrapper, "ksmith_entry(void* const* pointers, const int64_t* scalars)"));
  EXPECT_TRUE(Contains(wrapper, "visibility(\"default\")"));
  EXPECT_TRUE(Contains(wrapper,
                       "vector_add(static_cast<const float*>(pointers[0]), "
                       "static_cast<const float*>(pointers[1]), static_cast<float*>(pointers[2]), "
                       "static_cast<int64_t>(scalars[3]));"));
  // The declaration sits under a #line that names it in compiler messages.
  EXPECT_LT(wrapper.find("ksmith-expected-signature"), wrapper.find(task_.signature.Declaration()));
}

TEST_F(CpuCompilerTest, ReferenceWrapperCallsTheReferenceWithDoubleOutputs) {
  const std::string wrapper = CpuCompiler::WrapperSource(task_, KernelRole::kReference, "ref.cc");
  EXPECT_TRUE(Contains(wrapper, task_.ReferenceDeclaration() + ";"));
  EXPECT_TRUE(Contains(wrapper, "vector_add_reference("));
  EXPECT_TRUE(Contains(wrapper, "static_cast<double*>(pointers[2])"));
}

TEST_F(CpuCompilerTest, BuildsAnHonestKernelThenHitsTheCache) {
  auto first = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(first->compiled) << first->log;
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(fs::exists(first->shared_object));
  EXPECT_EQ(first->shared_object.parent_path(), temp_.path() / "cache" / "objects");
  EXPECT_GT(first->compile_s, 0.0);
  EXPECT_TRUE(Contains(first->command, "g++"));
  EXPECT_TRUE(Contains(first->command, "-O3"));

  auto second = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_TRUE(second->compiled);
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->shared_object, first->shared_object);
  EXPECT_EQ(second->compile_s, 0.0);
}

TEST_F(CpuCompilerTest, DifferentSourcesGetDifferentObjects) {
  auto first = BuildCandidate(kHonestVectorAdd);
  auto second = BuildCandidate(std::string(kHonestVectorAdd) + "\n// a comment changes the key\n");
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(first->compiled && second->compiled);
  EXPECT_NE(first->shared_object, second->shared_object);
  EXPECT_FALSE(second->cache_hit);
}

TEST_F(CpuCompilerTest, BuiltEntryComputesTheRightSums) {
  auto build = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(build.ok() && build->compiled) << (build.ok() ? build->log : build.error().message);
  auto library = SharedLibrary::Open(build->shared_object);
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto entry = (*library)->Entry();
  ASSERT_TRUE(entry.ok());
  std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50}, c(5, -1);
  void* pointers[4] = {a.data(), b.data(), c.data(), nullptr};
  const int64_t scalars[4] = {0, 0, 0, 5};
  (*entry)(pointers, scalars);
  EXPECT_EQ(c, (std::vector<float>{11, 22, 33, 44, 55}));
}

TEST_F(CpuCompilerTest, BuiltObjectExportsOnlyTheEntry) {
  auto build = BuildCandidate(kHonestVectorAdd);
  ASSERT_TRUE(build.ok() && build->compiled);
  auto symbols = ReadDynamicSymbols(build->shared_object);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_NE(std::find(symbols->exported.begin(), symbols->exported.end(), "ksmith_entry"),
            symbols->exported.end());
  EXPECT_EQ(std::find(symbols->exported.begin(), symbols->exported.end(), "vector_add"),
            symbols->exported.end());
}

TEST_F(CpuCompilerTest, SyntaxErrorIsACompileFailureWithALog) {
  auto build = BuildCandidate("extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n  c[0] = a[0] +;\n}\n");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_FALSE(fs::exists(build->shared_object));
  EXPECT_TRUE(Contains(build->log, "error"));
  EXPECT_TRUE(Contains(build->log, "candidate.cpp"));
  // Paths inside the temporary build folder are stripped from the log.
  EXPECT_FALSE(Contains(build->log, (temp_.path() / "cache" / "tmp").string()));
  // A failure is not cached: building again compiles again.
  auto again = BuildCandidate("extern \"C\" void vector_add(const float* a, const float* b, float* c, int64_t n) {\n  c[0] = a[0] +;\n}\n");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->compiled);
  EXPECT_FALSE(again->cache_hit);
}

TEST_F(CpuCompilerTest, WrongSignatureIsACompileFailureNamingTheExpectedOne) {
  auto build = BuildCandidate(R"(
#include <cstdint>
extern "C" void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
)");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  EXPECT_TRUE(Contains(build->log, "ksmith-expected-signature")) << build->log;
}

TEST_F(CpuCompilerTest, MissingFunctionIsAnUndefinedReference) {
  auto build = BuildCandidate(R"(
#include <cstdint>
extern "C" void vector_add_typo(const float* a, const float* b, float* c, int64_t n) {}
)");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_FALSE(build->compiled);
  // The evaluator looks for this phrase to say "the candidate does not define ...".
  EXPECT_TRUE(Contains(build->log, "undefined reference to `vector_add"));
}

TEST_F(CpuCompilerTest, ReferenceRoleBuildsTheTasksReference) {
  auto source = ReadFile(task_.reference_source);
  ASSERT_TRUE(source.ok());
  auto build = compiler_->Build(task_, {*source, "reference.cc", KernelRole::kReference, {}});
  ASSERT_TRUE(build.ok() && build->compiled) << (build.ok() ? build->log : build.error().message);
  auto library = SharedLibrary::Open(build->shared_object);
  ASSERT_TRUE(library.ok());
  std::vector<float> a = {0.1f, 1e8f}, b = {0.2f, 1.0f};
  std::vector<double> c(2);
  void* pointers[4] = {a.data(), b.data(), c.data(), nullptr};
  const int64_t scalars[4] = {0, 0, 0, 2};
  (*(*library)->Entry())(pointers, scalars);
  EXPECT_DOUBLE_EQ(c[0], static_cast<double>(0.1f) + static_cast<double>(0.2f));
  EXPECT_DOUBLE_EQ(c[1], 1e8 + 1.0);  // exact in double, not in float
}

TEST_F(CpuCompilerTest, RolesAreCachedSeparately) {
  auto candidate = compiler_->Build(task_, {kHonestVectorAdd, "k.cpp", KernelRole::kCandidate, {}});
  auto baseline = compiler_->Build(task_, {kHonestVectorAdd, "k.cpp", KernelRole::kBaseline, {}});
  ASSERT_TRUE(candidate.ok() && baseline.ok());
  ASSERT_TRUE(candidate->compiled && baseline->compiled);
  EXPECT_NE(candidate->shared_object, baseline->shared_object);
}

TEST_F(CpuCompilerTest, BuildStandaloneCompilesWithoutAWrapper) {
  auto build = compiler_->BuildStandalone(
      "extern \"C\" __attribute__((visibility(\"default\"))) int probe_value() { return 5; }\n",
      "probe.cc");
  ASSERT_TRUE(build.ok() && build->compiled) << (build.ok() ? build->log : build.error().message);
  auto library = SharedLibrary::Open(build->shared_object);
  ASSERT_TRUE(library.ok());
  auto symbol = (*library)->Symbol("probe_value");
  ASSERT_TRUE(symbol.ok());
  EXPECT_EQ(reinterpret_cast<int (*)()>(*symbol)(), 5);
  EXPECT_FALSE((*library)->Entry().ok());
}

TEST_F(CpuCompilerTest, CandidateFileNamedLikeTheWrapperStillBuilds) {
  auto build = BuildCandidate(kHonestVectorAdd, "ksmith_wrapper.cc");
  ASSERT_TRUE(build.ok()) << build.error().message;
  EXPECT_TRUE(build->compiled) << build->log;
}

}  // namespace
}  // namespace ksmith
