// The task registry: listing the built-in tasks, finding one by name or folder, suggestions.
#include "task/registry.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

fs::path BuiltInRoot() { return fs::path(KSMITH_SOURCE_DIR) / "tasks"; }

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

// Copies one built-in task into `root`/<category>/<name>.
void CopyBuiltIn(const fs::path& root, const std::string& category, const std::string& name) {
  fs::create_directories(root / category);
  fs::copy(BuiltInRoot() / category / name, root / category / name, fs::copy_options::recursive);
}

TEST(TaskRegistry, ListFindsAtLeastTheNineBuiltInTasksSortedByName) {
  TaskRegistry registry(BuiltInRoot());
  auto entries = registry.List();
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  EXPECT_GE(entries->size(), 9u);
  std::set<std::string> names;
  for (size_t i = 0; i < entries->size(); ++i) {
    names.insert((*entries)[i].name);
    if (i > 0) {
      EXPECT_LT((*entries)[i - 1].name, (*entries)[i].name);
    }
    EXPECT_TRUE(fs::exists((*entries)[i].directory / "task.toml"));
  }
  for (const char* name : {"vector_add", "softmax", "matmul", "relu", "gelu", "layernorm",
                           "rmsnorm", "row_sum", "transpose"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
}

TEST(TaskRegistry, ListRecordsEachTasksCategory) {
  TaskRegistry registry(BuiltInRoot());
  auto entries = registry.List();
  ASSERT_TRUE(entries.ok());
  for (const auto& entry : *entries) {
    const std::map<std::string, std::string> expected = {
        {"vector_add", "elementwise"}, {"matmul", "gemm"}, {"softmax", "normalization"}};
    if (const auto found = expected.find(entry.name); found != expected.end()) {
      EXPECT_EQ(entry.category, found->second);
    }
    EXPECT_EQ(entry.directory.parent_path().filename(), entry.category);
  }
}

TEST(TaskRegistry, FindLoadsATaskByName) {
  TaskRegistry registry(BuiltInRoot());
  auto task = registry.Find("softmax");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "softmax");
  EXPECT_EQ(task->signature.Declaration(),
            "extern \"C\" void softmax(const float* x, float* y, int64_t rows, int64_t cols)");
}

TEST(TaskRegistry, FindUnknownNameSuggestsNearNames) {
  TaskRegistry registry(BuiltInRoot());
  auto task = registry.Find("softmx");
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(task.error().message, "unknown task 'softmx'"));
  EXPECT_TRUE(Contains(task.error().message, "did you mean 'softmax'?"));
}

TEST(TaskRegistry, FindUnrelatedNamePointsAtTheTaskList) {
  TaskRegistry registry(BuiltInRoot());
  auto task = registry.Find("zzzzzzzzzzzz");
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(task.error().message, "`ksmith tasks` lists them"));
  EXPECT_FALSE(Contains(task.error().message, "did you mean"));
}

TEST(TaskRegistry, FindAcceptsTheFolderPathOfATask) {
  TaskRegistry registry(BuiltInRoot());
  auto task = registry.Find((BuiltInRoot() / "gemm" / "matmul").string());
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "matmul");
}

TEST(TaskRegistry, FindAcceptsAFolderOutsideTheRoot) {
  ScopedTempDir elsewhere("ksmith-registry");
  ASSERT_TRUE(elsewhere.ok());
  CopyBuiltIn(elsewhere.path(), "elementwise", "relu");
  ScopedTempDir empty_root("ksmith-registry-root");
  TaskRegistry registry(empty_root.path());
  auto task = registry.Find((elsewhere.path() / "elementwise" / "relu").string());
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "relu");
  EXPECT_EQ(task->directory, elsewhere.path() / "elementwise" / "relu");
}

TEST(TaskRegistry, ListOfAMissingRootIsNotFoundAndMentionsTheVariable) {
  TaskRegistry registry("/nonexistent/ksmith/tasks");
  auto entries = registry.List();
  ASSERT_FALSE(entries.ok());
  EXPECT_EQ(entries.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(Contains(entries.error().message, "KSMITH_TASKS_DIR"));
  EXPECT_FALSE(registry.Find("softmax").ok());
}

TEST(TaskRegistry, ListSkipsFilesAndFoldersWithoutATaskFile) {
  ScopedTempDir root("ksmith-registry");
  ASSERT_TRUE(root.ok());
  CopyBuiltIn(root.path(), "elementwise", "vector_add");
  fs::create_directories(root.path() / "elementwise" / "not_a_task");
  std::ofstream(root.path() / "README.md") << "not a category\n";
  std::ofstream(root.path() / "elementwise" / "notes.txt") << "not a task\n";
  TaskRegistry registry(root.path());
  auto entries = registry.List();
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ(entries->front().name, "vector_add");
}

TEST(TaskRegistry, FindReportsTheLoadErrorOfABrokenTask) {
  ScopedTempDir root("ksmith-registry");
  ASSERT_TRUE(root.ok());
  fs::create_directories(root.path() / "broken" / "bad_task");
  std::ofstream(root.path() / "broken" / "bad_task" / "task.toml") << "name = \n";
  TaskRegistry registry(root.path());
  auto task = registry.Find("bad_task");
  ASSERT_FALSE(task.ok());
  EXPECT_EQ(task.error().kind, ErrorKind::kParse);
  EXPECT_TRUE(Contains(task.error().message, "task.toml:1"));
}

TEST(TaskRegistry, DefaultRootHonoursKsmithTasksDir) {
  const char* saved = std::getenv("KSMITH_TASKS_DIR");
  const std::optional<std::string> previous = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("KSMITH_TASKS_DIR", "/some/where/tasks", 1);
  EXPECT_EQ(TaskRegistry::DefaultRoot(), fs::path("/some/where/tasks"));
  ::unsetenv("KSMITH_TASKS_DIR");
  EXPECT_EQ(TaskRegistry::DefaultRoot(), BuiltInRoot());
  if (previous) ::setenv("KSMITH_TASKS_DIR", previous->c_str(), 1);
}

using testing::ScopedEnv;

TEST(TaskRegistry, LaterRootsAddTasksAndTheFirstRootWinsOnAClash) {
  ScopedTempDir first("ksmith-registry-first"), second("ksmith-registry-second");
  ASSERT_TRUE(first.ok() && second.ok());
  CopyBuiltIn(first.path(), "elementwise", "relu");
  CopyBuiltIn(second.path(), "elementwise", "relu");
  CopyBuiltIn(second.path(), "normalization", "softmax");
  std::ofstream(second.path() / "elementwise" / "relu" / "task.toml", std::ios::app) << "\n# the second copy\n";
  TaskRegistry registry(std::vector<fs::path>{first.path(), second.path(), "/no/such/root"});
  auto entries = registry.List();
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "relu");
  EXPECT_EQ((*entries)[0].directory, first.path() / "elementwise" / "relu");
  EXPECT_EQ((*entries)[1].name, "softmax");
  auto softmax = registry.Find("softmax");
  ASSERT_TRUE(softmax.ok()) << softmax.error().message;
  EXPECT_EQ(softmax->directory, second.path() / "normalization" / "softmax");
}

TEST(TaskRegistry, DefaultSearchesTheBuiltInsThenKsmithTasksPathThenTheImportedFolder) {
  ScopedEnv tasks_path("KSMITH_TASKS_PATH", "/extra/one::/extra/two");
  ScopedEnv data_home("XDG_DATA_HOME", "/data/home");
  const auto roots = TaskRegistry::Default().roots();
  ASSERT_EQ(roots.size(), 4u);
  EXPECT_EQ(roots[0], TaskRegistry::DefaultRoot());
  EXPECT_EQ(roots[1], fs::path("/extra/one"));
  EXPECT_EQ(roots[2], fs::path("/extra/two"));
  EXPECT_EQ(roots[3], fs::path("/data/home/ksmith/tasks"));
  EXPECT_EQ(TaskRegistry::ImportedRoot(), fs::path("/data/home/ksmith/tasks"));
}

TEST(TaskRegistry, ImportedRootFallsBackToHomeWithoutXdgDataHome) {
  ScopedEnv data_home("XDG_DATA_HOME", "");
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(TaskRegistry::ImportedRoot(), fs::path("/home/someone/.local/share/ksmith/tasks"));
}

TEST(TaskRegistry, RootIsTheFolderItWasGiven) {
  TaskRegistry registry("/a/b");
  EXPECT_EQ(registry.root(), fs::path("/a/b"));
}

}  // namespace
}  // namespace ksmith
