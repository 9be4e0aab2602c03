// `ksmith tasks`, `ksmith tasks show` and `ksmith doctor` as a user (or a script) sees them.
#include <set>
#include <string>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

TEST(TasksCli, ListsEveryTaskWithTheFixedSignatures) {
  const CliResult run = RunKsmith({"tasks", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto json = run.Json();
  ASSERT_TRUE(json.is_array()) << run.Describe();
  EXPECT_GE(json.size(), 9u);
  std::map<std::string, std::string> signatures;
  for (const auto& task : json) {
    EXPECT_FALSE(task.contains("error")) << task.dump();
    signatures[task.value("name", std::string())] = task.value("signature", std::string());
  }
  // docs/design.md: these three are fixed, with C linkage; tests outside the project rely on them.
  const auto expect_signature = [&](const std::string& name, const std::string& fixed) {
    const std::string& shown = signatures[name];
    EXPECT_TRUE(shown == fixed || shown == "extern \"C\" " + fixed)
        << name << ": `ksmith tasks --json` shows '" << shown << "', the fixed signature is '"
        << fixed << "'";
  };
  expect_signature("vector_add", "void vector_add(const float* a, const float* b, float* c, int64_t n)");
  expect_signature("softmax", "void softmax(const float* x, float* y, int64_t rows, int64_t cols)");
  expect_signature("matmul",
                   "void matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k)");
  for (const char* name : {"relu", "gelu", "layernorm", "rmsnorm", "row_sum", "transpose"}) {
    EXPECT_TRUE(signatures.count(name)) << name << " is missing from `ksmith tasks --json`";
  }
}

TEST(TasksCli, ShowDoesNotRevealEvalShapes) {
  const CliResult run = RunKsmith({"tasks", "show", "softmax", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto json = run.Json();
  ASSERT_TRUE(json.is_object()) << run.Describe();
  EXPECT_EQ(json.value("name", std::string()), "softmax");
  EXPECT_GT(json.value("eval_shape_count", 0), 0);
  EXPECT_FALSE(json.contains("eval_shapes"));
  EXPECT_FALSE(json.contains("eval"));
  EXPECT_FALSE(json.contains("bench_shape"));
  EXPECT_FALSE(json.contains("bench"));
  EXPECT_TRUE(json.contains("dev_shapes"));
  // No hidden shape may leak anywhere in the output: 65537 and 4099 are softmax eval dims that
  // appear in no dev shape.
  for (const char* hidden : {"65537", "4099", "2053", "4097"}) {
    EXPECT_EQ(run.out.find(hidden), std::string::npos) << "`tasks show` leaks the hidden dim " << hidden;
  }
  // The human-readable form hides them too.
  const CliResult text = RunKsmith({"tasks", "show", "softmax"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  for (const char* hidden : {"65537", "4099", "2053", "4097"}) {
    EXPECT_EQ(text.out.find(hidden), std::string::npos) << text.out;
  }
}

TEST(TasksCli, ShowUnknownTaskIsAUsageError) {
  const CliResult run = RunKsmith({"tasks", "show", "softmx", "--json"});
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("softmax"), std::string::npos) << run.Describe();
}

TEST(DoctorCli, MeasuresBandwidthAndFlops) {
  const CliResult run = RunKsmith({"doctor", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const auto json = run.Json();
  ASSERT_TRUE(json.is_object()) << run.Describe();
  EXPECT_GT(json.value("memory_bandwidth_gbs", 0.0), 0.0) << run.out;
  EXPECT_GT(json.value("fp32_gflops", 0.0), 0.0) << run.out;
  EXPECT_GE(json.value("cores", 0), 1) << run.out;
  // The sandbox a candidate gets here, as a worker applied it to itself (issue 13: --help
  // promised it, the output had none).
  ASSERT_TRUE(json.contains("sandbox")) << run.out;
  EXPECT_FALSE(json["sandbox"].contains("error")) << json["sandbox"].dump();
  EXPECT_TRUE(json["sandbox"].value("rlimits", false)) << json["sandbox"].dump();
  // Without a GPU: one plain reason, never the loader's words.
  if (!fs::exists("/dev/nvidiactl")) {
    const std::string reason = json["gpu"].value("reason", std::string());
    EXPECT_EQ(reason.rfind("no NVIDIA GPU here (/dev/nvidiactl is missing)", 0), 0u) << reason;
    EXPECT_EQ(reason.find("libcuda"), std::string::npos) << reason;
  }
  const CliResult text = RunKsmith({"doctor"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_NE(text.out.find("\nsandbox      "), std::string::npos) << text.out;
}

}  // namespace
}  // namespace ksmith::it
