// What verdict_facts reads out of real verdicts (testdata/*.json, see feedback_test.cc) and out
// of the reasons and logs they hold, before any wording is built on it.
#include "agent/verdict_facts.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

nlohmann::json Verdict(const std::string& name) {
  auto text = ReadFile(fs::path(KSMITH_SOURCE_DIR) / "src/agent/testdata" / name);
  if (!text.ok()) throw std::runtime_error(text.error().message);
  return nlohmann::json::parse(*text);
}

std::string BuildLog(const std::string& name) { return JsonString(Details(Stage(Verdict(name), "build")), "log"); }

TEST(VerdictFacts, AccessorsReadMissingOrMistypedFieldsAsEmpty) {
  const nlohmann::json odd = {{"status", 3}, {"timing", "fast"}, {"stages", {{"name", "build"}}}};
  EXPECT_EQ(JsonString(odd, "status"), "");
  EXPECT_EQ(JsonNumber(odd, "status"), 3);
  EXPECT_EQ(JsonNumber(odd, "missing", -1), -1);
  EXPECT_TRUE(JsonObject(odd, "timing").is_object() && JsonObject(odd, "timing").empty());
  EXPECT_TRUE(JsonArray(odd, "status").is_array() && JsonArray(odd, "status").empty());
  EXPECT_TRUE(Stage(odd, "build").empty());  // "stages" holds an object, not stage objects
  EXPECT_TRUE(FailedStage(nlohmann::json("not an object")).empty());
  EXPECT_FALSE(Interval95(nlohmann::json::object({{"ci95", {1.0, nullptr}}})).has_value());
}

TEST(VerdictFacts, StagesAndIntervalsComeFromARealVerdict) {
  const nlohmann::json wrong = Verdict("cpu_wrong.json");
  EXPECT_EQ(JsonString(FailedStage(wrong), "name"), "correctness");
  EXPECT_EQ(JsonString(Details(FailedStage(wrong)), "failed_case"), "n=1, normal, seed #1");
  EXPECT_TRUE(FailedStage(Verdict("cpu_passed.json")).empty());

  const auto speedup = Interval95(JsonObject(JsonObject(Verdict("cuda_passed.json"), "timing"), "speedup"));
  ASSERT_TRUE(speedup.has_value());
  EXPECT_DOUBLE_EQ(speedup->first, 1.8);
  EXPECT_DOUBLE_EQ(speedup->second, 1.88);
}

TEST(VerdictFacts, CaseLabelSplitsShapeDistributionAndTheRest) {
  const CaseLabel label = ParseCaseLabel("rows=37, cols=5, large, seed #2 (random shape)");
  EXPECT_EQ(label.shape, "rows=37, cols=5");
  EXPECT_EQ(label.distribution, "large");
  EXPECT_EQ(label.rest, "seed #2 (random shape)");
  EXPECT_EQ(label.smallest_dim, 5);

  const CaseLabel empty = ParseCaseLabel("");
  EXPECT_EQ(empty.shape, "");
  EXPECT_EQ(empty.smallest_dim, 0);
}

TEST(VerdictFacts, RunningCaseIsTakenFromADeadWorkersReason) {
  EXPECT_EQ(RunningCase(JsonString(Verdict("cpu_segv.json"), "reason")), "n=1, normal, seed #1");
  EXPECT_EQ(RunningCase(JsonString(Verdict("cpu_hang.json"), "reason")), "n=1, normal, seed #1");
  EXPECT_EQ(RunningCase("the worker ended (killed by SIGSEGV (signal 11))"), "");
}

TEST(VerdictFacts, MismatchNumbersAreReadFromWhatTheCheckFound) {
  const nlohmann::json wrong = Verdict("cpu_wrong.json");
  const std::string found = WhatWasFound(JsonString(wrong, "reason"), "n=1, normal, seed #1");
  EXPECT_TRUE(found.starts_with("output 'c': 1 of 1 elements exceed")) << found;
  const Mismatch mismatch = ParseMismatch(found);
  EXPECT_EQ(mismatch.over_bound, 1);
  EXPECT_EQ(mismatch.count, 1);
  EXPECT_EQ(mismatch.unwritten, 0);
  EXPECT_DOUBLE_EQ(mismatch.norm_error, 0.405);
  EXPECT_DOUBLE_EQ(mismatch.norm_bound, 0.000111);
  EXPECT_EQ(mismatch.worst_index, "0");
  EXPECT_EQ(mismatch.worst_error, "0.342");

  EXPECT_EQ(ParseMismatch(JsonString(Verdict("cpu_half.json"), "reason")).unwritten, 1);
  EXPECT_EQ(ParseMismatch(JsonString(Verdict("cpu_softmax_unstable.json"), "reason")).nonfinite, 1);
  EXPECT_EQ(WhatWasFound("no label here", "n=1"), "no label here");
}

TEST(VerdictFacts, GccAndNvccErrorsAreParsedInOrder) {
  const auto gcc = ParseDiagnostics(BuildLog("cpu_compile_error.json"));
  ASSERT_EQ(gcc.size(), 2u);
  EXPECT_EQ(gcc[0].file, "src/compile_error.cpp");
  EXPECT_EQ(gcc[0].line, 6);
  EXPECT_EQ(gcc[0].message, "'bb' was not declared in this scope; did you mean 'b'?");
  EXPECT_EQ(gcc[1].line, 9);

  const auto nvcc = ParseDiagnostics(BuildLog("cuda_compile_error.json"));
  ASSERT_EQ(nvcc.size(), 2u);
  EXPECT_EQ(nvcc[0].file, "src/candidate.cu");
  EXPECT_EQ(nvcc[0].line, 6);
  EXPECT_EQ(nvcc[0].message, "identifier \"bb\" is undefined");
  EXPECT_EQ(nvcc[1].line, 10);
}

TEST(VerdictFacts, SignatureConflictsKeepTheCandidateNoteAndLinkerErrorsNameTheSymbol) {
  const auto conflict = ParseDiagnostics(BuildLog("cpu_wrongsig.json"));
  ASSERT_EQ(conflict.size(), 1u);
  EXPECT_EQ(conflict[0].file, "ksmith-expected-signature");
  ASSERT_EQ(conflict[0].notes.size(), 1u);
  EXPECT_EQ(conflict[0].notes[0].file, "src/wrongsig.cpp");
  EXPECT_EQ(conflict[0].notes[0].line, 6);

  const auto linker = ParseDiagnostics(BuildLog("cpu_nodef.json"));
  ASSERT_EQ(linker.size(), 1u);  // not collect2's "ld returned 1 exit status"
  EXPECT_EQ(linker[0].file, "");
  EXPECT_TRUE(linker[0].message.starts_with("undefined reference to `vector_add`")) << linker[0].message;
}

TEST(VerdictFacts, OnlyTheCandidatesOwnFilesCountAsCandidate) {
  EXPECT_TRUE(InCandidate("src/candidate.cu"));
  EXPECT_FALSE(InCandidate(""));
  EXPECT_FALSE(InCandidate("ksmith-expected-signature"));
  EXPECT_FALSE(InCandidate("/usr/include/c++/13/cmath"));
  EXPECT_FALSE(InCandidate("build/ksmith_wrapper.cu"));
}

}  // namespace
}  // namespace ksmith
