// The candidate formats' registry: every format found by name and by its file, unknown names
// refused with the choices, and each format's two faces agreeing.
#include "formats/format_registry.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "eval/native_format.h"
#include "kernelbench/kernelbench_format.h"
#include "task/registry.h"

namespace ksmith {
namespace {

TEST(FormatRegistry, FindsEveryRegisteredFormatByNameAndByItsFile) {
  const FormatRegistry& registry = FormatRegistry::Global();
  ASSERT_EQ(registry.Names(), (std::vector<std::string>{"native", "kernelbench"}));
  for (const std::string& name : registry.Names()) {
    auto found = registry.Find(name);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ((*found)->format().name(), name);
    const std::string extension = (*found)->format().FileExtension();
    // A format with a file of its own claims it; the native format takes what none claims.
    const std::string path = "dir/candidate" + (extension.empty() ? std::string(".cu") : extension);
    EXPECT_EQ(&registry.ForPath(path), *found) << path;
  }
  EXPECT_EQ(&registry.ForPath("k.cc"), &NativeModelFormat());
  EXPECT_EQ(&registry.ForPath("model_new.py").format(), &KernelBenchFormat());
  EXPECT_EQ(&NativeModelFormat().format(), &NativeFormat());
}

TEST(FormatRegistry, AnUnknownNameIsRefusedNamingEveryChoice) {
  auto found = FormatRegistry::Global().Find("triton");
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(found.error().message,
            "unknown candidate format 'triton': choose native (ksmith's function contract) or kernelbench (a Python "
            "file defining ModelNew, on a task imported from KernelBench)");
}

TEST(FormatRegistry, RefusesASecondFormatOfTheSameName) {
  FormatRegistry registry;
  EXPECT_TRUE(registry.Register(NativeModelFormat()).ok());
  const Status again = registry.Register(NativeModelFormat());
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("'native' is registered already"), std::string::npos);
  EXPECT_EQ(&registry.ForPath("x.py"), &NativeModelFormat()) << "only registered formats claim paths";
}

TEST(FormatRegistry, EachFormatExtractsItsOwnCandidate) {
  TaskRegistry tasks(std::filesystem::path(KSMITH_SOURCE_DIR) / "tasks");
  auto task = tasks.Find("relu");
  ASSERT_TRUE(task.ok()) << task.error().message;
  const std::string model_new = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n";
  const std::string answer = "```python\n" + model_new + "```\n";
  const auto python = KernelBenchModelFormat().Extract(answer, *task, "cpu");
  ASSERT_TRUE(python.ok()) << python.error().message;
  EXPECT_EQ(python->source, model_new);
  EXPECT_FALSE(NativeModelFormat().Extract(answer, *task, "cpu").ok());
  EXPECT_TRUE(NativeModelFormat().UsesTaskSeeds());
  EXPECT_FALSE(KernelBenchModelFormat().UsesTaskSeeds());
  EXPECT_FALSE(KernelBenchModelFormat().CheckTask(*task).ok()) << "relu was not imported from KernelBench";
}

TEST(ReadCandidateFile, SetsTheFormatFromThePath) {
  const auto directory = std::filesystem::temp_directory_path() / ("ksmith-format-" + std::to_string(::getpid()));
  std::filesystem::create_directories(directory);
  for (const auto& [file, format] : {std::pair{"k.cc", &NativeFormat()}, std::pair{"k.py", &KernelBenchFormat()}}) {
    const auto path = (directory / file).string();
    { std::ofstream(path) << "text\n"; }
    auto read = ReadCandidateFile(path);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->format, format) << file;
    EXPECT_EQ(&FormatOf(*read), format);
  }
  std::filesystem::remove_all(directory);
  EXPECT_EQ(&FormatOf(CandidateSource{}), &NativeFormat()) << "a source that names no format is native";
}

}  // namespace
}  // namespace ksmith
