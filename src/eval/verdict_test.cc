// Verdicts: status names, the JSON every consumer reads, and the text a person reads.
#include "eval/verdict.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

Verdict PassedVerdict() {
  Verdict verdict;
  verdict.status = VerdictStatus::kPassed;
  verdict.reason = "correct on all 51 cases";
  verdict.task = "vector_add";
  verdict.backend = "cpu";
  verdict.candidate = "kernel.cpp";
  verdict.total_s = 2.5;
  verdict.stages.push_back({"audit", "ok", 0.01, StageDetails{.summary = "source follows the candidate contract"}});
  verdict.stages.push_back({"correctness", "ok", 1.2, StageDetails{.summary = "51 cases", .check = CheckFacts{.cases = 51}}});
  verdict.provenance = {{"ksmith_version", "0.1.0"}};
  return verdict;
}

Timing SomeTiming() {
  Timing timing;
  timing.candidate_us = {100.0, 95.0, 105.0, 40};
  timing.baseline_us = {250.0, 240.0, 260.0, 40};
  timing.speedup = {2.5, 2.3, 2.7, 40};
  timing.comparison = "faster";
  timing.roofline_fraction = 0.42;
  timing.floor_us = 42.0;
  timing.bound_by = "memory";
  timing.baseline = "oneDNN softmax on all cores";
  return timing;
}

TEST(VerdictStatusName, NamesEveryStatusAsTheDesignSpells) {
  const std::pair<VerdictStatus, const char*> expected[] = {
      {VerdictStatus::kPassed, "passed"},
      {VerdictStatus::kCompileError, "compile_error"},
      {VerdictStatus::kRuntimeError, "runtime_error"},
      {VerdictStatus::kTimeout, "timeout"},
      {VerdictStatus::kWrongOutput, "wrong_output"},
      {VerdictStatus::kIntegrityViolation, "integrity_violation"},
      {VerdictStatus::kInfraError, "infra_error"},
  };
  std::set<std::string> names;
  for (const auto& [status, name] : expected) {
    EXPECT_STREQ(VerdictStatusName(status), name);
    names.insert(VerdictStatusName(status));
  }
  EXPECT_EQ(names.size(), std::size(expected));
}

TEST(VerdictStatusName, UnknownValueIsReportedAsInfraError) {
  EXPECT_STREQ(VerdictStatusName(static_cast<VerdictStatus>(99)), "infra_error");
}

TEST(Verdict, RendersTheBuildSandboxsStaticFindingsWithTheirLinesAndNoneForOtherCandidates) {
  Verdict verdict;
  verdict.status = VerdictStatus::kPassed;
  EXPECT_TRUE(verdict.StaticFindings().empty());
  EXPECT_EQ(verdict.Render().find("static findings"), std::string::npos);
  StageRecord& build = verdict.stages.emplace_back();
  build.name = "build";
  build.details.build = BuildFacts{};
  build.details.build->build_sandbox = nlohmann::json{
      {"static_findings", {{{"check", "code_bypass"}, {"line", 29}}, {{"check", "no_kernel_code"}, {"line", 0}}, 7}}};
  EXPECT_EQ(verdict.StaticFindings().size(), 2u);  // the stray non-object left out
  EXPECT_NE(verdict.Render().find("static findings (KernelBench's checks; they inform, the run decides): "
                                  "code_bypass (line 29), no_kernel_code\n"),
            std::string::npos)
      << verdict.Render();
}

TEST(Verdict, DefaultIsAnInfraError) {
  EXPECT_EQ(Verdict{}.status, VerdictStatus::kInfraError);
  EXPECT_EQ(Verdict{}.ToJson().at("status"), "infra_error");
}

TEST(Verdict, ToJsonWithoutTimingHasStatusStagesAndNoSpeedup) {
  const nlohmann::json json = PassedVerdict().ToJson();
  EXPECT_EQ(json.at("status"), "passed");
  EXPECT_EQ(json.at("reason"), "correct on all 51 cases");
  EXPECT_EQ(json.at("task"), "vector_add");
  EXPECT_EQ(json.at("backend"), "cpu");
  EXPECT_EQ(json.at("candidate"), "kernel.cpp");
  EXPECT_EQ(json.at("total_s"), 2.5);
  ASSERT_EQ(json.at("stages").size(), 2u);
  EXPECT_EQ(json["stages"][1].at("name"), "correctness");
  EXPECT_EQ(json["stages"][1].at("outcome"), "ok");
  EXPECT_EQ(json["stages"][1].at("seconds"), 1.2);
  EXPECT_EQ(json["stages"][1].at("details").at("cases"), 51);
  EXPECT_EQ(json.at("provenance").at("ksmith_version"), "0.1.0");
  EXPECT_FALSE(json.contains("speedup"));
  EXPECT_FALSE(json.contains("timing"));
  EXPECT_FALSE(json.contains("roofline_fraction"));
}

TEST(Verdict, ToJsonWithTimingHasSpeedupIntervalAndRoofline) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  const nlohmann::json json = verdict.ToJson();
  EXPECT_EQ(json.at("status"), "passed");
  EXPECT_EQ(json.at("speedup"), 2.5);
  EXPECT_EQ(json.at("speedup_ci95"), nlohmann::json::array({2.3, 2.7}));
  EXPECT_EQ(json.at("roofline_fraction"), 0.42);
  const auto& timing = json.at("timing");
  EXPECT_EQ(timing.at("candidate_us").at("median"), 100.0);
  EXPECT_EQ(timing.at("baseline_us").at("samples"), 40);
  EXPECT_EQ(timing.at("speedup").at("ci95")[1], 2.7);
  EXPECT_EQ(timing.at("comparison"), "faster");
  EXPECT_EQ(timing.at("floor_us"), 42.0);
  EXPECT_EQ(timing.at("bound_by"), "memory");
  // Issue 13: every timed verdict says which baseline its speedup is against.
  EXPECT_EQ(timing.at("baseline"), "oneDNN softmax on all cores");
  EXPECT_NE(verdict.Render().find("baseline: oneDNN softmax on all cores"), std::string::npos);
}

TEST(Verdict, ASecondBaselinesTimingIsReportedBesideTheFirstAndReadBack) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  verdict.extensions.second_timing =
      MakeTiming({10, 11, 12, 10}, {5, 6, 5, 6}, "torch.compile (inductor) of the problem's Model");
  const nlohmann::json json = verdict.ToJson();
  EXPECT_EQ(json.at("speedup"), 2.5);  // the first baseline's, unchanged
  EXPECT_NEAR(json.at("second_speedup").get<double>(), 0.5, 0.05);
  EXPECT_EQ(json.at("second_timing").at("comparison"), "slower");
  EXPECT_EQ(json.at("second_timing").at("baseline"), "torch.compile (inductor) of the problem's Model");
  EXPECT_NE(verdict.Render().find("second baseline: speedup 0."), std::string::npos) << verdict.Render();
  const auto read = Verdict::FromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->ToJson(), json);
  EXPECT_FALSE(Verdict::FromJson(PassedVerdict().ToJson())->extensions.second_timing.has_value());
}

TEST(Verdict, ATimingBesideOtherWorkSaysSoAndOlderVerdictsReadAsAlone) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  EXPECT_EQ(verdict.ToJson().at("timing").at("alone"), true);
  verdict.timing->alone = false;
  const nlohmann::json json = verdict.ToJson();
  EXPECT_EQ(json.at("timing").at("alone"), false);
  EXPECT_NE(verdict.Render().find("timed beside other work"), std::string::npos);
  auto read = Verdict::FromJson(json);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->timing->alone);
  nlohmann::json older = json;
  older["timing"].erase("alone");
  auto read_older = Verdict::FromJson(older);
  ASSERT_TRUE(read_older.ok());
  EXPECT_TRUE(read_older->timing->alone);
}

TEST(Verdict, ToJsonSurvivesADumpAndParse) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  const std::string text = verdict.ToJson().dump();
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed, verdict.ToJson());
}

TEST(Verdict, FromJsonReadsBackWhatToJsonWrote) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  verdict.stages.back().started_s = 0.4;
  const auto read = Verdict::FromJson(nlohmann::json::parse(verdict.ToJson().dump()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->ToJson(), verdict.ToJson());
  EXPECT_EQ(read->schema_version, kVerdictSchemaVersion);
  EXPECT_EQ(verdict.ToJson().at("schema_version"), kVerdictSchemaVersion);
}

TEST(Verdict, AFormatsExtensionsAreTopLevelKeysOnlyWhenSet) {
  // Given a verdict whose format reported nothing beside the status, its JSON has none of the
  // extensions' keys; once set, each is a key of the verdict itself, read back as it was.
  Verdict verdict = PassedVerdict();
  nlohmann::json json = verdict.ToJson();
  for (const char* key : {"second_timing", "second_speedup", "generalization"}) EXPECT_FALSE(json.contains(key)) << key;
  EXPECT_FALSE(VerdictExtensions::FromJson(json).second_timing.has_value());
  EXPECT_FALSE(VerdictExtensions::FromJson(json).generalization.has_value());
  EXPECT_EQ(verdict.extensions.RenderJudged() + verdict.extensions.RenderTimings(), "");
  verdict.extensions.second_timing = MakeTiming({10, 11, 12, 10}, {5, 6, 5, 6}, "torch.compile");
  verdict.extensions.generalization = Generalization{.decided_at = "n=4096", .generalizes = true, .hidden_cases = 2};
  json = verdict.ToJson();
  EXPECT_EQ(json.at("second_timing").at("baseline"), "torch.compile");
  EXPECT_EQ(json.at("generalization").at("hidden_cases"), 2);
  const VerdictExtensions read = VerdictExtensions::FromJson(json);
  ASSERT_TRUE(read.generalization.has_value());
  EXPECT_EQ(read.generalization->generalizes, std::optional<bool>(true));
  nlohmann::json written = nlohmann::json::object();
  read.AddToJson(written);
  EXPECT_EQ(written.at("second_timing"), json.at("second_timing"));
  EXPECT_EQ(written.at("second_speedup"), json.at("second_speedup"));
  EXPECT_EQ(written.size(), 3u);
}

TEST(Verdict, AKernelBenchCandidatesShapesSurviveJsonAndAreRendered) {
  Verdict verdict = PassedVerdict();
  EXPECT_FALSE(verdict.ToJson().contains("generalization"));
  Generalization& shapes = verdict.extensions.generalization.emplace();
  shapes.decided_at = "rows=1024, cols=98304";
  shapes.problem_sizes = "rows=4096, cols=393216";
  EXPECT_EQ(verdict.ToJson()["generalization"]["generalizes"], nlohmann::json());
  EXPECT_NE(verdict.Render().find("generalizes: not checked"), std::string::npos) << verdict.Render();
  shapes.generalizes = false;
  shapes.hidden_cases = 4;
  shapes.reason = "wrong output at rows=1 (wrong_output)";
  const auto read = Verdict::FromJson(nlohmann::json::parse(verdict.ToJson().dump()));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->extensions.generalization.has_value());
  EXPECT_EQ(read->extensions.generalization->generalizes, std::optional<bool>(false));
  EXPECT_EQ(read->extensions.generalization->hidden_cases, 4);
  EXPECT_EQ(read->ToJson(), verdict.ToJson());
  const std::string text = verdict.Render();
  EXPECT_NE(text.find("judged at rows=1024, cols=98304 (the problem's sizes, rows=4096, cols=393216, halved to fit); "
                      "generalizes: no: wrong output at rows=1"),
            std::string::npos) << text;
  shapes.problem_sizes.clear();
  shapes.generalizes = true;
  EXPECT_NE(verdict.Render().find("(the problem's own sizes); generalizes: yes (4 cases"), std::string::npos)
      << verdict.Render();
}

TEST(Verdict, FromJsonReadsAnOlderVerdictWithFieldsMissing) {
  // Given a version-1 verdict as an older ksmith stored it: no schema_version, no timing.
  const nlohmann::json old = {{"status", "wrong_output"},
                              {"reason", "max error 3"},
                              {"stages", {{{"name", "correctness"}, {"outcome", "failed"}}}}};
  const auto read = Verdict::FromJson(old);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->schema_version, 1);
  EXPECT_EQ(read->status, VerdictStatus::kWrongOutput);
  EXPECT_EQ(read->reason, "max error 3");
  ASSERT_EQ(read->stages.size(), 1u);
  EXPECT_EQ(read->stages[0].outcome, "failed");
  // What version 1 said in words is read into fields.
  ASSERT_TRUE(read->stages[0].details.failure.has_value());
  EXPECT_EQ(read->stages[0].details.failure->kind, FailureKind::kWrongOutput);
  EXPECT_FALSE(read->timing.has_value());
}

TEST(Verdict, FromJsonRefusesWhatIsNotAVerdict) {
  EXPECT_FALSE(Verdict::FromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(Verdict::FromJson({{"status", "fast"}}).ok());
  const auto missing = Verdict::FromJson(nlohmann::json::object());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kParse);
  EXPECT_EQ(ParseVerdictStatus("integrity_violation").value(), VerdictStatus::kIntegrityViolation);
}

TEST(Verdict, RenderStartsWithStatusAndReasonAndListsStages) {
  const std::string text = PassedVerdict().Render();
  EXPECT_EQ(text.rfind("passed: correct on all 51 cases (task vector_add, cpu)\n", 0), 0u) << text;
  EXPECT_NE(text.find("audit"), std::string::npos);
  EXPECT_NE(text.find("source follows the candidate contract"), std::string::npos);
  EXPECT_NE(text.find("correctness"), std::string::npos);
  EXPECT_EQ(text.find("speedup"), std::string::npos);
}

TEST(Verdict, RenderShowsSpeedupAndRooflineWhenTimed) {
  Verdict verdict = PassedVerdict();
  verdict.timing = SomeTiming();
  const std::string text = verdict.Render();
  EXPECT_NE(text.find("speedup 2.500x (95% CI 2.300-2.700, faster)"), std::string::npos) << text;
  EXPECT_NE(text.find("candidate 100.0 us, baseline 250.0 us (medians of 40 rounds)"), std::string::npos) << text;
  EXPECT_NE(text.find("roofline: 42.0% of this machine's memory limit (42.0 us)"), std::string::npos) << text;
}

TEST(Verdict, RenderAppendsTheLogOfAFailedStage) {
  Verdict verdict;
  verdict.status = VerdictStatus::kCompileError;
  verdict.reason = "the compiler rejected the candidate (see the build log)";
  verdict.task = "softmax";
  verdict.backend = "cpu";
  verdict.stages.push_back({"build", "failed", 0.3,
                            StageDetails{.summary = "the compiler rejected the candidate",
                                         .log = "candidate.cpp:3:5: error: expected ';'\n"}});
  const std::string text = verdict.Render();
  EXPECT_EQ(text.rfind("compile_error: ", 0), 0u) << text;
  EXPECT_NE(text.find("failed"), std::string::npos);
  EXPECT_NE(text.find("candidate.cpp:3:5: error: expected ';'"), std::string::npos) << text;
}

TEST(Verdict, RenderLeavesOutLogsOfStagesThatPassed) {
  Verdict verdict = PassedVerdict();
  verdict.stages.push_back({"build", "ok", 0.3, {{"log", "a warning nobody needs to see"}}});
  EXPECT_EQ(verdict.Render().find("a warning nobody needs to see"), std::string::npos);
}

}  // namespace
}  // namespace ksmith
