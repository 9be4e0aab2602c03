// File helpers: reading with limits, atomic writes, the cache folder, scoped temporary folders.
#include "core/files.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

namespace fs = std::filesystem;

void WriteRaw(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

// Saves and restores the environment variables CacheDirectory reads.
class EnvironmentGuard {
 public:
  EnvironmentGuard() {
    for (const char* name : kNames) {
      const char* value = std::getenv(name);
      saved_.push_back(value ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  ~EnvironmentGuard() {
    for (size_t i = 0; i < std::size(kNames); ++i) {
      if (saved_[i]) {
        ::setenv(kNames[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kNames[i]);
      }
    }
  }

 private:
  static constexpr const char* kNames[] = {"KSMITH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::optional<std::string>> saved_;
};

class FilesTest : public ::testing::Test {
 protected:
  ScopedTempDir temp_{"ksmith-files-test"};
};

TEST_F(FilesTest, ReadFileReturnsTheWholeContentsIncludingNulBytes) {
  ASSERT_TRUE(temp_.ok());
  const std::string contents("binary\0data\nwith lines", 22);
  WriteRaw(temp_.path() / "data.bin", contents);
  auto read = ReadFile(temp_.path() / "data.bin");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(*read, contents);
}

TEST_F(FilesTest, ReadFileOfAMissingFileIsNotFoundAndNamesThePath) {
  const fs::path missing = temp_.path() / "missing.txt";
  auto read = ReadFile(missing);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(read.error().message.find(missing.string()), std::string::npos) << read.error().message;
}

TEST_F(FilesTest, ReadFileOfADirectoryIsAnInvalidArgument) {
  auto read = ReadFile(temp_.path());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(read.error().message.find("directory"), std::string::npos) << read.error().message;
}

TEST_F(FilesTest, ReadFileRefusesAFileLargerThanTheLimit) {
  WriteRaw(temp_.path() / "big.txt", std::string(100, 'x'));
  auto read = ReadFile(temp_.path() / "big.txt", 10);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(read.error().message.find("limit"), std::string::npos) << read.error().message;
}

TEST_F(FilesTest, ReadFileAcceptsAFileExactlyAtTheLimit) {
  WriteRaw(temp_.path() / "exact.txt", std::string(10, 'y'));
  auto read = ReadFile(temp_.path() / "exact.txt", 10);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->size(), 10u);
}

TEST_F(FilesTest, ReadFileReadsAnEmptyFile) {
  WriteRaw(temp_.path() / "empty.txt", "");
  auto read = ReadFile(temp_.path() / "empty.txt");
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->empty());
}

TEST_F(FilesTest, WriteFileAtomicCreatesParentsAndLeavesNoTemporaryFiles) {
  const fs::path target = temp_.path() / "a" / "b" / "out.json";
  ASSERT_TRUE(WriteFileAtomic(target, "{\"x\": 1}").ok());
  auto read = ReadFile(target);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "{\"x\": 1}");
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(target.parent_path())) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "out.json");
  }
  EXPECT_EQ(entries, 1u);
}

TEST_F(FilesTest, WriteFileAtomicReplacesAnExistingFile) {
  const fs::path target = temp_.path() / "replace.txt";
  ASSERT_TRUE(WriteFileAtomic(target, "a much longer first version").ok());
  ASSERT_TRUE(WriteFileAtomic(target, "short").ok());
  auto read = ReadFile(target);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "short");
}

TEST_F(FilesTest, WriteFileAtomicFailsWhenTheParentIsAFile) {
  WriteRaw(temp_.path() / "plain", "not a folder");
  const Status status = WriteFileAtomic(temp_.path() / "plain" / "child.txt", "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kIo);
}

TEST_F(FilesTest, ConcurrentAtomicWritesToOnePathNeverFailOrTear) {
  const fs::path target = temp_.path() / "shared.log";
  std::atomic<int> failures = 0;
  std::atomic<int> torn = 0;
  auto writer = [&](char fill) {
    const std::string contents(10'000, fill);
    for (int i = 0; i < 300; ++i) {
      if (!WriteFileAtomic(target, contents).ok()) ++failures;
      auto read = ReadFile(target);
      if (read.ok() && *read != std::string(10'000, 'a') && *read != std::string(10'000, 'b')) ++torn;
    }
  };
  std::thread first(writer, 'a');
  std::thread second(writer, 'b');
  first.join();
  second.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(torn.load(), 0);
}

TEST_F(FilesTest, CacheDirectoryHonoursKsmithCacheDirAndCreatesIt) {
  EnvironmentGuard guard;
  const fs::path wanted = temp_.path() / "my-cache" / "nested";
  ::setenv("KSMITH_CACHE_DIR", wanted.c_str(), 1);
  auto directory = CacheDirectory();
  ASSERT_TRUE(directory.ok()) << directory.error().message;
  EXPECT_EQ(*directory, wanted);
  EXPECT_TRUE(fs::is_directory(wanted));
}

TEST_F(FilesTest, CacheDirectoryFallsBackToXdgCacheHome) {
  EnvironmentGuard guard;
  ::setenv("KSMITH_CACHE_DIR", "", 1);
  ::setenv("XDG_CACHE_HOME", (temp_.path() / "xdg").c_str(), 1);
  auto directory = CacheDirectory();
  ASSERT_TRUE(directory.ok()) << directory.error().message;
  EXPECT_EQ(*directory, temp_.path() / "xdg" / "ksmith");
  EXPECT_TRUE(fs::is_directory(*directory));
}

TEST_F(FilesTest, CacheDirectoryFallsBackToHomeDotCache) {
  EnvironmentGuard guard;
  ::unsetenv("KSMITH_CACHE_DIR");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", (temp_.path() / "home").c_str(), 1);
  auto directory = CacheDirectory();
  ASSERT_TRUE(directory.ok()) << directory.error().message;
  EXPECT_EQ(*directory, temp_.path() / "home" / ".cache" / "ksmith");
}

TEST_F(FilesTest, CacheDirectoryThatCannotBeCreatedIsAnIoError) {
  EnvironmentGuard guard;
  WriteRaw(temp_.path() / "file", "x");
  ::setenv("KSMITH_CACHE_DIR", (temp_.path() / "file" / "cache").c_str(), 1);
  auto directory = CacheDirectory();
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().kind, ErrorKind::kIo);
}

TEST(ScopedTempDir, CreatesAPrivateFolderAndRemovesItWithItsContents) {
  fs::path where;
  {
    ScopedTempDir temp("ksmith-scoped");
    ASSERT_TRUE(temp.ok());
    where = temp.path();
    EXPECT_TRUE(fs::is_directory(where));
    EXPECT_EQ(where.filename().string().rfind("ksmith-scoped-", 0), 0u) << where;
    struct stat info;
    ASSERT_EQ(::stat(where.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    fs::create_directories(where / "sub" / "deeper");
    WriteRaw(where / "sub" / "deeper" / "file.txt", "contents");
  }
  EXPECT_FALSE(fs::exists(where));
}

TEST(ScopedTempDir, CreatesItsParentAndGivesDistinctFolders) {
  ScopedTempDir outer("ksmith-outer");
  ASSERT_TRUE(outer.ok());
  const fs::path parent = outer.path() / "not" / "yet";
  ScopedTempDir first("work", parent);
  ScopedTempDir second("work", parent);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first.path().parent_path(), parent);
  EXPECT_NE(first.path(), second.path());
}

TEST(ScopedTempDir, IsNotOkWhenTheParentCannotExist) {
  ScopedTempDir outer("ksmith-outer");
  WriteRaw(outer.path() / "file", "x");
  ScopedTempDir temp("work", outer.path() / "file");
  EXPECT_FALSE(temp.ok());
  EXPECT_TRUE(temp.path().empty());
}

}  // namespace
}  // namespace ksmith
