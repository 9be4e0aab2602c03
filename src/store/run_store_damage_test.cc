// A run store whose JSON columns read back wrong: every reader says the file is damaged, naming
// the record and the fix (kDamaged), where nlohmann's type_error.306 (or 316 once dumped) reached
// users as an internal error.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "store/database.h"
#include "store/run_store.h"
#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

using namespace testing;  // the store's samples (run_store_test_support.h)

class RunStoreDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = folder_.Open();
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());
    auto call = store_->AddLlmCall("run-a", SampleCall());
    ASSERT_TRUE(call.ok());
    call_id_ = *call;
    auto candidate = store_->AddCandidate(SampleCandidate("run-a", call_id_));
    ASSERT_TRUE(candidate.ok());
    candidate_id_ = *candidate;
    ASSERT_TRUE(store_->AddVerdict(candidate_id_, SampleVerdict("passed", 1.5)).ok());
  }

  // Writes `text` into one column, as a disk fault or a hand edit would leave it.
  void Damage(const std::string& table, const std::string& column, const std::string& text) {
    auto raw = Database::Open(folder_.db_path());
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    const std::string key = table == "verdicts" ? "candidate_id" : "id";
    const SqlValue id = table == "runs"     ? SqlValue(std::string("run-a"))
                        : table == "llm_calls" ? SqlValue(call_id_)
                                               : SqlValue(candidate_id_);
    ASSERT_TRUE((*raw)->Execute(fmt::format("UPDATE {} SET {} = ? WHERE {} = ?", table, column, key), {text, id}).ok());
  }

  // The error says which file, that it is damaged, which record, and what to do.
  void ExpectDamaged(const Error& error, const std::string& record) {
    EXPECT_EQ(error.kind, ErrorKind::kDamaged) << error.message;
    EXPECT_NE(error.message.find("the run store " + folder_.db_path().string() + " is damaged: " + record),
              std::string::npos)
        << error.message;
    EXPECT_NE(error.message.find("move the file aside"), std::string::npos) << error.message;
  }

  testing::StoreFolder folder_;
  std::unique_ptr<RunStore> store_;
  int64_t call_id_ = 0;
  int64_t candidate_id_ = 0;
};

TEST_F(RunStoreDamage, SettingsThatDoNotParseOrAreNoObjectFailEveryReadOfTheRun) {
  for (const std::string text : {"{\"seeds\": 3", "[1, 2]", "\"text\"", "{\"model\": \"\xff\xfe\"}"}) {
    Damage("runs", "config", text);
    auto run = store_->GetRun("run-a");
    ASSERT_FALSE(run.ok()) << text;
    ExpectDamaged(run.error(), "run run-a: its settings (runs.config)");
    auto runs = store_->ListRuns();
    ASSERT_FALSE(runs.ok()) << text;
    ExpectDamaged(runs.error(), "run run-a");
  }
}

TEST_F(RunStoreDamage, AVerdictOfTheWrongShapeIsDamageNotAStringKeptForReadersToTripOn) {
  const std::string record = fmt::format("candidate {} of run run-a: its verdict", candidate_id_);
  for (const std::string& text : {std::string("{\"status\": \"passed\""), std::string("\"passed\""),
                                 std::string("{\"status\": \"splendid\"}"),
                                 std::string("{\"status\": \"passed\", \"reason\": 5}"),
                                 std::string("{\"status\": \"passed\", \"speedup_ci95\": \"wide\"}"),
                                 // Nested: Verdict::FromJson's reading of a stage threw type_error.302.
                                 std::string("{\"status\": \"passed\", \"stages\": [{\"name\": 5}]}")}) {
    Damage("verdicts", "verdict", text);
    auto candidates = store_->Candidates("run-a");
    ASSERT_FALSE(candidates.ok()) << text;
    ExpectDamaged(candidates.error(), record);
  }
  Damage("verdicts", "verdict", SampleVerdict("passed", 1.5).dump());
  EXPECT_TRUE(store_->Candidates("run-a").ok());
}

TEST_F(RunStoreDamage, KnobsRequestsAndRetryReasonsOfTheWrongShapeAreDamage) {
  Damage("candidates", "knobs", "[\"BLOCK\"]");
  auto candidates = store_->Candidates("run-a");
  ASSERT_FALSE(candidates.ok());
  ExpectDamaged(candidates.error(), fmt::format("candidate {} of run run-a: its knobs", candidate_id_));

  Damage("llm_calls", "request", "{\"model\": ");
  auto calls = store_->LlmCalls("run-a");
  ASSERT_FALSE(calls.ok());
  ExpectDamaged(calls.error(), fmt::format("model call {} of run run-a: its request", call_id_));
  Damage("llm_calls", "request", SampleCall().request.dump());
  Damage("llm_calls", "retry_reasons", "{}");
  calls = store_->LlmCalls("run-a");
  ASSERT_FALSE(calls.ok());
  ExpectDamaged(calls.error(), fmt::format("model call {} of run run-a: its retry reasons", call_id_));
}

TEST(RunStoreDamageOfTheFile, DamagedPagesAreTheSameKindAsDamagedColumns) {
  testing::StoreFolder folder;
  {
    auto store = RunStore::Open(folder.db_path());
    ASSERT_TRUE(store.ok()) << store.error().message;
  }
  // Every page after the first overwritten: the header still says SQLite, the tables are gone.
  const auto size = std::filesystem::file_size(folder.db_path());
  {
    std::fstream file(folder.db_path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    const std::string garbage(size - 4096, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto store = RunStore::Open(folder.db_path());
  const Error error = store.ok() ? (*store)->ListRuns().error() : store.error();
  EXPECT_EQ(error.kind, ErrorKind::kDamaged) << error.message;
}

}  // namespace
}  // namespace ksmith
