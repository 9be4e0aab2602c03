// The SQLite wrapper: bound values come back byte for byte, errors name the file, and a
// transaction rolls back unless committed.
#include "store/database.h"

#include <gtest/gtest.h>

#include <string>

#include "core/files.h"

namespace ksmith {
namespace {

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = Database::Open(folder_.path() / "nested" / "test.db");
    ASSERT_TRUE(database.ok()) << database.error().message;
    database_ = std::move(database).value();
    ASSERT_TRUE(database_->ExecuteScript("CREATE TABLE t (i INTEGER, r REAL, s TEXT);").ok());
  }

  ScopedTempDir folder_{"ksmith-database-test"};
  std::unique_ptr<Database> database_;
};

TEST_F(DatabaseTest, OpenCreatesMissingFolders) {
  EXPECT_TRUE(std::filesystem::exists(folder_.path() / "nested" / "test.db"));
}

TEST_F(DatabaseTest, BoundValuesComeBackExactly) {
  // Bodies received from servers may hold NULs and bytes that are not UTF-8.
  const std::string odd_text = std::string("a\0b\xff\xfe end", sizeof("a\0b\xff\xfe end") - 1);
  ASSERT_TRUE(database_->Execute("INSERT INTO t VALUES (?, ?, ?)", {int64_t{1} << 40, 2.5, odd_text}).ok());
  ASSERT_TRUE(database_->Execute("INSERT INTO t VALUES (?, ?, ?)", {nullptr, nullptr, nullptr}).ok());

  auto rows = database_->Query("SELECT i, r, s FROM t ORDER BY rowid");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_TRUE(rows->Step().value());
  EXPECT_EQ(rows->Int(0), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(rows->Double(1), 2.5);
  EXPECT_EQ(rows->Text(2), odd_text);
  EXPECT_EQ(rows->OptionalText(2), odd_text);
  ASSERT_TRUE(rows->Step().value());
  EXPECT_TRUE(rows->IsNull(0));
  EXPECT_EQ(rows->OptionalInt(0), std::nullopt);
  EXPECT_EQ(rows->OptionalDouble(1), std::nullopt);
  EXPECT_EQ(rows->OptionalText(2), std::nullopt);
  EXPECT_EQ(rows->Text(2), "");
  EXPECT_FALSE(rows->Step().value());
}

TEST_F(DatabaseTest, SqlOptionalBindsNullWhenAbsent) {
  ASSERT_TRUE(database_->Execute("INSERT INTO t (i, r) VALUES (?, ?)",
                                 {SqlOptional(std::optional<int64_t>()), SqlOptional(std::optional<double>(1.5))})
                  .ok());
  EXPECT_EQ(database_->QueryInt("SELECT COUNT(*) FROM t WHERE i IS NULL AND r = 1.5").value(), 1);
}

TEST_F(DatabaseTest, ErrorsNameTheFileAndCarrySqlitesMessage) {
  const Status status = database_->Execute("SELECT nonsense FROM nowhere");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("test.db"), std::string::npos) << status.error().message;
  EXPECT_NE(status.error().message.find("no such table: nowhere"), std::string::npos) << status.error().message;
}

TEST_F(DatabaseTest, WrongParameterCountIsAnInternalError) {
  const Status status = database_->Execute("INSERT INTO t (i) VALUES (?)", {int64_t{1}, int64_t{2}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kInternal);
  EXPECT_NE(status.error().message.find("2 parameters given, 1 expected"), std::string::npos);
}

TEST_F(DatabaseTest, ConstraintViolationIsInvalidArgument) {
  ASSERT_TRUE(database_->ExecuteScript("CREATE TABLE u (k TEXT PRIMARY KEY);").ok());
  ASSERT_TRUE(database_->Execute("INSERT INTO u VALUES ('a')").ok());
  const Status status = database_->Execute("INSERT INTO u VALUES ('a')");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(status.error().message.find("UNIQUE constraint failed"), std::string::npos) << status.error().message;
}

TEST_F(DatabaseTest, QueryIntWithoutRowIsNotFound) {
  auto value = database_->QueryInt("SELECT i FROM t");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(value.error().kind, ErrorKind::kNotFound);
}

TEST_F(DatabaseTest, TransactionRollsBackUnlessCommitted) {
  {
    auto transaction = Transaction::Begin(*database_);
    ASSERT_TRUE(transaction.ok()) << transaction.error().message;
    ASSERT_TRUE(database_->Execute("INSERT INTO t (i) VALUES (1)").ok());
  }  // dropped without Commit
  EXPECT_EQ(database_->QueryInt("SELECT COUNT(*) FROM t").value(), 0);
  {
    auto transaction = Transaction::Begin(*database_);
    ASSERT_TRUE(transaction.ok());
    ASSERT_TRUE(database_->Execute("INSERT INTO t (i) VALUES (2)").ok());
    ASSERT_TRUE(transaction->Commit().ok());
    EXPECT_FALSE(transaction->Commit().ok()) << "a second commit is a bug";
  }
  EXPECT_EQ(database_->QueryInt("SELECT COUNT(*) FROM t").value(), 1);
}

TEST_F(DatabaseTest, LastInsertRowIdAndChanges) {
  ASSERT_TRUE(database_->Execute("INSERT INTO t (i) VALUES (7)").ok());
  const int64_t first = database_->LastInsertRowId();
  ASSERT_TRUE(database_->Execute("INSERT INTO t (i) VALUES (7)").ok());
  EXPECT_EQ(database_->LastInsertRowId(), first + 1);
  ASSERT_TRUE(database_->Execute("UPDATE t SET i = 8 WHERE i = 7").ok());
  EXPECT_EQ(database_->Changes(), 2);
}

}  // namespace
}  // namespace ksmith
