#include "bench/bench_compare.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "bench/bench_summary.h"
#include "core/files.h"

namespace ksmith {
namespace {

nlohmann::json Verdict(double speedup, double low, double high) {
  return {{"status", "passed"},
          {"stages", {{{"name", "build"}, {"outcome", "ok"}}}},
          {"speedup", speedup},
          {"speedup_ci95", {low, high}},
          {"roofline_fraction", 0.5}};
}

BenchTaskResult Timed(const std::string& task, double speedup, double low, double high) {
  return {task, "run-" + task, "", {SampleFromVerdict(Verdict(speedup, low, high))}, 10, 0.01, 1, 2};
}

BenchTaskResult NoneCorrect(const std::string& task) {
  return {task, "run-" + task, "", {SampleFromVerdict({{"status", "wrong_output"}})}, 10, 0.01, 1, 2};
}

BenchRecord Record(const std::string& source, const std::string& backend, const std::vector<BenchTaskResult>& results) {
  auto record = MakeBenchRecord(source, BenchJson({"mini", backend, "tune", 1}, results, 5.0));
  EXPECT_TRUE(record.ok()) << record.error().message;
  return record.value();
}

const nlohmann::json& Row(const nlohmann::json& comparison, const std::string& name) {
  for (const auto& task : comparison["tasks"]) {
    if (task["name"] == name) return task;
  }
  static const nlohmann::json missing;
  ADD_FAILURE() << "no row for " << name << " in " << comparison.dump();
  return missing;
}

TEST(IntervalChange, OnlyIntervalsThatDoNotOverlapCount) {
  EXPECT_EQ(IntervalChange(1.0, 1.2, 1.3, 1.5), Change::kImproved);
  EXPECT_EQ(IntervalChange(1.3, 1.5, 1.0, 1.2), Change::kRegressed);
  EXPECT_EQ(IntervalChange(1.0, 1.3, 1.2, 1.5), Change::kWithinNoise);
  // Touching ends overlap: B's low must be strictly above A's high.
  EXPECT_EQ(IntervalChange(1.0, 1.2, 1.2, 1.4), Change::kWithinNoise);
}

TEST(CompareBenches, ClassifiesEveryKindOfChange) {
  // Given one task per kind of change, each row should say which, ordered by name.
  const BenchRecord a = Record("a.json", "cpu",
                               {Timed("faster", 2.0, 1.9, 2.1), Timed("slower", 2.0, 1.9, 2.1), Timed("same", 2.0, 1.8, 2.2),
                                NoneCorrect("fixed"), Timed("broken", 1.5, 1.4, 1.6), NoneCorrect("hopeless"),
                                Timed("dropped", 1.0, 0.9, 1.1)});
  const BenchRecord b = Record("b.json", "cpu",
                               {Timed("faster", 3.0, 2.8, 3.2), Timed("slower", 1.0, 0.9, 1.1), Timed("same", 2.1, 1.9, 2.3),
                                Timed("fixed", 1.2, 1.1, 1.3), NoneCorrect("broken"), NoneCorrect("hopeless"),
                                Timed("new", 4.0, 3.5, 4.5)});
  auto comparison = CompareBenches(a, b, {});
  ASSERT_TRUE(comparison.ok()) << comparison.error().message;
  EXPECT_EQ(Row(*comparison, "faster")["change"], "improved");
  EXPECT_NEAR(Row(*comparison, "faster")["speedup_ratio"].get<double>(), 1.5, 1e-12);
  EXPECT_EQ(Row(*comparison, "slower")["change"], "regressed");
  EXPECT_EQ(Row(*comparison, "same")["change"], "within_noise");
  EXPECT_EQ(Row(*comparison, "fixed")["change"], "newly_passing");
  EXPECT_TRUE(Row(*comparison, "fixed")["speedup_ratio"].is_null());
  EXPECT_EQ(Row(*comparison, "broken")["change"], "newly_failing");
  EXPECT_EQ(Row(*comparison, "hopeless")["change"], "still_failing");
  EXPECT_EQ(Row(*comparison, "dropped")["change"], "removed");
  EXPECT_TRUE(Row(*comparison, "dropped")["b"].is_null());
  EXPECT_EQ(Row(*comparison, "new")["change"], "added");
  EXPECT_TRUE(Row(*comparison, "new")["a"].is_null());
  EXPECT_EQ(Row(*comparison, "new")["b"]["best_speedup_ci95"], nlohmann::json({3.5, 4.5}));

  std::vector<std::string> names;
  for (const auto& task : (*comparison)["tasks"]) names.push_back(task["name"].get<std::string>());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  ASSERT_EQ(names.size(), 8u);

  const auto& summary = (*comparison)["summary"];
  EXPECT_EQ(summary["changes"]["improved"], 1);
  EXPECT_EQ(summary["changes"]["added"], 1);
  EXPECT_EQ(summary["changes"]["removed"], 1);
  EXPECT_FALSE(summary["same_tasks"].get<bool>());
  EXPECT_NEAR(summary["pass_at_1"]["a"].get<double>(), 5.0 / 7.0, 1e-12);
  EXPECT_NEAR(summary["pass_at_1"]["delta"].get<double>(), 0.0, 1e-12);  // 5 of 7 on both sides
  EXPECT_TRUE(summary["geomean_speedup"]["ratio"].is_number());
  EXPECT_EQ(summary["elapsed_s"]["delta"], 0.0);
  EXPECT_NE(summary["notes"].dump().find("task sets differ"), std::string::npos) << summary["notes"].dump();

  const std::string text = CompareText(*comparison);
  EXPECT_NE(text.find("A: a.json (cpu backend, tune strategy, 1 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00x [1.90, 2.10]"), std::string::npos) << text;
  EXPECT_NE(text.find("newly failing"), std::string::npos) << text;
  EXPECT_NE(text.find("summary: pass@1 71% -> 71% (+0 pts)"), std::string::npos) << text;
  EXPECT_NE(text.find("changes: 1 improved, 1 regressed, 1 within noise, 1 newly passing, 1 newly failing, "
                      "1 still failing, 1 added, 1 removed"),
            std::string::npos)
      << text;
}

TEST(CompareText, AlignsTheColumns) {
  const BenchRecord a = Record("a.json", "cpu", {Timed("relu", 2.0, 1.9, 2.1), Timed("vector_add", 1.0, 0.9, 1.1)});
  const BenchRecord b = Record("b.json", "cpu", {Timed("relu", 2.0, 1.9, 2.1), Timed("vector_add", 1.5, 1.4, 1.6)});
  auto comparison = CompareBenches(a, b, {});
  ASSERT_TRUE(comparison.ok());
  const std::string text = CompareText(*comparison);
  // The "change" column starts at the same offset on the header and on every row.
  const size_t header = text.find("task ");
  ASSERT_NE(header, std::string::npos) << text;
  const size_t header_column = text.find("change", header) - header;
  for (const char* row : {"relu ", "vector_add "}) {
    const size_t start = text.find(std::string("\n") + row) + 1;
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    const size_t column = line.find(std::string(row) == "relu " ? "within noise" : "improved");
    EXPECT_EQ(column, header_column) << text;
  }
}

TEST(CompareBenches, TheSuitesSpeedupChangesOnlyWhenItsIntervalSaysSo) {
  // Two runs of one task, each a tie within its own noise: the row says within noise, and so
  // must the summary's geometric mean (it called 1.02x [1.02, 1.02] -> 1.03x [1.03, 1.03] improved).
  BenchRecord a = Record("a.json", "cpu", {Timed("relu", 1.02, 0.95, 1.10)});
  BenchRecord b = Record("b.json", "cpu", {Timed("relu", 1.03, 0.96, 1.11)});
  const auto comparison = CompareBenches(a, b, {});
  ASSERT_TRUE(comparison.ok()) << comparison.error().message;
  EXPECT_EQ(Row(*comparison, "relu")["change"], "within_noise");
  const auto& geomean = (*comparison)["summary"]["geomean_speedup"];
  EXPECT_EQ(geomean["change"], "within_noise") << geomean.dump();
  EXPECT_LT(geomean["a_ci95"][0].get<double>(), 0.97) << geomean.dump();
  // A file written before the summary counted each task's interval: its collapsed interval is
  // not what the comparison reads; the tasks' own are.
  a.bench["summary"]["geomean_speedup_ci95"] = {1.02, 1.02};
  b.bench["summary"]["geomean_speedup_ci95"] = {1.03, 1.03};
  const auto old_files = CompareBenches(a, b, {});
  ASSERT_TRUE(old_files.ok());
  EXPECT_EQ((*old_files)["summary"]["geomean_speedup"]["change"], "within_noise");
  // A real change still is one: 1.0x -> 2.0x, both tight.
  const auto faster = CompareBenches(Record("a.json", "cpu", {Timed("relu", 1.0, 0.98, 1.02)}),
                                     Record("b.json", "cpu", {Timed("relu", 2.0, 1.96, 2.04)}), {});
  ASSERT_TRUE(faster.ok());
  EXPECT_EQ((*faster)["summary"]["geomean_speedup"]["change"], "improved");
}

TEST(CompareBenches, RefusesMixedBackendsUnlessAllowed) {
  const BenchRecord a = Record("cpu.json", "cpu", {Timed("relu", 2.0, 1.9, 2.1)});
  const BenchRecord b = Record("cuda.json", "cuda", {Timed("relu", 20.0, 19, 21)});
  auto refused = CompareBenches(a, b, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kInvalidArgument);
  for (const char* part : {"cpu.json", "cuda.json", "the cpu backend", "the cuda backend", "--allow-mixed"}) {
    EXPECT_NE(refused.error().message.find(part), std::string::npos) << refused.error().message;
  }
  auto allowed = CompareBenches(a, b, {.allow_mixed_backends = true});
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(Row(*allowed, "relu")["change"], "improved");
  EXPECT_NE((*allowed)["summary"]["notes"].dump().find("cuda backend"), std::string::npos);
}

TEST(TaskSide, ReadsOlderFilesWithoutTheNewFields) {
  // Given a task as bench.json recorded it before intervals had both ends, the figures are derived
  // and the speedup change is unknown rather than guessed.
  const nlohmann::json old_task = {{"task", "gelu"},           {"error", ""},
                                   {"samples", 4},             {"correct_rate", 1.0},
                                   {"pass_at_k", {0.75, 1.0}}, {"efficiency_at_k", {0.2, 0.3}},
                                   {"best_speedup", 47.3},     {"best_speedup_low", 39.8},
                                   {"tokens", 0},              {"cost", 0.0},
                                   {"wall_s", 11.1}};
  const TaskSide side = TaskSide::FromJson(old_task);
  EXPECT_TRUE(side.passing);
  EXPECT_EQ(side.pass_at_1, 0.75);
  EXPECT_EQ(side.efficiency_at_1, 0.2);
  EXPECT_TRUE(side.fast_1);
  EXPECT_EQ(side.candidates, 4);
  EXPECT_FALSE(side.best_speedup_high.has_value());
  EXPECT_EQ(ClassifyTask(side, side), Change::kNoInterval);
  TaskSide errored = side;
  errored.error = "optimize ended with exit code 3";
  errored.passing = false;
  EXPECT_EQ(ClassifyTask(side, errored), Change::kNewlyFailing);
}

TEST(LoadBenchRecord, NamesTheFileAndWhatIsWrong) {
  ScopedTempDir directory("ksmith-compare-test");
  ASSERT_TRUE(directory.ok());
  const auto path = directory.path();
  auto missing = LoadBenchRecord(path / "nothing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("nothing.json: no such file"), std::string::npos) << missing.error().message;
  auto empty_folder = LoadBenchRecord(path);
  ASSERT_FALSE(empty_folder.ok());
  EXPECT_NE(empty_folder.error().message.find("holds no bench.json"), std::string::npos) << empty_folder.error().message;

  ASSERT_TRUE(WriteFileAtomic(path / "garbage.json", "{not json").ok());
  auto garbage = LoadBenchRecord(path / "garbage.json");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().kind, ErrorKind::kParse);
  EXPECT_NE(garbage.error().message.find("garbage.json: not valid JSON"), std::string::npos) << garbage.error().message;

  ASSERT_TRUE(WriteFileAtomic(path / "other.json", R"({"settings": {"backend": "cpu"}, "tasks": [{"name": "x"}], "summary": {}})").ok());
  auto other = LoadBenchRecord(path / "other.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("other.json: not a bench result"), std::string::npos) << other.error().message;
  EXPECT_NE(other.error().message.find("task 1 has no \"task\" name"), std::string::npos) << other.error().message;

  const nlohmann::json bench = BenchJson({"mini", "cpu", "tune", 1}, {Timed("relu", 2.0, 1.9, 2.1)});
  ASSERT_TRUE(WriteFileAtomic(path / "bench.json", bench.dump()).ok());
  auto from_folder = LoadBenchRecord(path);
  ASSERT_TRUE(from_folder.ok()) << from_folder.error().message;
  EXPECT_EQ(from_folder->source, (path / "bench.json").string());
  EXPECT_EQ(from_folder->bench["tasks"].size(), 1u);
}

TEST(CompareBenches, ASpeedupTimedBesideOtherWorkIsNotComparedAndTheNotesSaySo) {
  // Given B's only correct softmax candidate timed beside other work, then B has no best speedup
  // for softmax, the row no ratio, and the notes count what each side left out.
  nlohmann::json beside = Verdict(9.0, 8.5, 9.5);
  beside["timing"] = {{"alone", false}};
  BenchTaskResult disturbed{"softmax", "run-softmax", "", {SampleFromVerdict(beside)}, 10, 0.01, 1, 2};
  const auto comparison = CompareBenches(Record("a.json", "cpu", {Timed("softmax", 2.0, 1.9, 2.1)}),
                                         Record("b.json", "cpu", {disturbed}), {});
  ASSERT_TRUE(comparison.ok()) << comparison.error().message;
  const auto& row = Row(*comparison, "softmax");
  EXPECT_TRUE(row["b"]["best_speedup"].is_null()) << row.dump();
  EXPECT_EQ(row["b"]["timed_not_alone"], 1);
  EXPECT_TRUE(row["speedup_ratio"].is_null()) << row.dump();
  const std::string notes = (*comparison)["summary"]["notes"].dump();
  EXPECT_NE(notes.find("timed beside other work"), std::string::npos) << notes;
  EXPECT_NE(notes.find("0 in A, 1 in B"), std::string::npos) << notes;
}

TEST(CompareBenches, WarnsOfOverlappingTimingsOnlyWhenTasksAtOnceDidNotTakeTurns) {
  // Given two benches that ran 3 tasks at once, only the one whose timings overlapped (an older
  // file) gets the note; the other timed through one evaluation service, one at a time.
  const std::vector<BenchTaskResult> results = {Timed("relu", 2.0, 1.9, 2.1)};
  auto overlapped = MakeBenchRecord("a.json", BenchJson({"mini", "cuda", "tune", 1, 3, {}, false}, results, 5.0));
  auto took_turns = MakeBenchRecord("b.json", BenchJson({"mini", "cuda", "tune", 1, 3, {}, true}, results, 5.0));
  ASSERT_TRUE(overlapped.ok() && took_turns.ok());
  auto comparison = CompareBenches(*overlapped, *took_turns, {});
  ASSERT_TRUE(comparison.ok()) << comparison.error().message;
  const std::string notes = (*comparison)["summary"]["notes"].dump();
  EXPECT_NE(notes.find("A ran 3 tasks at once"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("B ran"), std::string::npos) << notes;
}

}  // namespace
}  // namespace ksmith
