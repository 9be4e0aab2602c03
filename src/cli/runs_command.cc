// `ksmith runs list|show` and `ksmith export`: reading the run store.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "agent/activity_clock.h"
#include "agent/elite_archive.h"
#include "agent/hypothesis_ledger.h"
#include "agent/proposal_review.h"
#include "agent/optimize_loop.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "core/files.h"
#include "core/strings.h"
#include "agent/run_report.h"
#include "store/export.h"
#include "store/run_store.h"

namespace ksmith {
namespace {

struct RunsFlags {
  std::string db;
  std::string run_id;
  bool json = false;
  std::string format = "trajectory";
  std::string output;
};

Result<std::unique_ptr<RunStore>> OpenStore(const std::string& db) {
  auto path = StorePathFromFlag(db);
  if (!path.ok()) return path.error();
  std::error_code error;
  if (!std::filesystem::exists(*path, error)) {
    return MakeError(ErrorKind::kNotFound, "no run store at {} (runs are recorded there by `ksmith optimize`)",
                     path->string());
  }
  return RunStore::Open(*path);
}

// "1.86x [1.72, 1.92]": the median speedup with its 95% interval, from the stored verdict.
std::string SpeedupCell(const CandidateRecord& candidate) {
  if (!candidate.speedup) return "-";
  // The verdict's top-level "speedup_ci95": [low, high] (docs/verdict.md).
  const auto interval = candidate.verdict ? candidate.verdict->value("speedup_ci95", nlohmann::json()) : nlohmann::json();
  if (interval.is_array() && interval.size() == 2 && interval[0].is_number() && interval[1].is_number()) {
    return fmt::format("{:.2f}x [{:.2f}, {:.2f}]", *candidate.speedup, interval[0].get<double>(),
                       interval[1].get<double>());
  }
  return fmt::format("{:.2f}x", *candidate.speedup);
}

// Why a run stands where it does; for an interrupted one, what happened and how to go on.
std::string StopReason(const RunRecord& run) {
  if (DisplayStatus(run) == "interrupted") {
    return fmt::format("the process that ran it ({}) is gone; `ksmith optimize --resume {}` continues it",
                       run.owner.Describe(), run.id);
  }
  if (run.status == "running") return "running now, " + run.owner.Describe();
  return run.stop_reason;
}

nlohmann::json RunJson(const RunRecord& run) {
  nlohmann::json json = {{"run_id", run.id},           {"task", run.task},         {"backend", run.backend},
                         {"strategy", run.strategy},   {"provider", run.provider}, {"model", run.model},
                         {"status", DisplayStatus(run)}, {"stop_reason", StopReason(run)},
                         {"created_at", run.created_at}, {"finished_at", run.finished_at},
                         {"candidates", run.candidates}, {"passed", run.passed}, {"llm_calls", run.llm_calls},
                         {"tokens", run.tokens},       {"cost", run.cost_dollars}, {"config", run.config},
                         {"activity", run.activity}};
  json["best_candidate_id"] = run.best_candidate_id ? nlohmann::json(*run.best_candidate_id) : nlohmann::json();
  json["best_speedup"] = run.best_speedup ? nlohmann::json(*run.best_speedup) : nlohmann::json();
  json["owner"] = {{"host", run.owner.host}, {"pid", run.owner.pid}};
  return json;
}

int ListRuns(const RunsFlags& flags) {
  auto store = OpenStore(flags.db);
  if (!store.ok()) {
    PrintError(store.error().message);
    return StoreExitCode(store.error());
  }
  auto runs = (*store)->ListRuns();
  if (!runs.ok()) {
    PrintError(runs.error().message);
    return StoreExitCode(runs.error());
  }
  if (flags.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& run : *runs) list.push_back(RunJson(run));
    // Replace, not throw on, bytes that are not UTF-8: a damaged text column must not end the listing.
    std::printf("%s\n", list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  if (runs->empty()) {
    std::printf("no runs yet\n");
    return kExitOk;
  }
  // Columns sized to what they hold: a long task name (an imported KernelBench problem's) shifted
  // every column after it.
  std::vector<std::vector<std::string>> rows = {
      {"run", "task", "backend", "strategy", "status", "evaluated", "passed", "best", "model"}};
  for (const auto& run : *runs) {
    rows.push_back({run.id, run.task, run.backend, run.strategy, DisplayStatus(run), std::to_string(run.candidates),
                    std::to_string(run.passed), run.best_speedup ? fmt::format("{:.2f}x", *run.best_speedup) : "-",
                    run.model.empty() ? "-" : run.model});
  }
  std::fputs(AlignedTable(rows).c_str(), stdout);
  return kExitOk;
}

int ShowRun(const RunsFlags& flags) {
  auto store = OpenStore(flags.db);
  if (!store.ok()) {
    PrintError(store.error().message);
    return StoreExitCode(store.error());
  }
  auto run = (*store)->GetRun(flags.run_id);
  if (!run.ok()) {
    PrintError(run.error().message);
    return StoreExitCode(run.error());
  }
  auto candidates = (*store)->Candidates(flags.run_id);
  if (!candidates.ok()) {
    PrintError(candidates.error().message);
    return StoreExitCode(candidates.error());
  }
  auto calls = (*store)->LlmCalls(flags.run_id);
  if (!calls.ok()) {
    PrintError(calls.error().message);
    return StoreExitCode(calls.error());
  }
  const std::string retries = RetrySummary(*calls);
  // A search's archive (evolve): the fastest kernel of each kind, from the stored verdicts.
  std::optional<EliteArchive> archive;
  std::optional<HypothesisLedger> ledger;  // a team's ideas and what they measured
  std::vector<Note> notes;                 // a team's plans and judgments
  std::vector<Intervention> interventions; // what the person did (interactive runs)
  if (auto state = LoadRunState(**store, flags.run_id); state.ok()) {
    if (HasSearchPlacements(*state)) archive = ArchiveOf(*state);
    if (auto read = HypothesisLedger::FromRun(*state); !read.empty()) ledger = std::move(read);
    notes = state->notes;
    interventions = state->interventions;
  }
  if (flags.json) {
    nlohmann::json json = RunJson(*run);
    json["model_call_retries"] = retries;
    // "candidate" and "parent" are the numbers in the run that the summary, report.md and the text
    // form give; "candidate_id" and "parent_id" are the store's ids, unique across its runs.
    const std::map<int64_t, int64_t> number_of = CandidateNumbers(*candidates);
    const auto number = [&number_of](std::optional<int64_t> id) {
      const auto found = id ? number_of.find(*id) : number_of.end();
      return found != number_of.end() ? nlohmann::json(found->second) : nlohmann::json();
    };
    json["best_candidate"] = number(run->best_candidate_id);
    json["candidates_list"] = nlohmann::json::array();
    for (const auto& candidate : *candidates) {
      nlohmann::json item = {{"candidate", candidate.number()}, {"parent", number(candidate.parent_id)},
                             {"candidate_id", candidate.id}, {"sequence", candidate.sequence},
                             {"origin", candidate.origin},   {"role", candidate.role},
                             {"status", candidate.status},   {"knobs", candidate.knobs},
                             {"search", candidate.search},
                             {"extraction_error", candidate.extraction_error}, {"explanation", candidate.explanation}};
      item["parent_id"] = candidate.parent_id ? nlohmann::json(*candidate.parent_id) : nlohmann::json();
      item["speedup"] = candidate.speedup ? nlohmann::json(*candidate.speedup) : nlohmann::json();
      item["verdict"] = candidate.verdict ? *candidate.verdict : nlohmann::json();
      json["candidates_list"].push_back(std::move(item));
    }
    if (archive) json["archive"] = archive->ToJson();
    if (ledger) json["ledger"] = ledger->ToJson();
    if (!notes.empty()) {
      json["notes"] = nlohmann::json::array();
      for (const Note& note : notes) {
        json["notes"].push_back({{"role", note.role}, {"after_candidate", note.after_attempts}, {"content", note.content}});
      }
    }
    if (!interventions.empty()) {
      json["interventions"] = nlohmann::json::array();
      for (const Intervention& intervention : interventions) {
        json["interventions"].push_back({{"action", intervention.action},
                                         {"after_candidate", intervention.after_attempts},
                                         {"candidate", intervention.candidate_number ? nlohmann::json(*intervention.candidate_number)
                                                                                     : nlohmann::json()},
                                         {"detail", intervention.detail}});
      }
    }
    std::printf("%s\n", json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::printf("run %s: %s on %s, strategy %s%s\n", run->id.c_str(), run->task.c_str(), run->backend.c_str(),
              run->strategy.c_str(), run->model.empty() ? "" : (", model " + run->model + " via " + run->provider).c_str());
  std::printf("  %s (%s); started %s, ended %s\n", DisplayStatus(*run).c_str(), StopReason(*run).c_str(), run->created_at.c_str(),
              run->finished_at.empty() ? "-" : run->finished_at.c_str());
  std::printf("  %lld evaluated, %lld passed, %lld model calls, %lld tokens, $%.4f\n",
              static_cast<long long>(run->candidates), static_cast<long long>(run->passed),
              static_cast<long long>(run->llm_calls), static_cast<long long>(run->tokens), run->cost_dollars);
  if (!retries.empty()) std::printf("  %s\n", retries.c_str());
  if (const Activity activity = Activity::FromJson(run->activity); activity.wall_s > 0) {
    std::printf("  %s\n", activity.Describe().c_str());
  }
  for (const auto& candidate : *candidates) {
    std::string outcome = candidate.extraction_error.empty() ? "" : FirstLine(candidate.extraction_error, 80);
    if (candidate.verdict) outcome = FirstLine(candidate.verdict->value("reason", std::string()), 80);
    const std::string placement = DescribePlacement(candidate.search);
    std::printf("  #%-4lld %-5s %-20s %-22s  %s%s%s\n", static_cast<long long>(candidate.number()),
                candidate.origin.c_str(), candidate.status.c_str(), SpeedupCell(candidate).c_str(),
                placement.empty() ? "" : ("[" + placement + "] ").c_str(),
                candidate.knobs.empty() ? "" : (candidate.knobs.dump() + " ").c_str(), outcome.c_str());
  }
  if (archive) {
    std::printf("  archive (%zu kinds of kernel, fastest first):\n", archive->size());
    for (const Elite* elite : archive->Ranked()) {
      std::printf("    %-28s #%-4lld %.2fx  %s\n", elite->features.Cell().c_str(), static_cast<long long>(elite->number),
                  elite->speedup, elite->features.Describe().c_str());
    }
  }
  if (ledger) {
    std::printf("  hypotheses (the ideas tried, in order):\n");
    for (const auto& line : SplitLines(ledger->Render())) std::printf("    %s\n", line.c_str());
  }
  for (const Note& note : notes) {
    std::printf("  %s after candidate %zu: %s\n", note.role.c_str(), note.after_attempts,
                FirstLine(std::string(Trim(note.content)), 120).c_str());
  }
  if (!interventions.empty()) std::printf("  the person's decisions (interactive):\n");
  for (const Intervention& intervention : interventions) {
    std::printf("    after candidate %zu: %s\n", intervention.after_attempts,
                FirstLine(DescribeIntervention(intervention), 120).c_str());
  }
  return kExitOk;
}

int ExportRunCommand(const RunsFlags& flags) {
  auto format = ParseExportFormat(flags.format);
  if (!format.ok()) {
    PrintError(format.error().message);
    return kExitUsage;
  }
  if (flags.json && flags.output.empty()) {
    PrintError("--json prints a summary on stdout, where the JSONL would go too: add -o FILE for the JSONL");
    return kExitUsage;
  }
  auto store = OpenStore(flags.db);
  if (!store.ok()) {
    PrintError(store.error().message);
    return StoreExitCode(store.error());
  }
  if (auto run = (*store)->GetRun(flags.run_id); !run.ok()) {
    PrintError(run.error().message);
    return StoreExitCode(run.error());
  }
  std::ofstream file;
  if (!flags.output.empty()) {
    if (Status writable = CheckWritableFile(flags.output); !writable.ok()) {
      PrintError(fmt::format("--output {}: cannot write it ({}); name a file you can write", flags.output,
                             writable.error().message));
      return kExitUsage;
    }
    file.open(flags.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      PrintError(fmt::format("cannot write {}: {}", flags.output, std::strerror(errno)));
      return kExitInfra;
    }
  }
  std::ostream& out = flags.output.empty() ? std::cout : file;
  auto exported = ExportRun(**store, flags.run_id, *format, out);
  if (!exported.ok()) {
    PrintError(exported.error().message);
    return StoreExitCode(exported.error());
  }
  out.flush();
  // A run without an example of the format is an answer, not a failure (exit 0): exporting every
  // run of a store meets tune runs and runs where nothing passed. It is said, never silent.
  if (!exported->note.empty()) std::fprintf(stderr, "ksmith: nothing written: %s\n", exported->note.c_str());
  if (!flags.output.empty()) {
    std::fprintf(stderr, "ksmith: wrote %zu lines to %s\n", exported->lines, flags.output.c_str());
  }
  if (flags.json) {
    const nlohmann::json summary = {{"run_id", flags.run_id},       {"format", ExportFormatName(*format)},
                                    {"lines", exported->lines},     {"output", flags.output},
                                    {"note", exported->note}};
    std::printf("%s\n", summary.dump(2).c_str());
  }
  return kExitOk;
}

}  // namespace

CommandHandler AddRunsCommand(CLI::App& app) {
  auto flags = std::make_shared<RunsFlags>();
  // `ksmith runs` alone lists, as `ksmith tasks` does.
  app.require_subcommand(0, 1);
  app.add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  app.add_flag("--json", flags->json, "Print a JSON array");
  CLI::App* list = app.add_subcommand("list", "Every run in the store, newest first (the same as `ksmith runs`)");
  list->add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  list->add_flag("--json", flags->json, "Print a JSON array");
  CLI::App* show = app.add_subcommand("show", "One run: settings, totals, and every candidate with its verdict");
  show->add_option("run_id", flags->run_id, "The run's id (see `ksmith runs list`)")->required();
  show->add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  show->add_flag("--json", flags->json, "Print one JSON object, verdicts included");
  return [flags, show] { return show->parsed() ? ShowRun(*flags) : ListRuns(*flags); };
}

CommandHandler AddExportCommand(CLI::App& app) {
  auto flags = std::make_shared<RunsFlags>();
  app.add_option("run_id", flags->run_id, "The run to export (see `ksmith runs list`)")->required();
  app.add_option("--format,-f", flags->format,
                 "trajectory (every attempt with its prompt, answer and verdict), sft (each passing answer with "
                 "its conversation; assistant turns weighted 1 only where they passed), sft-final (the first "
                 "prompt and the best passing answer, one per run), pairs (preferred and rejected answers to the "
                 "same prompt); docs/export.md")
      ->capture_default_str();
  app.add_option("--output,-o", flags->output, "Write the JSONL here instead of stdout");
  app.add_flag("--json", flags->json,
               "Print one JSON object on stdout (run_id, format, lines, output, note: why nothing was written); "
               "needs -o");
  app.add_option("--db", flags->db, "The run store (default $KSMITH_DB, else runs.db in the cache folder)");
  return [flags] { return ExportRunCommand(*flags); };
}

}  // namespace ksmith
