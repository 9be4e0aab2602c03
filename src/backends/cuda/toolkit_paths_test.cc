// Reading nvcc's folders from its dry run: each kind of line, quoting, links resolved, missing
// folders dropped, and the fallback where nvcc says nothing.
#include "backends/cuda/toolkit_paths.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

class ToolkitPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(temp_.ok());
    root_ = fs::canonical(temp_.path());
    fs::create_directories(root_ / "targets" / "x86_64-linux" / "include" / "cccl");
    fs::create_directories(root_ / "targets" / "x86_64-linux" / "lib" / "stubs");
  }

  ScopedTempDir temp_{"ksmith-toolkit-paths"};
  fs::path root_;
};

TEST_F(ToolkitPathsTest, ReadsTheIncludeSystemIncludeAndLibraryLines) {
  fs::create_directories(root_ / "bin");
  const std::string top = (root_ / "bin" / "..").string();
  const std::string output = "#$ _NVVM_BRANCH_=nvvm\n#$ TOP=" + top + "\n#$ INCLUDES=\"-I" + top +
                             "/targets/x86_64-linux/include\"  \n#$ SYSTEM_INCLUDES=\"-isystem\" \"" + top +
                             "/targets/x86_64-linux/include/cccl\"  \n#$ LIBRARIES=  \"-L" + top +
                             "/targets/x86_64-linux/lib/stubs\" \"-L" + top +
                             "/targets/x86_64-linux/lib\"\n#$ gcc -E -x c++ \"-I/elsewhere\" x.cu\n";
  const ToolkitPaths paths = ParseNvccDryRun(output);
  const fs::path target = root_ / "targets" / "x86_64-linux";
  EXPECT_EQ(paths.root, root_);
  EXPECT_EQ(paths.include_dirs, std::vector<fs::path>{target / "include"});
  EXPECT_EQ(paths.system_include_dirs, std::vector<fs::path>{target / "include" / "cccl"});
  EXPECT_EQ(paths.library_dirs, (std::vector<fs::path>{target / "lib" / "stubs", target / "lib"}));
}

TEST_F(ToolkitPathsTest, ResolvesLinksAndDropsFoldersThatDoNotExist) {
  fs::create_directory_symlink(root_ / "targets" / "x86_64-linux" / "include", root_ / "include");
  const ToolkitPaths paths = ParseNvccDryRun("#$ INCLUDES=\"-I" + (root_ / "include").string() + "\" \"-I" +
                                             (root_ / "missing").string() + "\"\n");
  EXPECT_EQ(paths.include_dirs, std::vector<fs::path>{root_ / "targets" / "x86_64-linux" / "include"});
}

TEST_F(ToolkitPathsTest, AnOptionsPathMayBeTheNextWordOrJoinedToIt) {
  const std::string include = (root_ / "targets/x86_64-linux/include").string();
  const ToolkitPaths paths = ParseNvccDryRun("#$ INCLUDES=-I \"" + include + "\"\n#$ SYSTEM_INCLUDES=\"-isystem" +
                                             include + "/cccl\"\n#$ LIBRARIES= -L " + include + "/../lib\n");
  EXPECT_EQ(paths.include_dirs, std::vector<fs::path>{include});
  EXPECT_EQ(paths.system_include_dirs, std::vector<fs::path>{fs::path(include) / "cccl"});
  EXPECT_EQ(paths.library_dirs, std::vector<fs::path>{root_ / "targets" / "x86_64-linux" / "lib"});
}

TEST_F(ToolkitPathsTest, WithoutNvccsWordTheToolkitsOwnFoldersAreUsed) {
  fs::create_directories(root_ / "include" / "cccl");
  fs::create_directories(root_ / "lib64");
  const ToolkitPaths paths = ToolkitPathsOr(ParseNvccDryRun("nvcc fatal: something else\n"), root_);
  EXPECT_EQ(paths.include_dirs, std::vector<fs::path>{root_ / "include"});
  EXPECT_EQ(paths.system_include_dirs, std::vector<fs::path>{root_ / "include" / "cccl"});
  EXPECT_EQ(paths.library_dirs, std::vector<fs::path>{root_ / "lib64"});
  EXPECT_EQ(paths.root, root_);
}

TEST_F(ToolkitPathsTest, NvccsWordWinsOverTheToolkitRoot) {
  fs::create_directories(root_ / "include");
  const ToolkitPaths paths = ToolkitPathsOr(
      ParseNvccDryRun("#$ INCLUDES=\"-I" + (root_ / "targets/x86_64-linux/include").string() + "\"\n"), root_);
  EXPECT_EQ(paths.include_dirs, std::vector<fs::path>{root_ / "targets" / "x86_64-linux" / "include"});
  EXPECT_EQ(paths.system_include_dirs, std::vector<fs::path>{root_ / "targets" / "x86_64-linux" / "include" / "cccl"});
}

}  // namespace
}  // namespace ksmith
