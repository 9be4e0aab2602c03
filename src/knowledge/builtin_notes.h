// The technique notes ksmith ships (knowledge/*.md): each file a note with a small header,
//
//   title: Vectorized loads and stores
//   tags: elementwise memory-bound bandwidth coalescing cuda
//   hardware: (empty for any; else words such as "hopper H100 H200")
//   ---
//   the body, in Markdown
//
// kept in the knowledge base with origin "builtin:<file name>", replaced when the file changes.
#pragma once

#include <filesystem>
#include <string>

#include "core/result.h"
#include "store/knowledge_store.h"

namespace ksmith {

/// $KSMITH_KNOWLEDGE_DIR, else the source tree's knowledge/.
std::filesystem::path DefaultKnowledgeDir();

/// One note file read; `name` (the file's name) is its origin and names it in errors.
Result<KnowledgeNote> ParseNoteFile(const std::string& text, const std::string& name);

/// Puts every *.md of `directory` into the store; the number of notes added or changed. A missing
/// directory is kNotFound naming it; a malformed file is an error naming the file and line.
Result<size_t> SyncBuiltinNotes(KnowledgeStore& store, const std::filesystem::path& directory);

}  // namespace ksmith
