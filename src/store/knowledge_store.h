// The knowledge base: notes on optimization techniques (written by ksmith's authors, per category
// and hardware: knowledge/*.md) and experience harvested from runs (winning kernels with their
// facts, failures with their explanations), in the run store's file, searched by SQLite FTS5
// (bm25 ranking; porter stemming, so "vectorized" finds "vectorize"). Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

class Database;

struct KnowledgeNote {
  int64_t id = 0;
  std::string kind = "technique";  // "technique" (written by people) or "experience" (harvested from a run)
  std::string title;
  std::string body;
  std::string tags;      // words a query may match: "elementwise memory-bound cuda"
  std::string hardware;  // "" for any; else words naming it ("H200 hopper", "avx512")
  std::string origin;    // "builtin:tiling.md", "run:<run_id>#<candidate>", "user"
  std::string created_at;
  double score = 0;      // search: bm25's, lower is a better match
};

struct KnowledgeQuery {
  std::string words;     // any of them may match (title, body, tags, hardware), ranked by bm25
  std::string kind;      // "" for any
  size_t limit = 10;
};

class KnowledgeStore {
 public:
  /// Opens the store's file (creating and migrating it as RunStore does).
  static Result<std::unique_ptr<KnowledgeStore>> Open(const std::filesystem::path& path);
  ~KnowledgeStore();

  /// Adds a note; returns its id. A title or body that is empty is kInvalidArgument.
  Result<int64_t> Add(const KnowledgeNote& note);
  /// Replaces the notes of `note.origin` with `note` (a built-in file read again, a run harvested
  /// again): true when it changed anything.
  Result<bool> Put(const KnowledgeNote& note);
  /// The notes matching any of the query's words, best first; none for a query without words.
  Result<std::vector<KnowledgeNote>> Search(const KnowledgeQuery& query) const;
  /// Every note (of `kind`, when not empty), oldest first.
  Result<std::vector<KnowledgeNote>> List(const std::string& kind = "") const;
  /// Removes the note; kNotFound when there is none with that id.
  Status Remove(int64_t id);

 private:
  explicit KnowledgeStore(std::unique_ptr<Database> database);
  Result<int64_t> AddLocked(const KnowledgeNote& note);  // the caller holds mutex_
  mutable std::mutex mutex_;
  std::unique_ptr<Database> database_;
};

/// An FTS5 query matching any of `words`' words (letters, digits, '_'), each quoted so that no
/// word is read as FTS5 syntax; empty when it has none.
std::string AnyWordQuery(const std::string& words);

}  // namespace ksmith
