#include "store/knowledge_store.h"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "store/database.h"
#include "store/run_store.h"

namespace ksmith {
namespace {

constexpr std::string_view kColumns = "rowid, kind, title, body, tags, hardware, origin, created_at";

KnowledgeNote ReadNote(const Statement& row) {
  KnowledgeNote note;
  note.id = row.Int(0);
  note.kind = row.Text(1);
  note.title = row.Text(2);
  note.body = row.Text(3);
  note.tags = row.Text(4);
  note.hardware = row.Text(5);
  note.origin = row.Text(6);
  note.created_at = row.Text(7);
  return note;
}

Status CheckNote(const KnowledgeNote& note) {
  if (note.title.empty() || note.body.empty()) {
    return MakeError(ErrorKind::kInvalidArgument, "a knowledge note needs a title and a body");
  }
  if (note.kind != "technique" && note.kind != "experience") {
    return MakeError(ErrorKind::kInvalidArgument, "a knowledge note's kind is technique or experience, not '{}'", note.kind);
  }
  return {};
}

}  // namespace

std::string AnyWordQuery(const std::string& words) {
  std::set<std::string> seen;
  std::string query;
  std::string word;
  auto flush = [&] {
    if (word.size() >= 2 && seen.insert(word).second) query += (query.empty() ? "\"" : " OR \"") + word + "\"";
    word.clear();
  };
  for (unsigned char c : words) {
    if (std::isalnum(c) || c == '_') {
      word += static_cast<char>(std::tolower(c));
    } else {
      flush();
    }
  }
  flush();
  return query;
}

KnowledgeStore::KnowledgeStore(std::unique_ptr<Database> database) : database_(std::move(database)) {}
KnowledgeStore::~KnowledgeStore() = default;

Result<std::unique_ptr<KnowledgeStore>> KnowledgeStore::Open(const std::filesystem::path& path) {
  auto database = OpenStoreDatabase(path);
  if (!database.ok()) return database.error();
  return std::unique_ptr<KnowledgeStore>(new KnowledgeStore(std::move(database).value()));
}

Result<int64_t> KnowledgeStore::Add(const KnowledgeNote& note) {
  if (Status valid = CheckNote(note); !valid.ok()) return valid.error();
  std::lock_guard lock(mutex_);
  return AddLocked(note);
}

Result<int64_t> KnowledgeStore::AddLocked(const KnowledgeNote& note) {
  if (Status added = database_->Execute(
          "INSERT INTO knowledge (kind, title, body, tags, hardware, origin, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
          {note.kind, note.title, note.body, note.tags, note.hardware, note.origin.empty() ? "user" : note.origin,
           note.created_at.empty() ? NowUtcIso8601() : note.created_at});
      !added.ok()) {
    return added.error();
  }
  return database_->LastInsertRowId();
}

Result<bool> KnowledgeStore::Put(const KnowledgeNote& note) {
  if (Status valid = CheckNote(note); !valid.ok()) return valid.error();
  if (note.origin.empty()) return MakeError(ErrorKind::kInvalidArgument, "Put needs the note's origin");
  std::lock_guard lock(mutex_);
  // One transaction: several processes syncing the shipped notes at once (a bench's runs) leave
  // one note per origin, and a crash never leaves none.
  auto transaction = Transaction::Begin(*database_);
  if (!transaction.ok()) return transaction.error();
  auto same = database_->QueryInt(
      "SELECT COUNT(*) FROM knowledge WHERE origin = ? AND kind = ? AND title = ? AND body = ? AND tags = ? AND "
      "hardware = ?",
      {note.origin, note.kind, note.title, note.body, note.tags, note.hardware});
  if (!same.ok()) return same.error();
  auto all = database_->QueryInt("SELECT COUNT(*) FROM knowledge WHERE origin = ?", {note.origin});
  if (!all.ok()) return all.error();
  if (*same == 1 && *all == 1) return false;
  if (Status removed = database_->Execute("DELETE FROM knowledge WHERE origin = ?", {note.origin}); !removed.ok()) {
    return removed.error();
  }
  if (auto added = AddLocked(note); !added.ok()) return added.error();
  if (Status committed = transaction->Commit(); !committed.ok()) return committed.error();
  return true;
}

Result<std::vector<KnowledgeNote>> KnowledgeStore::Search(const KnowledgeQuery& query) const {
  std::vector<KnowledgeNote> notes;
  const std::string match = AnyWordQuery(query.words);
  if (match.empty()) return notes;
  std::lock_guard lock(mutex_);
  // Title and tags weigh more than the body: a note about the thing beats one that mentions it.
  auto statement = database_->Query(
      fmt::format("SELECT {}, bm25(knowledge, 4.0, 1.0, 3.0, 2.0) AS score FROM knowledge WHERE knowledge MATCH ? "
                  "AND (? = '' OR kind = ?) ORDER BY score LIMIT ?",
                  kColumns),
      {match, query.kind, query.kind, static_cast<int64_t>(query.limit)});
  if (!statement.ok()) return statement.error();
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    KnowledgeNote note = ReadNote(*statement);
    note.score = statement->Double(8);
    notes.push_back(std::move(note));
  }
  return notes;
}

Result<std::vector<KnowledgeNote>> KnowledgeStore::List(const std::string& kind) const {
  std::lock_guard lock(mutex_);
  auto statement = database_->Query(
      fmt::format("SELECT {} FROM knowledge WHERE ? = '' OR kind = ? ORDER BY rowid", kColumns), {kind, kind});
  if (!statement.ok()) return statement.error();
  std::vector<KnowledgeNote> notes;
  while (true) {
    auto row = statement->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    notes.push_back(ReadNote(*statement));
  }
  return notes;
}

Status KnowledgeStore::Remove(int64_t id) {
  std::lock_guard lock(mutex_);
  auto found = database_->QueryInt("SELECT COUNT(*) FROM knowledge WHERE rowid = ?", {id});
  if (!found.ok()) return found.error();
  if (*found == 0) return MakeError(ErrorKind::kNotFound, "no knowledge note {} in {}", id, database_->path().string());
  return database_->Execute("DELETE FROM knowledge WHERE rowid = ?", {id});
}

}  // namespace ksmith
