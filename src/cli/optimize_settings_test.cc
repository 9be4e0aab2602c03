#include "cli/optimize_settings.h"
#include "cli/setting_ranges.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

namespace fs = std::filesystem;

class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("ksmith-settings-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(directory_);
  }
  void TearDown() override { fs::remove_all(directory_); }

  fs::path Write(const std::string& text) {
    const fs::path path = directory_ / "ksmith.toml";
    std::ofstream(path) << text;
    return path;
  }

  fs::path directory_;
};

TEST_F(ConfigFile, ReadsEveryTable) {
  OptimizeSettings settings;
  auto status = ApplyConfigFile(Write(R"(
[llm]
provider = "anthropic"
model = "claude-x"
base_url = "http://127.0.0.1:9/v1"
max_concurrency = 2
request_timeout_s = 1.5
price_input_per_million = 3
cache = true
[optimize]
task = "softmax"
strategy = "sample"
max_candidates = 7
[budget]
tokens = 5000
dollars = 1.25
wall_s = 60
[eval]
seeds = 1
timing_budget_s = 0.2
build_memory_gib = 4
build_cpu_s = 90
)"), settings);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(settings.provider, "anthropic");
  EXPECT_EQ(settings.model, "claude-x");
  EXPECT_EQ(settings.parallel, 2);
  EXPECT_DOUBLE_EQ(settings.request_timeout_s, 1.5);
  EXPECT_DOUBLE_EQ(settings.price_input_per_million, 3);
  EXPECT_TRUE(settings.response_cache);
  EXPECT_EQ(settings.task, "softmax");
  EXPECT_EQ(settings.strategy, "sample");
  EXPECT_EQ(settings.max_candidates, 7);
  EXPECT_EQ(settings.budget_tokens, 5000);
  EXPECT_DOUBLE_EQ(settings.budget_dollars.value_or(0), 1.25);
  EXPECT_DOUBLE_EQ(settings.budget_wall_s.value_or(0), 60);
  EXPECT_EQ(settings.seeds, 1);
  EXPECT_DOUBLE_EQ(settings.build_memory_gib, 4);
  EXPECT_DOUBLE_EQ(settings.build_cpu_s, 90);
  // Stored with the run, so that a resumed run builds under the same limits.
  EXPECT_DOUBLE_EQ(OptimizeSettings::FromJson(settings.ToJson()).value().build_memory_gib, 4);
}

TEST_F(ConfigFile, RefusesAnApiKeyInTheFile) {
  OptimizeSettings settings;
  auto status = ApplyConfigFile(Write("[llm]\napi_key = \"sk-secret\"\n"), settings);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("environment"), std::string::npos);
  EXPECT_EQ(status.error().message.find("sk-secret"), std::string::npos);
}

TEST_F(ConfigFile, UnknownKeysTablesAndWrongTypesNameTheFileAndKey) {
  OptimizeSettings settings;
  auto typo = ApplyConfigFile(Write("[llm]\nmodle = \"x\"\n"), settings);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("modle"), std::string::npos);
  EXPECT_NE(typo.error().message.find("ksmith.toml"), std::string::npos);
  auto table = ApplyConfigFile(Write("[llms]\nmodel = \"x\"\n"), settings);
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.error().message.find("[llms]"), std::string::npos);
  auto type = ApplyConfigFile(Write("[optimize]\nmax_candidates = \"many\"\n"), settings);
  ASSERT_FALSE(type.ok());
  EXPECT_NE(type.error().message.find("max_candidates"), std::string::npos);
  auto syntax = ApplyConfigFile(Write("[llm\nmodel = 1\n"), settings);
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("ksmith.toml:1"), std::string::npos) << syntax.error().message;
}

TEST_F(ConfigFile, EachRoleMayHaveAModelOfItsOwn) {
  OptimizeSettings settings;
  ASSERT_TRUE(ApplyConfigFile(Write(R"(
[llm]
provider = "openai"
model = "coder-model"
[roles.planner]
model = "big-planner"
temperature = 0.2
[roles.judge]
provider = "anthropic"
model = "claude-judge"
)"), settings).ok());
  ASSERT_EQ(settings.roles.size(), 2u);
  EXPECT_EQ(settings.roles["planner"].model, "big-planner");
  EXPECT_EQ(settings.roles["planner"].temperature, 0.2);
  EXPECT_EQ(settings.roles["judge"].provider, "anthropic");
  EXPECT_FALSE(settings.roles["judge"].temperature.has_value());
  // Stored with the run: a resume asks each role's model again.
  EXPECT_EQ(OptimizeSettings::FromJson(settings.ToJson()).value().roles, settings.roles);

  auto unknown = ApplyConfigFile(Write("[roles.reviewer]\nmodel = \"x\"\n"), settings);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown table [roles.reviewer] (known: [roles.planner]"), std::string::npos)
      << unknown.error().message;
  auto key = ApplyConfigFile(Write("[roles.judge]\napi_key = \"sk-secret\"\n"), settings);
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.error().message.find("[roles.judge] api_key: API keys are read only from the environment"), std::string::npos);
  auto hot = ApplyConfigFile(Write("[roles.coder]\ntemperature = 7\n"), settings);
  ASSERT_FALSE(hot.ok());
  EXPECT_NE(hot.error().message.find("[roles.coder] temperature"), std::string::npos) << hot.error().message;
  auto typo = ApplyConfigFile(Write("[roles.coder]\nmodle = \"x\"\n"), settings);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("[roles.coder] has no key 'modle'"), std::string::npos) << typo.error().message;
}

TEST(OptimizeSettings, JsonRoundTripKeepsEverySetting) {
  OptimizeSettings settings;
  settings.task = "matmul";
  settings.backend = "cuda";
  settings.provider = "openai";
  settings.model = "m";
  settings.max_candidates = 3;
  settings.budget_dollars = 2.5;
  settings.temperature = 0.1;
  settings.format = "kernelbench";
  const OptimizeSettings back = OptimizeSettings::FromJson(settings.ToJson()).value();
  EXPECT_EQ(back.ToJson(), settings.ToJson());
  EXPECT_FALSE(back.budget_tokens.has_value());
  EXPECT_EQ(back.budget_dollars, 2.5);
  EXPECT_EQ(back.format, "kernelbench");
  // A run stored before the setting existed wrote ksmith's contract.
  nlohmann::json older = settings.ToJson();
  older.erase("format");
  EXPECT_EQ(OptimizeSettings::FromJson(older).value().format, "native");
  // ...and searched without overlap, knowledge or profiles: a resume keeps it so.
  for (const char* key : {"overlap", "knowledge", "profile_every"}) older.erase(key);
  const OptimizeSettings old_run = OptimizeSettings::FromJson(older).value();
  EXPECT_FALSE(old_run.overlap);
  EXPECT_FALSE(old_run.knowledge);
  EXPECT_EQ(old_run.profile_every, 0);
  EXPECT_TRUE(back.overlap);
  EXPECT_EQ(back.profile_every, 5);
}

TEST(OptimizeSettings, AStoredSettingOfAnotherTypeIsDamageNamingTheKey) {
  // Read as its default, a mistyped setting would change a resumed run; get<> threw type_error.302.
  nlohmann::json stored = OptimizeSettings().ToJson();
  stored["seeds"] = "three";
  const auto read = OptimizeSettings::FromJson(stored);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().kind, ErrorKind::kDamaged);
  EXPECT_NE(read.error().message.find("'seeds' is JSON of type string"), std::string::npos) << read.error().message;
  stored = OptimizeSettings().ToJson();
  stored["budget_tokens"] = {1, 2};
  EXPECT_EQ(OptimizeSettings::FromJson(stored).error().kind, ErrorKind::kDamaged);
  EXPECT_EQ(OptimizeSettings::FromJson(nlohmann::json("text")).error().kind, ErrorKind::kDamaged);
}

// One rule and one message for a number, whether a flag or ksmith.toml gives it (issue 13).
TEST_F(ConfigFile, ANumberOutOfRangeGetsTheSameWordsAsItsFlag) {
  OptimizeSettings settings;
  auto negative = ApplyConfigFile(Write("[optimize]\nmax_candidates = -3\n"), settings);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("[optimize] max_candidates must be an integer from 1 to 100000, got -3"),
            std::string::npos)
      << negative.error().message;
  const SettingRange* range = RangeOf("max_candidates");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(CheckRange(*range, "-3"), "must be an integer from 1 to 100000, got -3");
  auto fraction = ApplyConfigFile(Write("[eval]\ntiming_budget_s = 0.01\n"), settings);
  ASSERT_FALSE(fraction.ok());
  EXPECT_NE(fraction.error().message.find("timing_budget_s must be a number from 0.05 to 600, got 0.01"),
            std::string::npos)
      << fraction.error().message;
  EXPECT_EQ(CheckRange(*RangeOf("seeds"), "2.5"), "must be an integer from 1 to 100, got '2.5'");
  EXPECT_EQ(CheckRange(*RangeOf("seeds"), "7"), "");
}

}  // namespace
}  // namespace ksmith
