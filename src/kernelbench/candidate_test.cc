#include "kernelbench/candidate.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "kernelbench/analysis_test_support.h"

#include "core/files.h"
#include "kernelbench/shim.h"

namespace ksmith {
namespace {

const nlohmann::json kAnalysis = {{"constants", {{"batch_size", 4096}, {"dim", 393216}, {"eps", 1}}},
                                  {"constant_dims", {{"batch_size", "batch_size"}, {"dim", "dim"}}}};

TEST(ProblemSizesWhereReduced, EmptyAtTheProblemsOwnSizes) {
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 4096}, {"dim", 393216}}), "");
}

TEST(ProblemSizesWhereReduced, NamesEveryOwnSizeWhereAnyWasHalved) {
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 1024}, {"dim", 98304}}),
            "batch_size=4096, dim=393216");
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 4096}, {"dim", 1}}), "batch_size=4096, dim=393216");
}

TEST(ProblemSizesWhereReduced, IgnoresWhatTheAnalysisDoesNotSay) {
  EXPECT_EQ(ProblemSizesWhereReduced(nlohmann::json::object(), {{"n", 3}}), "");
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"x_d2", 7}}), "");
}

nlohmann::json Relu() { return testing::ReluAnalysis(); }

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shim is compiled once per task: nothing of a candidate is in its text, which the build
// cache keys; the candidate's source (even one that would end the shim's quoting) is in its spec.
TEST(KernelBenchCandidateShim, ItsTextIsTheTasksAloneAndTheSpecCarriesTheCandidate) {
  auto shim = RenderKernelBenchCandidateShim(Relu(), /*cuda=*/true);
  ASSERT_TRUE(shim.ok()) << shim.error().message;
  EXPECT_EQ(RenderKernelBenchCandidateShim(Relu(), true).value(), *shim);
  EXPECT_NE(RenderKernelBenchCandidateShim(Relu(), false).value(), *shim);
  EXPECT_NE(shim->find("kCandidateSpecFile = \"ksmith_candidate.json\""), std::string::npos);
  EXPECT_NE(shim->find("constexpr const char* kSpec = R\"ksmith_text()ksmith_text\";"), std::string::npos);
  const std::string source = "class ModelNew:  # )ksmith_text\"\n    pass\n";
  const nlohmann::json manifest = {{"extensions", {{{"key", "k"}, {"name", "relu_ext"}}}}};
  auto spec = KernelBenchCandidateSpec(Relu(), source, "sample_3.py", true, "/cache/kb/abc", manifest);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto parsed = nlohmann::json::parse(*spec);
  EXPECT_EQ(parsed["candidate_source"], source);
  EXPECT_EQ(parsed["candidate_file"], "sample_3.py");
  EXPECT_EQ(parsed["build"]["extensions_directory"], "/cache/kb/abc/torch_extensions");
  EXPECT_EQ(parsed["build"]["extensions"][0]["name"], "relu_ext");
  EXPECT_EQ(shim->find("sample_3.py"), std::string::npos);
}

// Each candidate loads a copy of its own: one file per spec (the loader would hand a second
// candidate the first one's handle for a link), with its spec beside it, in a folder named by the
// spec, so that two judgements of one source under two names each read their own.
TEST(KernelBenchCandidateShim, EachSpecGetsItsOwnCopyBesideIt) {
  ScopedTempDir folder("kb-candidate");
  ASSERT_TRUE(folder.ok());
  const std::filesystem::path compiled = folder.path() / "shim.so";
  { std::ofstream(compiled, std::ios::binary) << "ELF bytes"; }
  const std::filesystem::path build = folder.path() / "build";
  std::filesystem::create_directories(build);
  auto first = WriteKernelBenchCandidate(compiled, R"({"candidate_file": "a.py"})", build);
  auto second = WriteKernelBenchCandidate(compiled, R"({"candidate_file": "b.py"})", build);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(first->filename(), "modelnew_shim.so");
  EXPECT_EQ(first->parent_path().parent_path(), build);
  EXPECT_NE(first->parent_path(), second->parent_path());
  EXPECT_EQ(Read(*first), "ELF bytes");
  EXPECT_EQ(Read(first->parent_path() / kCandidateSpecFile), R"({"candidate_file": "a.py"})");
  EXPECT_EQ(Read(second->parent_path() / kCandidateSpecFile), R"({"candidate_file": "b.py"})");
  struct stat one{}, two{};
  ASSERT_EQ(::stat(first->c_str(), &one), 0);
  ASSERT_EQ(::stat(second->c_str(), &two), 0);
  EXPECT_NE(one.st_ino, two.st_ino);
  // The same spec again (its build cached): the same place, written afresh.
  auto again = WriteKernelBenchCandidate(compiled, R"({"candidate_file": "a.py"})", build);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *first);
}

// What the build sandbox (the candidate's code) left in its folder cannot stop ksmith placing the
// shim nor be written through: a file or a link where the spec's folder goes, a folder where a
// file goes, links to a file of the user's.
TEST(KernelBenchCandidateShim, WhatTheBuildSandboxLeftIsReplacedNeverWrittenThrough) {
  ScopedTempDir folder("kb-candidate");
  ASSERT_TRUE(folder.ok());
  const std::filesystem::path compiled = folder.path() / "shim.so";
  { std::ofstream(compiled, std::ios::binary) << "ELF bytes"; }
  const std::filesystem::path victim = folder.path() / "victim";
  { std::ofstream(victim) << "the user's"; }
  const std::string spec = R"({"candidate_file": "a.py"})";
  // Where the spec's folder will be, learnt from a first placement elsewhere.
  const std::filesystem::path probe = folder.path() / "probe";
  std::filesystem::create_directories(probe);
  const std::string name = WriteKernelBenchCandidate(compiled, spec, probe)->parent_path().filename().string();

  const std::filesystem::path linked = folder.path() / "linked";
  std::filesystem::create_directories(linked / name);
  for (const char* entry : {"modelnew_shim.so", "ksmith_candidate.json", "modelnew_shim.so.partial"}) {
    std::filesystem::create_symlink(victim, linked / name / entry);
  }
  auto placed = WriteKernelBenchCandidate(compiled, spec, linked);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(Read(victim), "the user's");
  EXPECT_FALSE(std::filesystem::is_symlink(*placed));
  EXPECT_EQ(Read(*placed), "ELF bytes");

  const std::filesystem::path blocked = folder.path() / "blocked";
  std::filesystem::create_directories(blocked / name / kCandidateSpecFile);  // a folder where a file goes
  placed = WriteKernelBenchCandidate(compiled, spec, blocked);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_EQ(Read(placed->parent_path() / kCandidateSpecFile), spec);

  const std::filesystem::path filed = folder.path() / "filed";
  std::filesystem::create_directories(filed);
  std::filesystem::create_symlink(victim, filed / name);  // a link where the folder goes
  placed = WriteKernelBenchCandidate(compiled, spec, filed);
  ASSERT_TRUE(placed.ok()) << placed.error().message;
  EXPECT_FALSE(std::filesystem::is_symlink(filed / name));
  EXPECT_EQ(Read(victim), "the user's");

  // A build folder ksmith cannot write (a file stands where it should be): an error naming it.
  { std::ofstream(folder.path() / "gone") << "a file"; }
  auto missing = WriteKernelBenchCandidate(compiled, "{}", folder.path() / "gone");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("gone"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace ksmith
