// Reading the dynamic symbol table of real shared objects built with g++.
#include "binary/elf_symbols.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/subprocess.h"
#include "testing/shared_object.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

using testing::BuildSharedObject;

constexpr const char* kLibrarySource = R"(
#include <cstdio>
extern "C" int ksmith_visible_function(const char* path) {
  std::FILE* file = std::fopen(path, "r");
  if (file == nullptr) return -1;
  std::fclose(file);
  return 0;
}
extern "C" __attribute__((visibility("hidden"))) int ksmith_hidden_function() { return 7; }
static int ksmith_static_function() { return 8; }
extern "C" int ksmith_uses_static() { return ksmith_static_function(); }
)";

class ElfSymbolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    const std::string log = BuildSharedObject(temp_.path(), "library", kLibrarySource);
    ASSERT_TRUE(log.empty()) << log;
    library_ = temp_.path() / "library.so";
  }

  ScopedTempDir temp_{"ksmith-elf"};
  fs::path library_;
};

TEST_F(ElfSymbolsTest, ListsImportedLibraryFunctions) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_TRUE(Has(symbols->imported, "fopen"));
  EXPECT_TRUE(Has(symbols->imported, "fclose"));
  EXPECT_FALSE(Has(symbols->exported, "fopen"));
}

TEST_F(ElfSymbolsTest, ListsExportedFunctionsWithDefaultVisibility) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_TRUE(Has(symbols->exported, "ksmith_visible_function"));
  EXPECT_TRUE(Has(symbols->exported, "ksmith_uses_static"));
  EXPECT_FALSE(Has(symbols->imported, "ksmith_visible_function"));
}

TEST_F(ElfSymbolsTest, LeavesOutHiddenAndStaticFunctions) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  for (const auto* list : {&symbols->exported, &symbols->imported}) {
    EXPECT_FALSE(Has(*list, "ksmith_hidden_function"));
    for (const auto& name : *list) EXPECT_EQ(name.find("ksmith_static_function"), std::string::npos) << name;
  }
}

TEST_F(ElfSymbolsTest, DefinedListsHiddenFunctionsFromTheFullSymbolTable) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_TRUE(Has(symbols->defined, "ksmith_hidden_function")) << ::testing::PrintToString(symbols->defined);
  EXPECT_TRUE(Has(symbols->defined, "ksmith_visible_function"));
  EXPECT_FALSE(Has(symbols->defined, "fopen"));
  EXPECT_TRUE(std::is_sorted(symbols->defined.begin(), symbols->defined.end()));
  EXPECT_EQ(std::adjacent_find(symbols->defined.begin(), symbols->defined.end()), symbols->defined.end());
}

TEST_F(ElfSymbolsTest, ListsNeededLibraries) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  EXPECT_TRUE(Has(symbols->needed, "libc.so.6")) << ::testing::PrintToString(symbols->needed);
}

TEST_F(ElfSymbolsTest, NamesAreNeverEmpty) {
  auto symbols = ReadDynamicSymbols(library_);
  ASSERT_TRUE(symbols.ok());
  for (const auto* list : {&symbols->exported, &symbols->imported, &symbols->needed}) {
    for (const auto& name : *list) EXPECT_FALSE(name.empty());
  }
}

TEST_F(ElfSymbolsTest, SeesCxxImportsByTheirMangledNames) {
  const std::string log = BuildSharedObject(temp_.path(), "threads", R"(
#include <thread>
extern "C" void start() { std::thread worker([] {}); worker.join(); }
)");
  ASSERT_TRUE(log.empty()) << log;
  auto symbols = ReadDynamicSymbols(temp_.path() / "threads.so");
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  const bool imports_thread = std::any_of(symbols->imported.begin(), symbols->imported.end(),
                                          [](const std::string& name) { return name.starts_with("_ZNSt6thread"); });
  EXPECT_TRUE(imports_thread) << ::testing::PrintToString(symbols->imported);
}

TEST_F(ElfSymbolsTest, MissingFileIsNotFound) {
  auto symbols = ReadDynamicSymbols(temp_.path() / "missing.so");
  ASSERT_FALSE(symbols.ok());
  EXPECT_EQ(symbols.error().kind, ErrorKind::kNotFound);
}

TEST_F(ElfSymbolsTest, TextFileIsNotAnElfFile) {
  std::ofstream(temp_.path() / "text.so") << "this is not an ELF file, just text padding it out past the header size";
  auto symbols = ReadDynamicSymbols(temp_.path() / "text.so");
  ASSERT_FALSE(symbols.ok());
  EXPECT_EQ(symbols.error().kind, ErrorKind::kParse);
  EXPECT_NE(symbols.error().message.find("not a 64-bit ELF file"), std::string::npos);
}

TEST_F(ElfSymbolsTest, EmptyFileIsNotAnElfFile) {
  std::ofstream(temp_.path() / "empty.so");
  auto symbols = ReadDynamicSymbols(temp_.path() / "empty.so");
  ASSERT_FALSE(symbols.ok());
  EXPECT_EQ(symbols.error().kind, ErrorKind::kParse);
}

TEST_F(ElfSymbolsTest, TruncatedObjectIsAParseErrorNotACrash) {
  auto image = ReadFile(library_);
  ASSERT_TRUE(image.ok());
  ASSERT_GT(image->size(), 256u);
  // The header survives; the section table (at the end of the file) does not.
  std::ofstream(temp_.path() / "truncated.so", std::ios::binary) << image->substr(0, image->size() / 2);
  auto symbols = ReadDynamicSymbols(temp_.path() / "truncated.so");
  ASSERT_FALSE(symbols.ok());
  EXPECT_EQ(symbols.error().kind, ErrorKind::kParse);
  EXPECT_NE(symbols.error().message.find("truncated"), std::string::npos) << symbols.error().message;
}

TEST_F(ElfSymbolsTest, CorruptedSectionOffsetsAreSurvived) {
  auto image = ReadFile(library_);
  ASSERT_TRUE(image.ok());
  // Overwrite every byte of the section table's offsets and sizes with 0xff, one section at a
  // time: the reader must bound every read rather than crash.
  std::string corrupted = *image;
  uint64_t section_offset = 0;
  std::memcpy(&section_offset, corrupted.data() + 0x28, sizeof(section_offset));  // e_shoff
  uint16_t section_count = 0;
  std::memcpy(&section_count, corrupted.data() + 0x3c, sizeof(section_count));    // e_shnum
  ASSERT_LE(section_offset + section_count * 64u, corrupted.size());
  for (uint16_t i = 0; i < section_count; ++i) {
    // sh_offset at +0x18 and sh_size at +0x20 of each 64-byte section header.
    std::memset(corrupted.data() + section_offset + i * 64 + 0x18, 0xff, 16);
  }
  std::ofstream(temp_.path() / "corrupted.so", std::ios::binary) << corrupted;
  auto symbols = ReadDynamicSymbols(temp_.path() / "corrupted.so");
  if (symbols.ok()) {
    EXPECT_TRUE(symbols->imported.empty());
    EXPECT_TRUE(symbols->exported.empty());
  } else {
    EXPECT_EQ(symbols.error().kind, ErrorKind::kParse);
  }
}

}  // namespace
}  // namespace ksmith
