// Versioned schema steps: applied once each, in order, atomically; newer files refused.
#include "store/migrations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/files.h"

namespace ksmith {
namespace {

constexpr std::string_view kCreateA = "CREATE TABLE a (x INTEGER);";
constexpr std::string_view kCreateB = "CREATE TABLE b (y INTEGER); INSERT INTO b VALUES (1);";

class MigrationTest : public ::testing::Test {
 protected:
  void SetUp() override { database_ = Reopen(); }

  std::unique_ptr<Database> Reopen() const {
    auto database = Database::Open(folder_.path() / "m.db");
    EXPECT_TRUE(database.ok()) << database.error().message;
    return database.ok() ? std::move(database).value() : nullptr;
  }

  int64_t Count(const std::string& sql) const { return database_->QueryInt(sql).value(); }

  ScopedTempDir folder_{"ksmith-migration-test"};
  std::unique_ptr<Database> database_;
};

TEST_F(MigrationTest, NewFileGetsEveryStep) {
  const std::vector<Migration> steps = {{1, "a", kCreateA}, {2, "b", kCreateB}};
  auto version = ApplyMigrations(*database_, steps);
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, 2);
  EXPECT_EQ(SchemaVersion(*database_).value(), 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM b"), 1);
}

TEST_F(MigrationTest, ApplyingAgainChangesNothing) {
  const std::vector<Migration> steps = {{1, "a", kCreateA}, {2, "b", kCreateB}};
  ASSERT_TRUE(ApplyMigrations(*database_, steps).ok());
  database_ = Reopen();
  auto again = ApplyMigrations(*database_, steps);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, 2);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM b"), 1) << "step 2 ran twice";
}

TEST_F(MigrationTest, OnlyTheMissingStepsRun) {
  // Given a file made by a build that knew one step, a build that knows two adds only the second.
  ASSERT_EQ(ApplyMigrations(*database_, {{1, "a", kCreateA}}).value(), 1);
  auto version = ApplyMigrations(*database_, {{1, "a", kCreateA}, {2, "b", kCreateB}});
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, 2);
}

TEST_F(MigrationTest, FailingStepLeavesTheFileAtThePreviousVersion) {
  const std::vector<Migration> steps = {
      {1, "a", kCreateA}, {2, "half done", "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1);"}};
  auto version = ApplyMigrations(*database_, steps);
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().message.find("schema step 2 (half done)"), std::string::npos) << version.error().message;
  EXPECT_EQ(SchemaVersion(*database_).value(), 1);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'c'"), 0) << "step 2 was not rolled back";
}

TEST_F(MigrationTest, NewerFileIsRefused) {
  ASSERT_TRUE(database_->Execute("PRAGMA user_version = 7").ok());
  auto version = ApplyMigrations(*database_, {{1, "a", kCreateA}});
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(version.error().message.find("written by a newer ksmith (schema 7, this build knows 1)"),
            std::string::npos)
      << version.error().message;
  EXPECT_NE(version.error().message.find("m.db"), std::string::npos);
}

TEST_F(MigrationTest, MisnumberedStepsAreABug) {
  auto version = ApplyMigrations(*database_, {{1, "a", kCreateA}, {3, "b", kCreateB}});
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.error().kind, ErrorKind::kInternal);
  EXPECT_EQ(SchemaVersion(*database_).value(), 0) << "nothing may run from a broken list";
}

TEST_F(MigrationTest, RunStoreStepsApplyToAnEmptyFile) {
  auto version = ApplyMigrations(*database_, RunStoreMigrations());
  ASSERT_TRUE(version.ok()) << version.error().message;
  EXPECT_EQ(*version, static_cast<int>(RunStoreMigrations().size()));
  EXPECT_EQ(database_->QueryInt("PRAGMA application_id").value(), kRunStoreApplicationId);
  for (const char* table : {"tasks", "runs", "llm_calls", "candidates", "verdicts"}) {
    EXPECT_EQ(database_->QueryInt("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = ?",
                                  {std::string(table)})
                  .value(),
              1)
        << table;
  }
}

}  // namespace
}  // namespace ksmith
