// Loading built kernels with dlopen: symbols, the ksmith_entry convention, errors.
#include "binary/shared_library.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/subprocess.h"
#include "testing/shared_object.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

using testing::BuildSharedObject;

// Names are unique to this test file: the library is loaded RTLD_LOCAL | RTLD_NODELETE and stays
// in the test process.
constexpr const char* kKernelSource = R"(
#include <cstdint>
// pointers[0]: float output; scalars[1]: the value to double.
extern "C" void ksmith_entry(void* const* pointers, const int64_t* scalars) {
  static_cast<float*>(pointers[0])[0] = 2.0f * static_cast<float>(scalars[1]);
}
extern "C" int ksmith_shared_library_test_answer() { return 42; }
)";

constexpr const char* kNoEntrySource = R"(
extern "C" int ksmith_shared_library_test_other() { return 1; }
)";

class SharedLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(temp_.ok()); }
  ScopedTempDir temp_{"ksmith-shared-library"};
};

TEST_F(SharedLibraryTest, OpensALibraryAndFindsItsSymbols) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "kernel", kKernelSource), "");
  auto library = SharedLibrary::Open(temp_.path() / "kernel.so");
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto symbol = (*library)->Symbol("ksmith_shared_library_test_answer");
  ASSERT_TRUE(symbol.ok()) << symbol.error().message;
  const auto answer = reinterpret_cast<int (*)()>(*symbol);
  EXPECT_EQ(answer(), 42);
}

TEST_F(SharedLibraryTest, EntryCallsTheKernelWithPointersAndScalars) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "kernel", kKernelSource), "");
  auto library = SharedLibrary::Open(temp_.path() / "kernel.so");
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto entry = (*library)->Entry();
  ASSERT_TRUE(entry.ok()) << entry.error().message;
  float output = -1.0f;
  void* pointers[2] = {&output, nullptr};
  const int64_t scalars[2] = {0, 21};
  (*entry)(pointers, scalars);
  EXPECT_EQ(output, 42.0f);
}

TEST_F(SharedLibraryTest, MissingSymbolIsNotFoundAndNamed) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "kernel", kKernelSource), "");
  auto library = SharedLibrary::Open(temp_.path() / "kernel.so");
  ASSERT_TRUE(library.ok());
  auto symbol = (*library)->Symbol("ksmith_no_such_symbol");
  ASSERT_FALSE(symbol.ok());
  EXPECT_EQ(symbol.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(symbol.error().message, "symbol 'ksmith_no_such_symbol' not found");
}

TEST_F(SharedLibraryTest, EntryOfALibraryWithoutKsmithEntryIsAnError) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "other", kNoEntrySource), "");
  auto library = SharedLibrary::Open(temp_.path() / "other.so");
  ASSERT_TRUE(library.ok()) << library.error().message;
  auto entry = (*library)->Entry();
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(entry.error().message.find(kKernelEntrySymbol), std::string::npos);
}

TEST_F(SharedLibraryTest, SymbolsStayLocalToTheLibrary) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "kernel", kKernelSource), "");
  auto library = SharedLibrary::Open(temp_.path() / "kernel.so");
  ASSERT_TRUE(library.ok());
  // RTLD_LOCAL: the library's exports do not join the global namespace.
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "ksmith_shared_library_test_answer"), nullptr);
}

TEST_F(SharedLibraryTest, TwoLibrariesWithTheSameEntryKeepTheirOwn) {
  ASSERT_EQ(BuildSharedObject(temp_.path(), "first", R"(
#include <cstdint>
extern "C" void ksmith_entry(void* const* p, const int64_t*) { *static_cast<int*>(p[0]) = 1; }
)"), "");
  ASSERT_EQ(BuildSharedObject(temp_.path(), "second", R"(
#include <cstdint>
extern "C" void ksmith_entry(void* const* p, const int64_t*) { *static_cast<int*>(p[0]) = 2; }
)"), "");
  auto first = SharedLibrary::Open(temp_.path() / "first.so");
  auto second = SharedLibrary::Open(temp_.path() / "second.so");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  int value = 0;
  void* pointers[1] = {&value};
  (*(*first)->Entry())(pointers, nullptr);
  EXPECT_EQ(value, 1);
  (*(*second)->Entry())(pointers, nullptr);
  EXPECT_EQ(value, 2);
}

TEST_F(SharedLibraryTest, OpeningAMissingFileIsAnIoErrorNamingThePath) {
  const fs::path missing = temp_.path() / "missing.so";
  auto library = SharedLibrary::Open(missing);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().kind, ErrorKind::kIo);
  EXPECT_NE(library.error().message.find("cannot load " + missing.string()), std::string::npos)
      << library.error().message;
}

TEST_F(SharedLibraryTest, OpeningAFileThatIsNotALibraryIsAnIoError) {
  std::ofstream(temp_.path() / "fake.so") << "definitely not an ELF object";
  auto library = SharedLibrary::Open(temp_.path() / "fake.so");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.error().kind, ErrorKind::kIo);
}

TEST_F(SharedLibraryTest, UnresolvedImportsFailAtOpenNotAtCall) {
  // RTLD_NOW: a missing function is reported when loading, not as a crash in the kernel.
  ASSERT_EQ(BuildSharedObject(temp_.path(), "unresolved", R"(
extern "C" int ksmith_function_that_does_not_exist_anywhere();
extern "C" int call_it() { return ksmith_function_that_does_not_exist_anywhere(); }
)"), "");
  auto library = SharedLibrary::Open(temp_.path() / "unresolved.so");
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.error().message.find("ksmith_function_that_does_not_exist_anywhere"), std::string::npos)
      << library.error().message;
}

const char* ReportTwoChanges() {
  return R"json({"changes": ["replaced torch.relu", "set torch.get_num_threads()"], "calls": 12,
                 "restored": ["set torch.backends.cudnn.benchmark"], "calls_without_custom_code": 3})json";
}
const char* ReportGarbage() {
  return R"json({"changes": ["replaced torch.relu", 7, {"x": 1}], "restored": "set grad mode", "calls": "many",
                 "calls_without_custom_code": 9})json";
}
const char* ReportNotJson() { return "not json"; }
const char* ReportMoreWithoutThanCalls() { return R"json({"calls": 2, "calls_without_custom_code": 5})json"; }

TEST(ReadCandidateReport, KeepsEachStringAndTheCounts) {
  const CandidateReport report = ReadCandidateReport(ReportTwoChanges);
  EXPECT_EQ(report.changes,
            (std::vector<std::string>{"its Python replaced torch.relu", "its Python set torch.get_num_threads()"}));
  EXPECT_EQ(report.restored, (std::vector<std::string>{"its Python set torch.backends.cudnn.benchmark"}));
  EXPECT_EQ(report.calls, 12);
  EXPECT_EQ(report.calls_without_custom_code, 3);
}

TEST(ReadCandidateReport, LeavesOutWhatIsNotOfItsType) {
  // A candidate's Python can reach the code that writes the report: what is not a string or a
  // count is left out, and no more calls lack custom code than there were calls.
  const CandidateReport garbage = ReadCandidateReport(ReportGarbage);
  EXPECT_EQ(garbage.changes, (std::vector<std::string>{"its Python replaced torch.relu"}));
  EXPECT_TRUE(garbage.restored.empty());  // a string, not a list
  EXPECT_EQ(garbage.calls, 0);
  EXPECT_EQ(garbage.calls_without_custom_code, 0);
  EXPECT_TRUE(ReadCandidateReport(ReportNotJson).changes.empty());
  EXPECT_EQ(ReadCandidateReport(ReportMoreWithoutThanCalls).calls_without_custom_code, 2);
}

const char* RaisedNothing() { return ""; }
const char* RaisedAtBuild() {
  return R"json({"at": "build", "message": "ModelNew(*get_init_inputs()) raised ValueError: no"})json";
}
const char* RaisedGarbage() { return R"json({"at": 3, "message": ["x"]})json"; }
const char* RaisedLong() {
  // 2999 bytes of a two-byte character after one ASCII byte: a cut at 2000 bytes lands inside one.
  static const std::string text = [] {
    std::string message = "x";
    for (int i = 0; i < 1499; ++i) message += "\xc3\xa9";
    return R"({"at": "call", "message": ")" + message + "\"}";
  }();
  return text.c_str();
}

TEST(TakeCandidateRaised, IsNullWhenNothingWasRaisedAndKeepsWhereAndWhatOtherwise) {
  EXPECT_TRUE(TakeCandidateRaised(RaisedNothing).is_null());
  EXPECT_EQ(TakeCandidateRaised(RaisedAtBuild),
            (nlohmann::json{{"at", "build"}, {"message", "ModelNew(*get_init_inputs()) raised ValueError: no"}}));
}

TEST(TakeCandidateRaised, AnUnreadableReportIsStillARaiseInACallAndALongOneIsCutBetweenCharacters) {
  // The candidate's Python can reach the text: what it says otherwise fails it all the same.
  const nlohmann::json garbage = TakeCandidateRaised(RaisedGarbage);
  EXPECT_EQ(garbage.value("at", ""), "call");
  EXPECT_NE(garbage.value("message", "").find("unreadable"), std::string::npos);
  const std::string cut = TakeCandidateRaised(RaisedLong).value("message", "");
  EXPECT_EQ(cut.size(), 1999u);
  EXPECT_NO_THROW(nlohmann::json(cut).dump());  // valid UTF-8: a reply carries it
}

}  // namespace
}  // namespace ksmith
