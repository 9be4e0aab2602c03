#include "kernelbench/candidate.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

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

nlohmann::json Relu() {
  return nlohmann::json::parse(R"({
    "name": "kb_l1_019_relu", "file": "/kb/level1/19_ReLU.py",
    "source": "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    "inputs": [{"name": "x", "dtype": "fp32", "shape": ["batch_size", "dim"], "kind": "input", "index": 0}],
    "outputs": [{"name": "y", "dtype": "fp32", "shape": ["batch_size", "dim"]}],
    "dims": ["batch_size", "dim"], "constant_dims": {"batch_size": "batch_size", "dim": "dim"},
    "scalars": [], "reference_dtype": "float64",
    "python": {"sys_path": [], "libpython": "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "home": "/usr"}
  })");
}

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

// Each candidate loads a copy of its own: one file per candidate (the loader would hand a second
// candidate the first one's handle for a link), with its spec beside it.
TEST(KernelBenchCandidateShim, EachCandidateGetsItsOwnCopyBesideItsSpec) {
  ScopedTempDir folder("kb-candidate");
  ASSERT_TRUE(folder.ok());
  const ScopedTempDir* temp = &folder;
  const std::filesystem::path compiled = temp->path() / "shim.so";
  { std::ofstream(compiled, std::ios::binary) << "ELF bytes"; }
  for (const char* name : {"a", "b"}) std::filesystem::create_directories(temp->path() / name);
  auto first = WriteKernelBenchCandidate(compiled, R"({"candidate_file": "a.py"})", temp->path() / "a");
  auto second = WriteKernelBenchCandidate(compiled, R"({"candidate_file": "b.py"})", temp->path() / "b");
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(*first, temp->path() / "a" / "modelnew_shim.so");
  EXPECT_EQ(Read(*first), "ELF bytes");
  EXPECT_EQ(Read(temp->path() / "b" / kCandidateSpecFile), R"({"candidate_file": "b.py"})");
  struct stat one{}, two{};
  ASSERT_EQ(::stat(first->c_str(), &one), 0);
  ASSERT_EQ(::stat(second->c_str(), &two), 0);
  EXPECT_NE(one.st_ino, two.st_ino);
  // Written again (the same candidate judged again from its cached build): replaced whole.
  EXPECT_TRUE(WriteKernelBenchCandidate(compiled, R"({"candidate_file": "a2.py"})", temp->path() / "a").ok());
  EXPECT_EQ(Read(temp->path() / "a" / kCandidateSpecFile), R"({"candidate_file": "a2.py"})");
  // Links the build sandbox left under those names (to a file of the user's) are replaced, never
  // written through.
  const std::filesystem::path victim = temp->path() / "victim";
  { std::ofstream(victim) << "the user's"; }
  std::filesystem::create_directories(temp->path() / "c");
  std::filesystem::create_symlink(victim, temp->path() / "c" / "modelnew_shim.so");
  std::filesystem::create_symlink(victim, temp->path() / "c" / kCandidateSpecFile);
  std::filesystem::create_symlink(victim, temp->path() / "c" / "modelnew_shim.so.partial");
  ASSERT_TRUE(WriteKernelBenchCandidate(compiled, "{}", temp->path() / "c").ok());
  EXPECT_EQ(Read(victim), "the user's");
  EXPECT_FALSE(std::filesystem::is_symlink(temp->path() / "c" / "modelnew_shim.so"));
  EXPECT_FALSE(std::filesystem::is_symlink(temp->path() / "c" / kCandidateSpecFile));
  EXPECT_EQ(Read(temp->path() / "c" / "modelnew_shim.so"), "ELF bytes");
  // A folder it cannot write (here a file stands where it should be) is an error that names it.
  { std::ofstream(temp->path() / "gone") << "a file"; }
  auto missing = WriteKernelBenchCandidate(compiled, "{}", temp->path() / "gone");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("gone"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace ksmith
