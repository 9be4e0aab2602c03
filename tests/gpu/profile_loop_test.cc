// On a machine with an NVIDIA GPU: the optimize loop profiles the run's best kernel with ncu and its
// bottleneck facts reach the model's next prompt (a scripted model on loopback answers with
// variants of relu's CUDA seed; the kernels, the GPU and ncu are real). Where ncu is missing, the
// run says so once and goes on. Without a GPU it skips and says why.
#include <gtest/gtest.h>

#include "../integration/cli_runner.h"
#include "agent/optimize_loop.h"
#include "store/run_store.h"
#include "testing/scripted_llm_server.h"

namespace ksmith::it {
namespace {

std::string WhyNoGpu() {
  if (!fs::exists("/dev/nvidiactl")) return "no NVIDIA GPU here (/dev/nvidiactl is missing)";
  if (!fs::exists(BuildDir() / "ksmith-cuda-worker")) return "ksmith-cuda-worker was not built (no nvcc)";
  return {};
}

bool HaveNcu() { return std::system("command -v ncu > /dev/null 2>&1") == 0; }

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(ProfilerInTheLoop, TheBestKernelsNcuFactsReachTheNextPrompt) {
  if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  const std::string seed = Slurp(SourceDir() / "tasks/elementwise/relu/seed_cuda.cu");
  nlohmann::json steps = nlohmann::json::array();
  for (int variant = 1; variant <= 3; ++variant) {
    const std::string kernel = "static constexpr int kVariant = " + std::to_string(variant) + ";\n" + seed;
    steps.push_back({{"content", "Variant " + std::to_string(variant) + ".\n\n```cuda\n" + kernel + "```\n"}});
  }
  auto server = testing::ScriptedLlmServer::Start({{"steps", steps}});
  ASSERT_TRUE(server.ok()) << server.error().message;
  TempDir directory("profile-loop");
  const std::string db = (directory.path() / "runs.db").string();
  const CliResult run = RunKsmith({"optimize", "--task", "relu", "--backend", "cuda", "--provider", "openai",
                                   "--base-url", (*server)->base_url(), "--model", "scripted", "--max-candidates", "3",
                                   "--profile-every", "1", "--db", db, "--output-dir", (directory.path() / "out").string(),
                                   "--timing-budget", "0.2", "--seeds", "1", "--json"},
                                  {"OPENAI_API_KEY=sk-test-profile"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto requests = (*server)->requests();
  ASSERT_EQ(requests.size(), 3u);
  if (!HaveNcu()) {
    EXPECT_EQ(Count(run.err, "no profiler facts for candidate"), 1u) << run.err;
    GTEST_SKIP() << "ncu is not on PATH: the run said so once and went on";
  }
  EXPECT_NE(run.err.find("candidate 1 profiled: "), std::string::npos) << run.err;
  // The prompt after the profile shows ncu's facts of the best kernel.
  EXPECT_NE(requests[1]["body"].dump().find("Profiler (ncu, one call at the timed shape)"), std::string::npos)
      << requests[1]["body"].dump();
  auto store = RunStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto profiles = (*store)->Profiles(run.Json()["run_id"]);
  ASSERT_TRUE(profiles.ok()) << profiles.error().message;
  EXPECT_GE(profiles->size(), 1u);
  // A resumed reading of the run sees the profile in the best kernel's verdict.
  auto state = LoadRunState(**store, run.Json()["run_id"]);
  ASSERT_TRUE(state.ok());
  size_t with_profile = 0;
  for (const auto& attempt : state->attempts) {
    if (attempt.verdict && attempt.verdict->FindStage(StageId::kProfile) != nullptr) ++with_profile;
  }
  EXPECT_EQ(with_profile, profiles->size());
}

}  // namespace
}  // namespace ksmith::it
