// Compiler diagnostics parsed from real build logs: the logs of the failed builds in
// src/agent/testdata (`ksmith eval --json` outputs, see feedback_test.cc).
#include "compile/diagnostics.h"

#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// The build stage's log, without the declaration older ksmith versions appended to it.
std::string BuildLog(const std::string& name) {
  auto text = ReadFile(fs::path(KSMITH_SOURCE_DIR) / "src/agent/testdata" / name);
  if (!text.ok()) throw std::runtime_error(text.error().message);
  const nlohmann::json verdict = nlohmann::json::parse(*text);
  for (const auto& stage : verdict.at("stages")) {
    if (stage.at("name") != "build") continue;
    std::string log = stage.at("details").value("log", std::string());
    return log.substr(0, log.find("\nThe candidate must define"));
  }
  return {};
}

TEST(Diagnostics, GccAndNvccErrorsAreParsedInOrder) {
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

TEST(Diagnostics, SignatureConflictsKeepTheCandidateNoteAndLinkerErrorsNameTheSymbol) {
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

TEST(Diagnostics, OnlyTheCandidatesOwnFilesCountAsCandidate) {
  EXPECT_TRUE(InCandidate("src/candidate.cu"));
  EXPECT_FALSE(InCandidate(""));
  EXPECT_FALSE(InCandidate("ksmith-expected-signature"));
  EXPECT_FALSE(InCandidate("/usr/include/c++/13/cmath"));
  EXPECT_FALSE(InCandidate("build/ksmith_wrapper.cu"));
}

TEST(Diagnostics, ReadBackFromJsonAsWritten) {
  const auto parsed = ParseDiagnostics(BuildLog("cpu_wrongsig.json"));
  ASSERT_EQ(parsed.size(), 1u);
  const Diagnostic read = Diagnostic::FromJson(parsed[0].ToJson());
  EXPECT_EQ(read.file, parsed[0].file);
  EXPECT_EQ(read.line, parsed[0].line);
  EXPECT_EQ(read.message, parsed[0].message);
  ASSERT_EQ(read.notes.size(), 1u);
  EXPECT_EQ(read.notes[0].line, 6);
  EXPECT_EQ(Diagnostic::FromJson(nlohmann::json{{"line", "x"}}).line, 0) << "a mistyped field keeps its default";
}

}  // namespace
}  // namespace ksmith
