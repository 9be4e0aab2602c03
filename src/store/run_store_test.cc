// The run store's records: every field round-trips, the store assigns sequences, derives
// statuses and totals, and refuses to overwrite a verdict.
#include "store/run_store.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "store/database.h"
#include "store/run_store_test_support.h"
#include "testing/scoped_env.h"

namespace ksmith {
namespace {

using namespace testing;  // the store's samples (run_store_test_support.h)

class RunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = folder_.Open();
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->CreateRun(SampleRun("run-a"), kSampleTaskToml).ok());
  }

  int64_t AddCall(const std::string& run_id, const LlmCall& call = SampleCall()) {
    auto id = store_->AddLlmCall(run_id, call);
    EXPECT_TRUE(id.ok()) << id.error().message;
    return id.ok() ? *id : -1;
  }

  int64_t AddCandidate(const CandidateRecord& candidate) {
    auto id = store_->AddCandidate(candidate);
    EXPECT_TRUE(id.ok()) << id.error().message;
    return id.ok() ? *id : -1;
  }

  testing::StoreFolder folder_;
  std::unique_ptr<RunStore> store_;
};

TEST(RunStoreIds, NewRunIdIsUtcTimeAndSixHexDigits) {
  const std::string id = RunStore::NewRunId();
  EXPECT_TRUE(std::regex_match(id, std::regex(R"(20\d{6}-\d{6}-[0-9a-f]{6})"))) << id;
  EXPECT_NE(RunStore::NewRunId(), RunStore::NewRunId());
}

TEST(RunStoreDefaultPath, KsmithDbWinsOverTheCacheDirectory) {
  testing::ScopedEnv db("KSMITH_DB", "/somewhere/else.db");
  EXPECT_EQ(DefaultStorePath().value(), "/somewhere/else.db");
}

TEST(RunStoreDefaultPath, OtherwiseRunsDbInTheCacheDirectory) {
  ScopedTempDir cache("ksmith-store-cache");
  testing::ScopedEnv db("KSMITH_DB", "");
  testing::ScopedEnv cache_dir("KSMITH_CACHE_DIR", cache.path().string());
  EXPECT_EQ(DefaultStorePath().value(), cache.path() / "runs.db");
}

TEST_F(RunStoreTest, RunRoundTrips) {
  auto run = store_->GetRun("run-a");
  ASSERT_TRUE(run.ok()) << run.error().message;
  const RunRecord expected = SampleRun("run-a");
  EXPECT_EQ(run->id, "run-a");
  EXPECT_EQ(run->task, expected.task);
  EXPECT_EQ(run->backend, expected.backend);
  EXPECT_EQ(run->strategy, expected.strategy);
  EXPECT_EQ(run->provider, expected.provider);
  EXPECT_EQ(run->model, expected.model);
  EXPECT_EQ(run->config, expected.config);
  EXPECT_EQ(run->status, "running");
  EXPECT_EQ(run->stop_reason, "");
  EXPECT_TRUE(std::regex_match(run->created_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << run->created_at;
  EXPECT_EQ(run->finished_at, "");
  EXPECT_EQ(run->best_candidate_id, std::nullopt);
  EXPECT_EQ(store_->TaskToml("run-a").value(), kSampleTaskToml);
}

TEST_F(RunStoreTest, DuplicateRunIdIsRefused) {
  const Status again = store_->CreateRun(SampleRun("run-a"), kSampleTaskToml);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(again.error().message.find("run-a"), std::string::npos);
}

TEST_F(RunStoreTest, IdenticalTaskTextIsStoredOnce) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-b"), kSampleTaskToml).ok());
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-c"), std::string(kSampleTaskToml) + "# edited\n").ok());
  auto database = Database::Open(folder_.db_path());
  ASSERT_TRUE(database.ok());
  EXPECT_EQ((*database)->QueryInt("SELECT COUNT(*) FROM tasks").value(), 2);
  EXPECT_EQ(store_->TaskToml("run-c").value(), std::string(kSampleTaskToml) + "# edited\n");
}

TEST_F(RunStoreTest, UnknownRunIsNotFoundAndNamed) {
  auto run = store_->GetRun("no-such-run");
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(run.error().message.find("no-such-run"), std::string::npos);
  EXPECT_EQ(store_->Candidates("no-such-run").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->LlmCalls("no-such-run").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->TaskToml("no-such-run").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->ReopenRun("no-such-run").error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->FinishRun("no-such-run", "finished", "", std::nullopt).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->AddLlmCall("no-such-run", SampleCall()).error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(store_->AddCandidate(SampleCandidate("no-such-run")).error().kind, ErrorKind::kNotFound);
}

TEST_F(RunStoreTest, EveryLlmCallFieldRoundTrips) {
  LlmCall with_reply = SampleCall();
  // Raw bodies may be anything: NULs, bytes that are not UTF-8.
  with_reply.response_body = std::string("<html>\0\xff not JSON", sizeof("<html>\0\xff not JSON") - 1);
  LlmCall failed;
  failed.provider = "anthropic";
  failed.model = "claude-test";
  failed.role = "reviewer";
  failed.request = {{"system", "s"}, {"messages", nlohmann::json::array()}};
  failed.response_body = "";
  failed.http_status = 529;
  failed.attempts = 6;
  failed.latency_s = 61.5;
  failed.error = "HTTP 529: overloaded";
  failed.provider_exhausted = true;
  failed.input_tokens = 0;
  failed.output_tokens = 0;
  failed.cost_dollars = 0;
  AddCall("run-a", with_reply);
  AddCall("run-a", failed);

  auto calls = store_->LlmCalls("run-a");
  ASSERT_TRUE(calls.ok()) << calls.error().message;
  ASSERT_EQ(calls->size(), 2u);
  int64_t sequence = 0;
  for (const auto& [record, original] : {std::pair(calls->at(0), with_reply), std::pair(calls->at(1), failed)}) {
    EXPECT_EQ(record.run_id, "run-a");
    EXPECT_EQ(record.sequence, sequence++);
    EXPECT_FALSE(record.created_at.empty());
    const LlmCall& call = record.call;
    EXPECT_EQ(call.provider, original.provider);
    EXPECT_EQ(call.model, original.model);
    EXPECT_EQ(call.role, original.role);
    EXPECT_EQ(call.request, original.request);
    EXPECT_EQ(call.response_body, original.response_body);
    EXPECT_EQ(call.http_status, original.http_status);
    EXPECT_EQ(call.attempts, original.attempts);
    EXPECT_DOUBLE_EQ(call.latency_s, original.latency_s);
    EXPECT_EQ(call.cached, original.cached);
    ASSERT_EQ(call.reply.has_value(), original.reply.has_value());
    if (call.reply) {
      EXPECT_EQ(call.reply->content, original.reply->content);
      EXPECT_EQ(call.reply->finish_reason, original.reply->finish_reason);
      EXPECT_EQ(call.reply->input_tokens, original.reply->input_tokens);
      EXPECT_EQ(call.reply->output_tokens, original.reply->output_tokens);
    }
    EXPECT_EQ(call.error, original.error);
    EXPECT_EQ(call.provider_exhausted, original.provider_exhausted);
    EXPECT_EQ(call.input_tokens, original.input_tokens);
    EXPECT_EQ(call.output_tokens, original.output_tokens);
    EXPECT_DOUBLE_EQ(call.cost_dollars, original.cost_dollars);
  }
}

TEST_F(RunStoreTest, EveryCandidateFieldRoundTrips) {
  const int64_t call_id = AddCall("run-a");
  const int64_t parent_id = AddCandidate(SampleCandidate("run-a"));
  CandidateRecord candidate = SampleCandidate("run-a", call_id, parent_id);
  candidate.id = 999;        // ignored: the store assigns ids
  candidate.sequence = 999;  // and sequences
  candidate.knobs = {{"BLOCK", "128"}};
  candidate.created_at = "2026-01-02T03:04:05.678Z";
  const int64_t id = AddCandidate(candidate);

  auto candidates = store_->Candidates("run-a");
  ASSERT_TRUE(candidates.ok()) << candidates.error().message;
  ASSERT_EQ(candidates->size(), 2u);
  const CandidateRecord& read = candidates->at(1);
  EXPECT_EQ(read.id, id);
  EXPECT_NE(read.id, 999);
  EXPECT_EQ(read.run_id, "run-a");
  EXPECT_EQ(read.sequence, 1);
  EXPECT_EQ(read.parent_id, parent_id);
  EXPECT_EQ(read.origin, "llm");
  EXPECT_EQ(read.role, "coder");
  EXPECT_EQ(read.llm_call_id, call_id);
  EXPECT_EQ(read.source, candidate.source);
  EXPECT_EQ(read.extraction_error, "");
  EXPECT_EQ(read.knobs, candidate.knobs);
  EXPECT_EQ(read.explanation, candidate.explanation);
  EXPECT_EQ(read.created_at, candidate.created_at);
  EXPECT_EQ(read.verdict, std::nullopt);
  EXPECT_EQ(read.status, "pending");
  EXPECT_EQ(read.speedup, std::nullopt);
  EXPECT_EQ(candidates->at(0).parent_id, std::nullopt);
  EXPECT_EQ(candidates->at(0).llm_call_id, std::nullopt);
  EXPECT_FALSE(candidates->at(0).created_at.empty());
}

TEST_F(RunStoreTest, SequencesCountWithinEachRun) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-b"), kSampleTaskToml).ok());
  for (int i = 0; i < 3; ++i) {
    AddCall("run-a");
    AddCall("run-b");
    AddCandidate(SampleCandidate("run-b"));
    AddCandidate(SampleCandidate("run-a"));
  }
  for (const char* run_id : {"run-a", "run-b"}) {
    auto calls = store_->LlmCalls(run_id).value();
    auto candidates = store_->Candidates(run_id).value();
    ASSERT_EQ(calls.size(), 3u);
    ASSERT_EQ(candidates.size(), 3u);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(calls[i].sequence, i) << run_id;
      EXPECT_EQ(candidates[i].sequence, i) << run_id;
      EXPECT_EQ(candidates[i].run_id, run_id);
    }
  }
}

TEST_F(RunStoreTest, ReferencesMustStayWithinTheRun) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-b"), kSampleTaskToml).ok());
  const int64_t other_call = AddCall("run-b");
  const int64_t other_candidate = AddCandidate(SampleCandidate("run-b"));
  auto wrong_call = store_->AddCandidate(SampleCandidate("run-a", other_call));
  ASSERT_FALSE(wrong_call.ok());
  EXPECT_EQ(wrong_call.error().kind, ErrorKind::kInvalidArgument);
  auto wrong_parent = store_->AddCandidate(SampleCandidate("run-a", std::nullopt, other_candidate));
  ASSERT_FALSE(wrong_parent.ok());
  EXPECT_NE(wrong_parent.error().message.find("belongs to run 'run-b'"), std::string::npos)
      << wrong_parent.error().message;
  auto missing_parent = store_->AddCandidate(SampleCandidate("run-a", std::nullopt, 12345));
  ASSERT_FALSE(missing_parent.ok());
  EXPECT_EQ(missing_parent.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(store_->Candidates("run-a")->empty()) << "a refused candidate left a row";
}

TEST_F(RunStoreTest, StatusComesFromVerdictThenExtractionThenPending) {
  const int64_t passed = AddCandidate(SampleCandidate("run-a"));
  CandidateRecord no_code = SampleCandidate("run-a");
  no_code.source = "";
  no_code.extraction_error = "the reply has no code block";
  AddCandidate(no_code);
  AddCandidate(SampleCandidate("run-a"));
  const int64_t timed_only = AddCandidate(SampleCandidate("run-a"));
  ASSERT_TRUE(store_->AddVerdict(passed, SampleVerdict("passed", 1.75)).ok());
  // Only timing.speedup.median, no top-level "speedup": still found.
  nlohmann::json nested = SampleVerdict("passed", 2.0);
  nested.erase("speedup");
  ASSERT_TRUE(store_->AddVerdict(timed_only, nested).ok());

  const auto candidates = store_->Candidates("run-a").value();
  ASSERT_EQ(candidates.size(), 4u);
  EXPECT_EQ(candidates[0].status, "passed");
  EXPECT_EQ(candidates[0].speedup, 1.75);
  EXPECT_EQ(candidates[0].verdict, SampleVerdict("passed", 1.75));
  EXPECT_EQ(candidates[1].status, "extraction_failed");
  EXPECT_EQ(candidates[1].extraction_error, "the reply has no code block");
  EXPECT_EQ(candidates[2].status, "pending");
  EXPECT_EQ(candidates[3].speedup, 2.0);
}

TEST_F(RunStoreTest, AVerdictIsNeverOverwritten) {
  const int64_t id = AddCandidate(SampleCandidate("run-a"));
  ASSERT_TRUE(store_->AddVerdict(id, SampleVerdict("wrong_output")).ok());
  const Status again = store_->AddVerdict(id, SampleVerdict("passed", 9.0));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(again.error().message.find("already has a verdict (wrong_output"), std::string::npos)
      << again.error().message;
  EXPECT_EQ(store_->Candidates("run-a")->at(0).status, "wrong_output");
}

TEST_F(RunStoreTest, VerdictsNeedAnEvaluableCandidateAndAStatus) {
  CandidateRecord no_code = SampleCandidate("run-a");
  no_code.extraction_error = "truncated";
  const int64_t failed_extraction = AddCandidate(no_code);
  EXPECT_EQ(store_->AddVerdict(failed_extraction, SampleVerdict("passed")).error().kind,
            ErrorKind::kInvalidArgument);
  EXPECT_EQ(store_->AddVerdict(424242, SampleVerdict("passed")).error().kind, ErrorKind::kNotFound);
  const int64_t id = AddCandidate(SampleCandidate("run-a"));
  EXPECT_EQ(store_->AddVerdict(id, {{"reason", "no status"}}).error().kind, ErrorKind::kInvalidArgument);
}

TEST_F(RunStoreTest, TotalsAreComputedFromTheRows) {
  LlmCall cheap = SampleCall();
  cheap.input_tokens = 100;
  cheap.output_tokens = 20;
  cheap.cost_dollars = 0.25;
  LlmCall expensive = cheap;
  expensive.input_tokens = 1000;
  expensive.cost_dollars = 1.5;
  AddCall("run-a", cheap);
  AddCall("run-a", expensive);
  const int64_t slow = AddCandidate(SampleCandidate("run-a"));
  const int64_t fast = AddCandidate(SampleCandidate("run-a"));
  const int64_t wrong = AddCandidate(SampleCandidate("run-a"));
  AddCandidate(SampleCandidate("run-a"));  // pending: not counted
  ASSERT_TRUE(store_->AddVerdict(slow, SampleVerdict("passed", 1.5)).ok());
  ASSERT_TRUE(store_->AddVerdict(fast, SampleVerdict("passed", 2.5)).ok());
  // A failed candidate's speedup never counts as the best.
  ASSERT_TRUE(store_->AddVerdict(wrong, SampleVerdict("wrong_output", 9.0)).ok());

  const RunRecord run = store_->GetRun("run-a").value();
  EXPECT_EQ(run.candidates, 3);
  EXPECT_EQ(run.passed, 2);
  EXPECT_EQ(run.llm_calls, 2);
  EXPECT_EQ(run.tokens, 120 + 1020);
  EXPECT_DOUBLE_EQ(run.cost_dollars, 1.75);
  EXPECT_EQ(run.best_speedup, 2.5);

  ASSERT_TRUE(store_->CreateRun(SampleRun("empty"), kSampleTaskToml).ok());
  const RunRecord empty = store_->GetRun("empty").value();
  EXPECT_EQ(empty.candidates, 0);
  EXPECT_EQ(empty.tokens, 0);
  EXPECT_EQ(empty.cost_dollars, 0);
  EXPECT_EQ(empty.best_speedup, std::nullopt);
}

TEST_F(RunStoreTest, ListRunsNewestFirst) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("old", "2020-01-01T00:00:00.000Z"), kSampleTaskToml).ok());
  ASSERT_TRUE(store_->CreateRun(SampleRun("new", "2099-01-01T00:00:00.000Z"), kSampleTaskToml).ok());
  ASSERT_TRUE(store_->CreateRun(SampleRun("same-1", "2050-01-01T00:00:00.000Z"), kSampleTaskToml).ok());
  ASSERT_TRUE(store_->CreateRun(SampleRun("same-2", "2050-01-01T00:00:00.000Z"), kSampleTaskToml).ok());
  auto runs = store_->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  std::vector<std::string> ids;
  for (const auto& run : *runs) ids.push_back(run.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"new", "same-2", "same-1", "run-a", "old"}));
}

TEST_F(RunStoreTest, FinishAndReopen) {
  const int64_t best = AddCandidate(SampleCandidate("run-a"));
  ASSERT_TRUE(store_->FinishRun("run-a", "finished", "budget: 20 candidates evaluated", best).ok());
  RunRecord run = store_->GetRun("run-a").value();
  EXPECT_EQ(run.status, "finished");
  EXPECT_EQ(run.stop_reason, "budget: 20 candidates evaluated");
  EXPECT_FALSE(run.finished_at.empty());
  EXPECT_EQ(run.best_candidate_id, best);

  ASSERT_TRUE(store_->ReopenRun("run-a").ok());
  run = store_->GetRun("run-a").value();
  EXPECT_EQ(run.status, "running");
  EXPECT_EQ(run.stop_reason, "");
  EXPECT_EQ(run.finished_at, "");

  ASSERT_TRUE(store_->FinishRun("run-a", "failed", "provider exhausted", std::nullopt).ok());
  EXPECT_EQ(store_->GetRun("run-a")->best_candidate_id, std::nullopt);
  ASSERT_TRUE(store_->ReopenRun("run-a").ok());
  ASSERT_TRUE(store_->FinishRun("run-a", "stopped", "interrupted", best).ok());
  EXPECT_EQ(store_->GetRun("run-a")->status, "stopped");
}

TEST_F(RunStoreTest, FinishRefusesBadStatusAndForeignBest) {
  EXPECT_EQ(store_->FinishRun("run-a", "done", "", std::nullopt).error().kind, ErrorKind::kInvalidArgument);
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-b"), kSampleTaskToml).ok());
  const int64_t other = AddCandidate(SampleCandidate("run-b"));
  EXPECT_EQ(store_->FinishRun("run-a", "finished", "", other).error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(store_->GetRun("run-a")->status, "running");
}

}  // namespace
}  // namespace ksmith

namespace ksmith {
namespace {

class InterventionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = folder_.Open();
    ASSERT_NE(store_, nullptr);
    ASSERT_TRUE(store_->CreateRun(testing::SampleRun("run-a"), testing::kSampleTaskToml).ok());
    ASSERT_TRUE(store_->CreateRun(testing::SampleRun("run-b"), testing::kSampleTaskToml).ok());
  }
  InterventionRecord Make(const std::string& run_id, const std::string& action, nlohmann::json detail) {
    InterventionRecord record;
    record.run_id = run_id;
    record.action = action;
    record.detail = std::move(detail);
    return record;
  }
  testing::StoreFolder folder_;
  std::unique_ptr<RunStore> store_;
};

TEST_F(InterventionStoreTest, EveryFieldRoundTripsInOrderWithinItsRun) {
  const int64_t call = store_->AddLlmCall("run-a", testing::SampleCall()).value();
  const int64_t candidate = store_->AddCandidate(testing::SampleCandidate("run-a", call)).value();
  InterventionRecord constrain = Make("run-a", "constrain", {{"constraint", "no tensor cores"}});
  constrain.llm_call_id = call;
  InterventionRecord edit = Make("run-a", "edit", {{"diff", "-a\n+b\n"}});
  edit.llm_call_id = call;
  edit.candidate_id = candidate;
  edit.attempts_before = 4;
  edit.created_at = "2026-11-30T10:00:00.000Z";
  ASSERT_TRUE(store_->AddIntervention(constrain).ok());
  ASSERT_TRUE(store_->AddIntervention(Make("run-b", "stop", nlohmann::json::object())).ok());
  ASSERT_TRUE(store_->AddIntervention(edit).ok());
  const auto stored = store_->Interventions("run-a");
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  ASSERT_EQ(stored->size(), 2u);
  EXPECT_EQ((*stored)[0].sequence, 0);
  EXPECT_EQ((*stored)[0].action, "constrain");
  EXPECT_EQ((*stored)[0].detail["constraint"], "no tensor cores");
  EXPECT_EQ((*stored)[0].llm_call_id, std::optional<int64_t>(call));
  EXPECT_EQ((*stored)[0].candidate_id, std::nullopt);
  EXPECT_FALSE((*stored)[0].created_at.empty());
  const InterventionRecord& second = (*stored)[1];
  EXPECT_EQ(second.sequence, 1);
  EXPECT_EQ(second.action, "edit");
  EXPECT_EQ(second.candidate_id, std::optional<int64_t>(candidate));
  EXPECT_EQ(second.attempts_before, 4);
  EXPECT_EQ(second.detail["diff"], "-a\n+b\n");
  EXPECT_EQ(second.created_at, "2026-11-30T10:00:00.000Z");
  EXPECT_EQ(store_->Interventions("run-b")->size(), 1u);
}

TEST_F(InterventionStoreTest, UnknownActionsForeignReferencesAndUnknownRunsAreRefused) {
  auto unknown = store_->AddIntervention(Make("run-a", "shrug", nlohmann::json::object()));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("'shrug' is not an intervention"), std::string::npos);
  InterventionRecord foreign = Make("run-a", "approve", nlohmann::json::object());
  foreign.candidate_id = store_->AddCandidate(testing::SampleCandidate("run-b")).value();
  auto refused = store_->AddIntervention(foreign);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("belongs to run 'run-b'"), std::string::npos) << refused.error().message;
  EXPECT_FALSE(store_->AddIntervention(Make("run-a", "approve", nlohmann::json::array())).ok());
  EXPECT_EQ(store_->AddIntervention(Make("nowhere", "stop", nlohmann::json::object())).error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(store_->Interventions("run-a")->empty()) << "a refused intervention left a row";
}

}  // namespace
}  // namespace ksmith
