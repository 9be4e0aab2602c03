// A thin RAII layer over the SQLite C API: one connection, prepared statements with bound
// parameters, and transactions that roll back unless committed. Every failure is a Result whose
// message names the file and carries SQLite's own words (sqlite3_errmsg).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ksmith {

/// One bound parameter: NULL, an integer, a real or text (bytes kept exactly, NULs included).
using SqlValue = std::variant<std::nullptr_t, int64_t, double, std::string>;

/// NULL when absent.
SqlValue SqlOptional(const std::optional<int64_t>& value);
SqlValue SqlOptional(const std::optional<double>& value);

class Database;

/// A prepared statement being stepped through its rows. Move-only; finalized on destruction.
/// Column readers take 0-based column indexes and are valid after Step() returned true.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  /// true: a row is ready; false: the statement is done. Errors name the file and the SQL.
  Result<bool> Step();

  bool IsNull(int column) const;
  int64_t Int(int column) const;    // 0 for NULL
  double Double(int column) const;  // 0 for NULL
  std::string Text(int column) const;  // "" for NULL
  std::optional<int64_t> OptionalInt(int column) const;
  std::optional<double> OptionalDouble(int column) const;
  std::optional<std::string> OptionalText(int column) const;

 private:
  friend class Database;
  Statement(const Database* database, sqlite3_stmt* statement);
  const Database* database_;
  sqlite3_stmt* statement_;
};

/// One open connection. Not thread-safe: callers that share one serialize their calls.
class Database {
 public:
  /// Opens (creating it and its parent folders when missing) without reading it: SQLite reads
  /// lazily, so a file that is not a database is only found out by the first statement.
  static Result<std::unique_ptr<Database>> Open(const std::filesystem::path& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Runs one statement to completion, discarding any rows.
  Status Execute(std::string_view sql, const std::vector<SqlValue>& parameters = {});
  /// Runs several `;`-separated statements without parameters (a migration script).
  Status ExecuteScript(std::string_view sql);
  /// Prepares and binds one statement; step through its rows with Statement::Step().
  Result<Statement> Query(std::string_view sql, const std::vector<SqlValue>& parameters = {}) const;
  /// The first column of the first row; an error when there is no row.
  Result<int64_t> QueryInt(std::string_view sql, const std::vector<SqlValue>& parameters = {}) const;
  Result<std::string> QueryText(std::string_view sql, const std::vector<SqlValue>& parameters = {}) const;

  int64_t LastInsertRowId() const;
  /// Rows changed by the last INSERT, UPDATE or DELETE.
  int64_t Changes() const;
  /// Whether SQLite opened the file read-only (it does, silently, for a file ksmith may not write).
  bool ReadOnly() const;
  const std::filesystem::path& path() const { return path_; }

  /// "<path>: <what>: <sqlite3_errmsg>", with kIo as the kind unless the error says otherwise.
  Error LastError(std::string_view what) const;

 private:
  Database(sqlite3* connection, std::filesystem::path path);
  /// The statement stepped onto its first row; kNotFound when there is none.
  Result<Statement> QueryFirstRow(std::string_view sql, const std::vector<SqlValue>& parameters) const;
  sqlite3* connection_;
  std::filesystem::path path_;
};

/// BEGIN IMMEDIATE on construction (the write lock is taken up front, so a busy file waits on
/// the busy timeout here instead of failing mid-transaction); ROLLBACK on destruction unless
/// Commit() succeeded.
class Transaction {
 public:
  static Result<Transaction> Begin(Database& database);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Commit();

 private:
  explicit Transaction(Database* database) : database_(database) {}
  Database* database_;  // nullptr once committed, rolled back or moved from
};

}  // namespace ksmith
