#include "store/database.h"

#include <sqlite3.h>

#include <system_error>
#include <utility>

#include "core/strings.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// Enough of a statement to recognize it in an error message.
constexpr size_t kQuotedSqlChars = 80;

std::string QuoteSql(std::string_view sql) {
  std::string text(Trim(sql));
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (text.size() > kQuotedSqlChars) text = text.substr(0, kQuotedSqlChars) + "...";
  return text;
}

// A file that cannot be used as it is (read-only, unopenable, denied) is kInvalidArgument and a
// damaged one kDamaged: both are the user's to fix, and the commands exit 2 for them (cli/app.h,
// StoreExitCode). A failure of a usable file (disk full, I/O) stays kIo.
ErrorKind KindOf(int code) {
  switch (code & 0xff) {
    case SQLITE_CONSTRAINT: return ErrorKind::kInvalidArgument;
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH: return ErrorKind::kInvalidArgument;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return ErrorKind::kDamaged;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return ErrorKind::kTimeout;
    case SQLITE_MISUSE:
    case SQLITE_RANGE: return ErrorKind::kInternal;
    default: return ErrorKind::kIo;
  }
}

// What a person can do about a failure of the file itself; empty where the failure is ksmith's
// own (a bad statement), and the statement is then what the message needs.
std::string Advice(int code) {
  switch (code & 0xff) {
    case SQLITE_READONLY:
      return "the file or its folder is read-only to ksmith; make both writable (chmod u+w), or pass --db with a "
             "store in a folder you can write";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "the file is damaged; move it aside (ksmith starts a new store in its place) or pass --db with "
             "another file, and `sqlite3 FILE .recover` may save the runs it held";
    case SQLITE_FULL: return "the disk is full; free some space, or pass --db with a store on another disk";
    case SQLITE_IOERR: return "the disk failed to read or write it; check the disk and its free space";
    case SQLITE_CANTOPEN: return "check that its folder exists and that ksmith may write there";
    case SQLITE_PERM:
    case SQLITE_AUTH: return "access was denied; check the file's permissions";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process kept writing to it past the busy timeout; wait for it to finish, or pass --db with "
             "another store";
    default: return "";
  }
}

}  // namespace

SqlValue SqlOptional(const std::optional<int64_t>& value) {
  if (value) return *value;
  return nullptr;
}

SqlValue SqlOptional(const std::optional<double>& value) {
  if (value) return *value;
  return nullptr;
}

Statement::Statement(const Database* database, sqlite3_stmt* statement)
    : database_(database), statement_(statement) {}

Statement::Statement(Statement&& other) noexcept
    : database_(other.database_), statement_(std::exchange(other.statement_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(statement_);
    database_ = other.database_;
    statement_ = std::exchange(other.statement_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Result<bool> Statement::Step() {
  const int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  const char* sql = sqlite3_sql(statement_);
  return database_->LastError(QuoteSql(sql != nullptr ? sql : ""));
}

bool Statement::IsNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

int64_t Statement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(statement_, column); }

std::string Statement::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  // The byte count, not strlen: bodies received from servers may hold NULs.
  const int bytes = sqlite3_column_bytes(statement_, column);
  return text == nullptr ? std::string() : std::string(text, static_cast<size_t>(bytes));
}

std::optional<int64_t> Statement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

std::optional<double> Statement::OptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Double(column);
}

std::optional<std::string> Statement::OptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Text(column);
}

Result<std::unique_ptr<Database>> Database::Open(const fs::path& path) {
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);
  if (error) {
    return MakeError(ErrorKind::kInvalidArgument, "the run store {}: cannot create its folder {}: {}; name a store "
                     "in a folder you can write", path.string(), path.parent_path().string(), error.message());
  }
  sqlite3* connection = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int code = sqlite3_open_v2(path.c_str(), &connection, flags, nullptr);
  if (code != SQLITE_OK) {
    // A connection is returned even on failure, holding the message.
    const std::string message = connection != nullptr ? sqlite3_errmsg(connection) : sqlite3_errstr(code);
    sqlite3_close(connection);
    const std::string advice = Advice(code);
    return MakeError(KindOf(code), "the run store {}: cannot open: {}{}{}", path.string(), message,
                     advice.empty() ? "" : "; ", advice);
  }
  sqlite3_extended_result_codes(connection, 1);
  return std::unique_ptr<Database>(new Database(connection, path));
}

Database::Database(sqlite3* connection, fs::path path) : connection_(connection), path_(std::move(path)) {}

// sqlite3_close_v2 defers the close until every statement is finalized, so a Statement that
// outlives its Database by mistake cannot crash the process.
Database::~Database() { sqlite3_close_v2(connection_); }

Error Database::LastError(std::string_view what) const {
  const int code = sqlite3_extended_errcode(connection_);
  // A failure of the file says which file, what is wrong and what to do, without the SQL.
  if (const std::string advice = Advice(code); !advice.empty()) {
    return MakeError(KindOf(code), "the run store {}: {}; {}", path_.string(), sqlite3_errmsg(connection_), advice);
  }
  return MakeError(KindOf(code), "{}: {}: {}", path_.string(), what, sqlite3_errmsg(connection_));
}

Result<Statement> Database::Query(std::string_view sql, const std::vector<SqlValue>& parameters) const {
  sqlite3_stmt* raw = nullptr;
  const int code = sqlite3_prepare_v2(connection_, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  if (code != SQLITE_OK) return LastError(QuoteSql(sql));
  Statement statement(this, raw);
  const int expected = sqlite3_bind_parameter_count(raw);
  if (expected != static_cast<int>(parameters.size())) {
    return MakeError(ErrorKind::kInternal, "{}: {}: {} parameters given, {} expected", path_.string(),
                     QuoteSql(sql), parameters.size(), expected);
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    const SqlValue& value = parameters[i];
    int bound = SQLITE_OK;
    if (std::holds_alternative<std::nullptr_t>(value)) {
      bound = sqlite3_bind_null(raw, index);
    } else if (const auto* integer = std::get_if<int64_t>(&value)) {
      bound = sqlite3_bind_int64(raw, index, *integer);
    } else if (const auto* real = std::get_if<double>(&value)) {
      bound = sqlite3_bind_double(raw, index, *real);
    } else {
      const std::string& text = std::get<std::string>(value);
      bound = sqlite3_bind_text64(raw, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
    if (bound != SQLITE_OK) return LastError(QuoteSql(sql));
  }
  return statement;
}

Status Database::Execute(std::string_view sql, const std::vector<SqlValue>& parameters) {
  auto statement = Query(sql, parameters);
  if (!statement.ok()) return statement.error();
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) return {};
  }
}

Status Database::ExecuteScript(std::string_view sql) {
  const std::string script(sql);
  char* message = nullptr;
  const int code = sqlite3_exec(connection_, script.c_str(), nullptr, nullptr, &message);
  if (code == SQLITE_OK) return {};
  const std::string text = message != nullptr ? message : sqlite3_errstr(code);
  sqlite3_free(message);
  return MakeError(KindOf(code), "{}: {}", path_.string(), text);
}

Result<Statement> Database::QueryFirstRow(std::string_view sql, const std::vector<SqlValue>& parameters) const {
  auto statement = Query(sql, parameters);
  if (!statement.ok()) return statement.error();
  auto row = statement->Step();
  if (!row.ok()) return row.error();
  if (!*row) return MakeError(ErrorKind::kNotFound, "{}: {}: no row", path_.string(), QuoteSql(sql));
  return statement;
}

Result<int64_t> Database::QueryInt(std::string_view sql, const std::vector<SqlValue>& parameters) const {
  auto statement = QueryFirstRow(sql, parameters);
  if (!statement.ok()) return statement.error();
  return statement->Int(0);
}

Result<std::string> Database::QueryText(std::string_view sql, const std::vector<SqlValue>& parameters) const {
  auto statement = QueryFirstRow(sql, parameters);
  if (!statement.ok()) return statement.error();
  return statement->Text(0);
}

int64_t Database::LastInsertRowId() const { return sqlite3_last_insert_rowid(connection_); }

int64_t Database::Changes() const { return sqlite3_changes64(connection_); }

bool Database::ReadOnly() const { return sqlite3_db_readonly(connection_, "main") == 1; }

Result<Transaction> Transaction::Begin(Database& database) {
  if (Status begun = database.Execute("BEGIN IMMEDIATE"); !begun.ok()) return begun.error();
  return Transaction(&database);
}

Transaction::Transaction(Transaction&& other) noexcept : database_(std::exchange(other.database_, nullptr)) {}

Transaction::~Transaction() {
  if (database_ == nullptr) return;
  // Nothing to report from a destructor: a failed rollback leaves the transaction to be rolled
  // back when the connection closes.
  (void)database_->Execute("ROLLBACK");
}

Status Transaction::Commit() {
  Database* database = std::exchange(database_, nullptr);
  if (database == nullptr) return MakeError(ErrorKind::kInternal, "commit of a finished transaction");
  Status committed = database->Execute("COMMIT");
  if (!committed.ok()) (void)database->Execute("ROLLBACK");
  return committed;
}

}  // namespace ksmith
