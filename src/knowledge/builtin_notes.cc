#include "knowledge/builtin_notes.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "core/files.h"
#include "core/strings.h"

namespace ksmith {

namespace fs = std::filesystem;

fs::path DefaultKnowledgeDir() {
  if (const char* root = std::getenv("KSMITH_KNOWLEDGE_DIR"); root && *root) return root;
  return fs::path(KSMITH_SOURCE_DIR) / "knowledge";
}

Result<KnowledgeNote> ParseNoteFile(const std::string& text, const std::string& name) {
  KnowledgeNote note;
  note.kind = "technique";
  note.origin = "builtin:" + name;
  const std::vector<std::string> lines = SplitLines(text);
  size_t line = 0;
  for (; line < lines.size(); ++line) {
    const std::string_view header = Trim(lines[line]);
    if (header == "---") break;
    if (header.empty()) continue;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos) {
      return MakeError(ErrorKind::kParse, "{}:{}: a header line is `key: value` (title, tags, hardware), then `---`",
                       name, line + 1);
    }
    const std::string key(Trim(header.substr(0, colon)));
    const std::string value(Trim(header.substr(colon + 1)));
    if (key == "title") {
      note.title = value;
    } else if (key == "tags") {
      note.tags = value;
    } else if (key == "hardware") {
      note.hardware = value;
    } else {
      return MakeError(ErrorKind::kParse, "{}:{}: unknown header key '{}' (known: title, tags, hardware)", name, line + 1, key);
    }
  }
  if (line == lines.size()) return MakeError(ErrorKind::kParse, "{}: no `---` line ends the header", name);
  std::string body;
  for (++line; line < lines.size(); ++line) body += lines[line] + "\n";
  note.body = std::string(Trim(body));
  if (note.title.empty()) return MakeError(ErrorKind::kParse, "{}: the header has no title", name);
  if (note.body.empty()) return MakeError(ErrorKind::kParse, "{}: the note has no body after `---`", name);
  return note;
}

Result<size_t> SyncBuiltinNotes(KnowledgeStore& store, const fs::path& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return MakeError(ErrorKind::kNotFound, "the knowledge folder {} does not exist (set KSMITH_KNOWLEDGE_DIR)",
                     directory.string());
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".md" && entry.path().filename() != "README.md") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  size_t changed = 0;
  for (const auto& file : files) {
    auto text = ReadFile(file, size_t{1} << 20);
    if (!text.ok()) return text.error();
    auto note = ParseNoteFile(*text, file.filename().string());
    if (!note.ok()) return MakeError(note.error().kind, "{}/{}", directory.string(), note.error().message);
    auto put = store.Put(*note);
    if (!put.ok()) return put.error();
    if (*put) ++changed;
  }
  return changed;
}

}  // namespace ksmith
