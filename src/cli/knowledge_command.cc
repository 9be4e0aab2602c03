// `ksmith knowledge add|search|list|harvest`: the knowledge base in the run store's file
// (store/knowledge_store.h). The notes ksmith ships (knowledge/*.md) are brought up to date
// first, so that search and list always see them.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/optimize_loop.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "core/files.h"
#include "core/strings.h"
#include "knowledge/builtin_notes.h"
#include "knowledge/harvest.h"
#include "knowledge/retrieval.h"
#include "store/knowledge_store.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct KnowledgeFlags {
  std::string db;
  bool json = false;
  std::string title, tags, hardware, body, file, kind, query, run_id;
  int limit = 10;
};

nlohmann::json NoteJson(const KnowledgeNote& note, bool with_score) {
  nlohmann::json json = {{"id", note.id},         {"kind", note.kind},         {"title", note.title},
                         {"tags", note.tags},     {"hardware", note.hardware}, {"origin", note.origin},
                         {"created_at", note.created_at}, {"body", note.body}};
  if (with_score) json["score"] = note.score;
  return json;
}

// The store with the shipped notes synced; a missing knowledge folder is said once and skipped.
Result<std::unique_ptr<KnowledgeStore>> OpenKnowledge(const KnowledgeFlags& flags) {
  auto path = StorePathFromFlag(flags.db);
  if (!path.ok()) return path.error();
  auto store = KnowledgeStore::Open(*path);
  if (!store.ok()) return store.error();
  if (auto synced = SyncBuiltinNotes(**store, DefaultKnowledgeDir()); !synced.ok()) {
    std::fprintf(stderr, "ksmith: %s: only the notes in the store are used\n", synced.error().message.c_str());
  }
  return store;
}

int Fail(const Error& error) {
  PrintError(error.message);
  return error.kind == ErrorKind::kInvalidArgument || error.kind == ErrorKind::kParse || error.kind == ErrorKind::kNotFound
             ? kExitUsage
             : StoreExitCode(error);
}

void PrintNotes(const std::vector<KnowledgeNote>& notes, bool json, bool scored) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& note : notes) list.push_back(NoteJson(note, scored));
    std::printf("%s\n", list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  for (const auto& note : notes) {
    std::printf("#%-5lld %-10s %s\n", static_cast<long long>(note.id), note.kind.c_str(), note.title.c_str());
    std::printf("       tags: %s%s; from %s\n", note.tags.c_str(),
                note.hardware.empty() ? "" : ("; hardware: " + note.hardware).c_str(), note.origin.c_str());
    if (scored) std::printf("       %s\n", FirstLine(note.body, 150).c_str());
  }
  if (notes.empty()) std::printf("no notes\n");
}

int Add(const KnowledgeFlags& flags) {
  KnowledgeNote note;
  note.kind = flags.kind.empty() ? "technique" : flags.kind;
  note.title = flags.title;
  note.tags = flags.tags;
  note.hardware = flags.hardware;
  note.origin = "user";
  note.body = flags.body;
  if (!flags.file.empty()) {
    auto text = ReadFile(flags.file, size_t{1} << 20);
    if (!text.ok()) return Fail(text.error());
    note.body = *text;
  }
  if (note.title.empty() || Trim(note.body).empty()) {
    PrintError("knowledge add needs --title and a body (--body TEXT or --file FILE)");
    return kExitUsage;
  }
  auto store = OpenKnowledge(flags);
  if (!store.ok()) return Fail(store.error());
  auto id = (*store)->Add(note);
  if (!id.ok()) return Fail(id.error());
  if (flags.json) {
    std::printf("%s\n", nlohmann::json{{"id", *id}, {"title", note.title}}.dump(2).c_str());
  } else {
    std::printf("added note #%lld: %s\n", static_cast<long long>(*id), note.title.c_str());
  }
  return kExitOk;
}

int Search(const KnowledgeFlags& flags) {
  auto store = OpenKnowledge(flags);
  if (!store.ok()) return Fail(store.error());
  if (AnyWordQuery(flags.query).empty()) {
    PrintError("knowledge search needs words to look for, e.g. `ksmith knowledge search vectorized loads`");
    return kExitUsage;
  }
  auto notes = (*store)->Search({flags.query, flags.kind, static_cast<size_t>(std::max(1, flags.limit))});
  if (!notes.ok()) return Fail(notes.error());
  PrintNotes(*notes, flags.json, true);
  return kExitOk;
}

int List(const KnowledgeFlags& flags) {
  auto store = OpenKnowledge(flags);
  if (!store.ok()) return Fail(store.error());
  auto notes = (*store)->List(flags.kind);
  if (!notes.ok()) return Fail(notes.error());
  PrintNotes(*notes, flags.json, false);
  return kExitOk;
}

int Harvest(const KnowledgeFlags& flags) {
  auto path = StorePathFromFlag(flags.db);
  if (!path.ok()) return Fail(path.error());
  auto runs = RunStore::Open(*path);
  if (!runs.ok()) return Fail(runs.error());
  auto run = (*runs)->GetRun(flags.run_id);
  if (!run.ok()) return Fail(run.error());
  auto state = LoadRunState(**runs, flags.run_id);
  if (!state.ok()) return Fail(state.error());
  auto store = OpenKnowledge(flags);
  if (!store.ok()) return Fail(store.error());
  auto task = TaskRegistry::Default().Find(run->task);
  const std::string category = task.ok() ? task->category : "";
  // Where the notes apply: the architecture the run's kernels were built for, as optimize says it.
  std::string sm_arch;
  if (const Attempt* best = state->Best(); best != nullptr && best->verdict) {
    const auto& target = best->verdict->provenance.value("target", nlohmann::json::object());
    if (target.is_object()) sm_arch = target.value("arch", "");
  }
  auto harvested = HarvestInto(**store, *run, *state, category, NoteHardware(run->backend, sm_arch));
  if (!harvested.ok()) return Fail(harvested.error());
  if (flags.json) {
    std::printf("%s\n", nlohmann::json{{"run_id", run->id}, {"notes", *harvested}}.dump(2).c_str());
  } else {
    std::printf("harvested %zu new or changed notes from run %s\n", *harvested, run->id.c_str());
  }
  return kExitOk;
}

}  // namespace

CommandHandler AddKnowledgeCommand(CLI::App& app) {
  auto flags = std::make_shared<KnowledgeFlags>();
  app.require_subcommand(1, 1);
  auto common = [flags](CLI::App* command, const std::string& json_help) {
    command->add_option("--db", flags->db, "The run store holding the knowledge base (default $KSMITH_DB, else runs.db "
                        "in the cache folder)");
    command->add_flag("--json", flags->json, json_help);
  };
  CLI::App* add = app.add_subcommand("add", "Add a note on a technique (or an experience)");
  add->add_option("--title", flags->title, "What the note is about, in a few words")->required();
  add->add_option("--tags", flags->tags, "Words a search should find it by: category, bottleneck, error class...");
  add->add_option("--hardware", flags->hardware,
                  "Where it applies: empty for anywhere, else the backend first (cpu, cuda), then words naming "
                  "hardware (\"cuda hopper h100 h200\")");
  add->add_option("--body", flags->body, "The note's text (Markdown)");
  add->add_option("--file", flags->file, "Read the note's text from this file");
  add->add_option("--kind", flags->kind, "technique (the default) or experience")->check(CLI::IsMember({"technique", "experience"}));
  common(add, "Print the new note's id as JSON");
  CLI::App* search = app.add_subcommand("search", "The notes that match words, best first (full-text, bm25)");
  search->add_option("words", flags->query, "What to look for, e.g. \"vectorized loads memory-bound\"")->required();
  search->add_option("--limit", flags->limit, "At most this many notes (default 10)")->check(CLI::Range(1, 1000));
  search->add_option("--kind", flags->kind, "Only technique or experience notes")->check(CLI::IsMember({"technique", "experience"}));
  common(search, "Print a JSON array, bodies and scores included");
  CLI::App* list = app.add_subcommand("list", "Every note, oldest first");
  list->add_option("--kind", flags->kind, "Only technique or experience notes")->check(CLI::IsMember({"technique", "experience"}));
  common(list, "Print a JSON array, bodies included");
  CLI::App* harvest = app.add_subcommand("harvest", "Add a run's experience: its best kernel and its failures of each kind");
  harvest->add_option("run_id", flags->run_id, "The run (see `ksmith runs list`)")->required();
  common(harvest, "Print how many notes were harvested as JSON");
  return [flags, add, search, list] {
    if (add->parsed()) return Add(*flags);
    if (search->parsed()) return Search(*flags);
    if (list->parsed()) return List(*flags);
    return Harvest(*flags);
  };
}

}  // namespace ksmith
