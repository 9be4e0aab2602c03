// What `ksmith eval` does with input that is not a kernel: broken task files, unknown tasks,
// missing, empty, binary, oversized or unreadable candidates. Each must end with a clear message
// and the documented exit code, never a crash.
#include <sys/stat.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

fs::path HonestKernel(const std::string& name) { return HonestDir() / (name + ".cpp"); }

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Evaluates `candidate` for `task` with timing off: these tests are about input handling.
CliResult Eval(const std::string& task, const fs::path& candidate) {
  return RunKsmith({"eval", "--task", task, "--json", "--quiet", "--no-time", candidate.string()});
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

TEST(BadInput, MalformedTaskTomlNamesTheFileAndLine) {
  TempDir dir("bad-task");
  ASSERT_FALSE(dir.path().empty());
  const fs::path task_dir = dir.path() / "softmax";
  fs::copy(SourceDir() / "tasks" / "normalization" / "softmax", task_dir, fs::copy_options::recursive);
  // Break one line: an unterminated string on the `accumulation` line.
  std::istringstream original(Slurp(task_dir / "task.toml"));
  std::string broken, line;
  int broken_line = 0;
  for (int number = 1; std::getline(original, line); ++number) {
    if (broken_line == 0 && line.starts_with("accumulation")) {
      line = "accumulation = \"cols";
      broken_line = number;
    }
    broken += line + "\n";
  }
  ASSERT_GT(broken_line, 0) << "softmax's task.toml has no accumulation line";
  WriteBytes(task_dir / "task.toml", broken);

  const CliResult run = Eval(task_dir.string(), HonestKernel("softmax_fast"));
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.signal, 0) << run.Describe();
  EXPECT_NE(run.err.find("task.toml"), std::string::npos) << run.Describe();
  EXPECT_NE(run.err.find("task.toml:" + std::to_string(broken_line)), std::string::npos)
      << "stderr does not name line " << broken_line << "\n" << run.Describe();
  // No verdict may be printed for a broken task: --json gets the error object instead.
  EXPECT_FALSE(run.Json().contains("status")) << run.Describe();
  EXPECT_TRUE(ErrorObject(run).is_object()) << run.Describe();
}

TEST(BadInput, TaskTomlWithAWrongValueNamesTheLine) {
  TempDir dir("bad-task");
  const fs::path task_dir = dir.path() / "softmax";
  fs::copy(SourceDir() / "tasks" / "normalization" / "softmax", task_dir, fs::copy_options::recursive);
  // Valid TOML, invalid task: the signature is a number.
  std::istringstream original(Slurp(task_dir / "task.toml"));
  std::string broken, line;
  int broken_line = 0;
  for (int number = 1; std::getline(original, line); ++number) {
    if (broken_line == 0 && line.starts_with("signature")) {
      line = "signature = 42";
      broken_line = number;
    }
    broken += line + "\n";
  }
  ASSERT_GT(broken_line, 0);
  WriteBytes(task_dir / "task.toml", broken);
  const CliResult run = Eval(task_dir.string(), HonestKernel("softmax_fast"));
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("task.toml:" + std::to_string(broken_line)), std::string::npos)
      << run.Describe();
  EXPECT_NE(run.err.find("signature"), std::string::npos) << run.Describe();
}

TEST(BadInput, UnknownTaskSuggestsTheNearestName) {
  const CliResult run = Eval("softmx", HonestKernel("softmax_fast"));
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("did you mean"), std::string::npos) << run.Describe();
  EXPECT_NE(run.err.find("softmax"), std::string::npos) << run.Describe();
  EXPECT_TRUE(PrintedUsageErrorJson(run)) << "--json: the error object on stdout\n" << run.Describe();

  const CliResult other = Eval("vectoradd", HonestKernel("vector_add_fast"));
  EXPECT_EQ(other.exit_code, 2) << other.Describe();
  EXPECT_NE(other.err.find("vector_add"), std::string::npos) << other.Describe();
}

TEST(BadInput, TaskFolderWithoutTaskTomlIsAUsageError) {
  TempDir dir("no-task");
  const CliResult run = Eval(dir.path().string(), HonestKernel("softmax_fast"));
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_FALSE(run.err.empty()) << run.Describe();
}

TEST(BadInput, MissingCandidateFileIsAUsageError) {
  const fs::path missing = BuildDir() / "integration-tmp" / "no-such-candidate.cpp";
  const CliResult run = Eval("vector_add", missing);
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find(missing.string()), std::string::npos) << "stderr must name the file\n"
                                                               << run.Describe();
  EXPECT_NE(Lower(run.err).find("no such file"), std::string::npos) << run.Describe();
  EXPECT_TRUE(PrintedUsageErrorJson(run)) << "--json: the error object on stdout\n" << run.Describe();
}

TEST(BadInput, EmptyCandidateIsACompileError) {
  TempDir dir("empty");
  for (const std::string& text : {std::string(), std::string(" \n\t\n  \n")}) {
    const fs::path file = dir.path() / "empty.cpp";
    WriteBytes(file, text);
    const CliResult run = Eval("vector_add", file);
    ASSERT_EQ(run.exit_code, 0) << run.Describe();
    const auto verdict = run.Json();
    ASSERT_TRUE(verdict.is_object()) << run.Describe();
    EXPECT_EQ(verdict.value("status", std::string()), "compile_error") << run.Describe();
    EXPECT_NE(Lower(verdict.value("reason", std::string())).find("empty"), std::string::npos)
        << run.Describe();
  }
}

TEST(BadInput, SeveralCandidatesEachSayWhichFileTheVerdictIsAboutAndASummaryEnds) {
  // The human form named only the task: with several files nobody could tell which verdict was
  // which, and nothing counted them.
  TempDir dir("several");
  const fs::path empty = dir.path() / "empty.cpp";
  WriteBytes(empty, "");
  const fs::path honest = HonestKernel("vector_add_fast");
  const CliResult run = RunKsmith({"eval", "--task", "vector_add", "--quiet", "--no-time", honest.string(), empty.string()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const size_t honest_at = run.out.find(honest.string() + ":\npassed:");
  const size_t empty_at = run.out.find(empty.string() + ":\ncompile_error:");
  EXPECT_NE(honest_at, std::string::npos) << run.Describe();
  EXPECT_NE(empty_at, std::string::npos) << run.Describe();
  EXPECT_LT(honest_at, empty_at) << "in the order given\n" << run.Describe();
  EXPECT_NE(run.out.find("2 candidates: 1 compile_error, 1 passed"), std::string::npos) << run.Describe();
  // One candidate: the verdict alone, as before.
  const CliResult one = RunKsmith({"eval", "--task", "vector_add", "--quiet", "--no-time", honest.string()});
  EXPECT_EQ(one.out.rfind("passed:", 0), 0u) << one.Describe();
  EXPECT_EQ(one.out.find("candidates:"), std::string::npos) << one.Describe();
}

TEST(BadInput, ACudaSourceOnTheCpuBackendIsAUsageErrorThatSaysAddBackendCuda) {
  // g++ said only "cuda_runtime.h: No such file or directory", in a compile_error verdict.
  TempDir dir("cu-on-cpu");
  const fs::path cuda = dir.path() / "vector_add.cu";
  WriteBytes(cuda, "#include <cuda_runtime.h>\n__global__ void k() {}\n");
  const CliResult run = RunKsmith({"eval", "--task", "vector_add", "--backend", "cpu", "--no-time", cuda.string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("ksmith: error: candidate " + cuda.string()), std::string::npos) << run.Describe();
  EXPECT_NE(run.err.find("add --backend cuda"), std::string::npos) << run.Describe();
  EXPECT_TRUE(run.out.empty()) << run.Describe();
}

TEST(BadInput, BinaryGarbageIsACompileError) {
  TempDir dir("binary");
  std::mt19937 random(12345);
  std::string bytes(4096, '\0');
  for (auto& byte : bytes) byte = static_cast<char>(random() & 0xff);
  bytes[17] = '\0';
  bytes[1000] = '\0';
  const fs::path file = dir.path() / "garbage.cpp";
  WriteBytes(file, bytes);
  const CliResult run = Eval("vector_add", file);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  ASSERT_TRUE(verdict.is_object()) << run.Describe();
  EXPECT_EQ(verdict.value("status", std::string()), "compile_error") << run.Describe();
  const std::string reason = Lower(verdict.value("reason", std::string()));
  EXPECT_TRUE(reason.find("nul") != std::string::npos || reason.find("not text") != std::string::npos)
      << run.Describe();

  // A valid kernel followed by a NUL byte is not text either.
  WriteBytes(file, Slurp(HonestKernel("vector_add_fast")) + std::string(1, '\0'));
  const CliResult tail = Eval("vector_add", file);
  ASSERT_EQ(tail.exit_code, 0) << tail.Describe();
  EXPECT_EQ(tail.Json().value("status", std::string()), "compile_error") << tail.Describe();
}

// A valid kernel padded with comment lines to at least `bytes`, evaluated: it must be refused
// as a compile_error. Returns the verdict's reason; `size` receives the file's size.
std::string EvaluatePaddedSource(const std::string& name, size_t bytes, size_t* size) {
  TempDir dir(name);
  const fs::path file = dir.path() / (name + ".cpp");
  std::string text = Slurp(HonestKernel("vector_add_fast"));
  const std::string padding = "// padding padding padding padding padding padding padding padding\n";
  while (text.size() < bytes) text += padding;
  WriteBytes(file, text);
  *size = text.size();
  const CliResult run = Eval("vector_add", file);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const auto verdict = run.Json();
  EXPECT_TRUE(verdict.is_object()) << run.Describe();
  if (!verdict.is_object()) return {};
  EXPECT_EQ(verdict.value("status", std::string()), "compile_error") << run.Describe();
  return verdict.value("reason", std::string());
}

TEST(BadInput, OversizedSourceIsACompileErrorThatNamesTheSize) {
  size_t size = 0;
  const std::string reason = EvaluatePaddedSource("huge", 10'000'000, &size);
  EXPECT_NE(reason.find(std::to_string(size)), std::string::npos)
      << "the reason should give the file's size: " << reason;
  EXPECT_NE(reason.find("bytes"), std::string::npos) << reason;
}

TEST(BadInput, SourceOverTheReadLimitIsACompileErrorThatNamesTheSize) {
  // The CLI does not read oversized files; the verdict must still say "too large", not "empty".
  size_t size = 0;
  const std::string reason = Lower(EvaluatePaddedSource("huger", 20'000'000, &size));
  EXPECT_EQ(reason.find("empty"), std::string::npos) << "a 20 MB file is not empty: " << reason;
  EXPECT_NE(reason.find(std::to_string(size)), std::string::npos) << reason;
}

TEST(BadInput, DirectoryAsCandidateIsAUsageError) {
  TempDir dir("dir-candidate");
  const fs::path candidate = dir.path() / "kernel.cpp";
  fs::create_directories(candidate);
  const CliResult run = Eval("vector_add", candidate);
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find(candidate.string()), std::string::npos) << run.Describe();
  EXPECT_NE(Lower(run.err).find("directory"), std::string::npos) << run.Describe();
  EXPECT_TRUE(PrintedUsageErrorJson(run)) << "--json: the error object on stdout\n" << run.Describe();
}

TEST(BadInput, UnreadableDirectoryAsCandidateIsAUsageError) {
  TempDir dir("unreadable");
  const fs::path candidate = dir.path() / "locked";
  fs::create_directories(candidate);
  ASSERT_EQ(::chmod(candidate.c_str(), 0), 0);
  const CliResult run = Eval("vector_add", candidate);
  ::chmod(candidate.c_str(), 0755);
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find(candidate.string()), std::string::npos) << run.Describe();
  EXPECT_TRUE(PrintedUsageErrorJson(run)) << "--json: the error object on stdout\n" << run.Describe();
}

TEST(BadInput, UnknownOptionIsAUsageError) {
  const CliResult run = RunKsmith({"eval", "--task", "vector_add", "--no-such-flag",
                                   HonestKernel("vector_add_fast").string()});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
}

}  // namespace
}  // namespace ksmith::it
