// `ksmith optimize --format kernelbench`: a scripted model on loopback writes ModelNew candidates for
// an imported KernelBench problem; the verdicts feed back, the best is a .py file. The model is the
// only fake. Skips, saying why, without a python3 with torch.
#include <fstream>
#include <sstream>

#include "kernelbench_import.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {

using nlohmann::json;

constexpr const char* kKey = "sk-test-kernelbench-0123456789";

// The test problem 1_Linear_Scale: relu(linear(x)) * scale.
const std::string kForgetsTheScale = R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x))
)";
const std::string kCorrect = R"(import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return torch.relu(torch.addmm(self.linear.bias, x, self.linear.weight.t())) * self.scale
)";

std::string Answer(const std::string& words, const std::string& code) { return words + "\n\n```python\n" + code + "```\n"; }

class KernelBenchOptimize : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("ksmith-kb-optimize-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(directory_);
  }
  std::vector<std::string> Flags(const std::string& task, std::vector<std::string> extra) const {
    std::vector<std::string> args = {"optimize", "--task", task, "--format", "kernelbench", "--db",
                                     (directory_ / "runs.db").string(), "--output-dir", (directory_ / "out").string(),
                                     "--timing-budget", "0.1", "--seeds", "1", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  fs::path directory_;
};

TEST_F(KernelBenchOptimize, RefineFeedsTheVerdictBackAndKeepsTheBestModelNewAsPython) {
  SKIP_WITHOUT_TORCH();
  const Imported imported = ImportOnce("test-problems", {(ProblemsDir() / "problems").string()});
  auto server = testing::ScriptedLlmServer::Start(
      {{"steps", json::array({{{"content", Answer("Fuse the linear layer and the ReLU.", kForgetsTheScale)}},
                              {{"content", Answer("Multiply by the scale too.", kCorrect)}}})}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const CliResult run = RunKsmith(Flags("kb_l0_001_linear_scale", {"--provider", "openai", "--base-url",
                                                                   (*server)->base_url(), "--model", "scripted",
                                                                   "--max-candidates", "2"}),
                                  {"KSMITH_TASKS_PATH=" + imported.out.string(), std::string("OPENAI_API_KEY=") + kKey});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const json summary = run.Json();
  ASSERT_TRUE(summary.is_object() && summary["best"].is_object()) << run.Describe();
  EXPECT_EQ(summary["candidates"], 2);
  EXPECT_EQ(summary["best"]["status"], "passed") << summary["best"].value("reason", "");
  EXPECT_EQ(summary["best"]["candidate"], 2);
  const std::string best_path = summary["best"]["source"].get<std::string>();
  EXPECT_TRUE(best_path.ends_with("best.py")) << best_path;
  std::stringstream best;
  best << std::ifstream(best_path).rdbuf();
  EXPECT_EQ(best.str(), kCorrect);

  const auto requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 2u);
  const std::string first = requests[0]["body"].dump();
  EXPECT_NE(first.find("class ModelNew"), std::string::npos) << "the prompt asks for ModelNew";
  EXPECT_NE(first.find("get_init_inputs"), std::string::npos) << "the prompt shows the problem's source";
  EXPECT_NE(requests[1]["body"].dump().find("wrong_output"), std::string::npos) << "the wrong output was not fed back";

  // Replayed without the server and without --format: the run's own format is kept.
  std::vector<std::string> replay = {"optimize", "--provider", "replay", "--replay-run",
                                     summary["run_id"].get<std::string>(), "--db", (directory_ / "runs.db").string(),
                                     "--output-dir", (directory_ / "replay").string(), "--timing-budget", "0.1",
                                     "--seeds", "1", "--max-candidates", "2", "--json"};
  const CliResult replayed = RunKsmith(replay, {"KSMITH_TASKS_PATH=" + imported.out.string()});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.Describe();
  const json again = replayed.Json();
  ASSERT_TRUE(again.is_object() && again["best"].is_object()) << replayed.Describe();
  EXPECT_EQ(again["best"]["status"], "passed");
  EXPECT_TRUE(again["best"]["source"].get<std::string>().ends_with("best.py"));
}

TEST_F(KernelBenchOptimize, ATaskNotFromKernelBenchOrNoModelIsAUsageErrorSayingWhy) {
  const CliResult native_task = RunKsmith(Flags("vector_add", {"--provider", "openai", "--model", "m"}),
                                          {std::string("OPENAI_API_KEY=") + kKey});
  EXPECT_EQ(native_task.exit_code, 2) << native_task.Describe();
  EXPECT_NE(native_task.err.find("ksmith: error: --format kernelbench: "), std::string::npos) << native_task.Describe();
  EXPECT_NE(native_task.err.find("imported from KernelBench"), std::string::npos) << native_task.Describe();
  const CliResult no_model = RunKsmith(Flags("vector_add", {}));
  EXPECT_EQ(no_model.exit_code, 2) << no_model.Describe();
  EXPECT_NE(no_model.err.find("needs a model"), std::string::npos) << no_model.Describe();
}

}  // namespace
}  // namespace ksmith::it
