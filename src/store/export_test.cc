// Exports of one small constructed run in each format, checked line by line.
#include "store/export.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "store/run_store_test_support.h"

namespace ksmith {
namespace {

using nlohmann::json;
using testing::SampleCall;
using testing::SampleCandidate;
using testing::SampleRun;
using testing::SampleVerdict;

std::vector<json> ParseLines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

// Given a seed and LLM answers that started from it (and one from the best answer), with every
// kind of outcome: the exports must pick exactly the right candidates.
class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = folder_.Open();
    ASSERT_NE(store_, nullptr);
    // An earlier run in the same store: run-x's store ids are not its candidates' numbers.
    ASSERT_TRUE(store_->CreateRun(SampleRun("run-0"), testing::kSampleTaskToml).ok());
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(store_->AddCandidate(SampleCandidate("run-0")).ok());
    ASSERT_TRUE(store_->CreateRun(SampleRun("run-x"), testing::kSampleTaskToml).ok());
    seed_ = Add(std::nullopt, std::nullopt, "passed", 1.0);
    fast_ = Add(seed_, "A", "passed", 2.0);
    wrong_ = Add(seed_, "B", "wrong_output");
    slow_ = Add(seed_, "C", "passed", 1.5);
    almost_ = Add(seed_, "D", "passed", 1.95);  // within 5% of fast_: no pair between them
    child_ = Add(fast_, "E", "compile_error", std::nullopt, /*anthropic=*/true);
    infra_ = Add(seed_, "F", "infra_error");
    no_reply_ = Add(seed_, std::nullopt, "extraction_failed", std::nullopt, false, /*call_failed=*/true);
    no_code_ = Add(seed_, "G", "extraction_failed");
    pending_ = Add(seed_, "H", "pending");
  }

  // A candidate answering a call with `reply` (none: no LLM call, unless call_failed), then judged
  // `status`; "extraction_failed" and "pending" get no verdict.
  int64_t Add(std::optional<int64_t> parent, std::optional<std::string> reply, const std::string& status,
              std::optional<double> speedup = std::nullopt, bool anthropic = false, bool call_failed = false) {
    std::optional<int64_t> call_id;
    if (reply || call_failed) {
      LlmCall call = SampleCall(reply.value_or(""));
      if (call_failed) {
        call.reply.reset();
        call.error = "HTTP 500";
      }
      if (anthropic) {
        call.provider = "anthropic";
        call.request = {{"model", "claude-test"},
                        {"system", json::array({{{"type", "text"}, {"text", "You write kernels."}}})},
                        {"messages", {{{"role", "user"},
                                       {"content", {{{"type", "text"}, {"text", "Improve "}},
                                                    {{"type", "image"}, {"source", "ignored"}},
                                                    {{"type", "text"}, {"text", "this."}}}}}}}};
      }
      call_id = store_->AddLlmCall("run-x", call).value();
    }
    CandidateRecord candidate = SampleCandidate("run-x", call_id, parent);
    candidate.source = "source " + reply.value_or("seed");
    if (status == "extraction_failed") {
      candidate.source = "";
      candidate.extraction_error = call_failed ? "provider failure: HTTP 500" : "no code block";
    }
    const int64_t id = store_->AddCandidate(candidate).value();
    if (status != "extraction_failed" && status != "pending") {
      EXPECT_TRUE(store_->AddVerdict(id, SampleVerdict(status, speedup)).ok());
    }
    return id;
  }

  std::vector<json> Export(ExportFormat format, const std::string& run_id = "run-x", std::string* note = nullptr) {
    std::ostringstream out;
    auto exported = ExportRun(*store_, run_id, format, out);
    EXPECT_TRUE(exported.ok()) << exported.error().message;
    auto parsed = ParseLines(out.str());
    EXPECT_EQ(exported.ok() ? exported->lines : 0, parsed.size());
    if (exported.ok()) {
      EXPECT_EQ(exported->note.empty(), !parsed.empty()) << "a note exactly when nothing was written: " << exported->note;
      if (note != nullptr) *note = exported->note;
    }
    return parsed;
  }

  testing::StoreFolder folder_;
  std::unique_ptr<RunStore> store_;
  int64_t seed_ = 0, fast_ = 0, wrong_ = 0, slow_ = 0, almost_ = 0, child_ = 0, infra_ = 0, no_reply_ = 0,
          no_code_ = 0, pending_ = 0;
};

const json kOpenAiPrompt = json::array({{{"role", "system"}, {"content", "You write kernels."}},
                                        {{"role", "user"}, {"content", "Make vector_add faster."}}});

TEST_F(ExportTest, TrajectoryHasEveryCandidateInOrder) {
  const auto lines = Export(ExportFormat::kTrajectory);
  ASSERT_EQ(lines.size(), 10u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["sequence"], i);
    EXPECT_EQ(lines[i]["run_id"], "run-x");
    EXPECT_EQ(lines[i]["task"], "vector_add");
    EXPECT_EQ(lines[i]["backend"], "cpu");
  }
  const json& seed = lines[0];
  EXPECT_EQ(seed["candidate_id"], seed_);
  EXPECT_EQ(seed["candidate"], 1) << "its number in the run, not the store's id " << seed_;
  EXPECT_NE(seed_, 1);
  EXPECT_TRUE(seed["parent_id"].is_null());
  EXPECT_TRUE(seed["parent"].is_null());
  EXPECT_EQ(seed["origin"], "seed");
  EXPECT_EQ(seed["messages"], json::array());
  EXPECT_TRUE(seed["response"].is_null());
  EXPECT_EQ(seed["status"], "passed");
  EXPECT_EQ(seed["speedup"], 1.0);

  const json& fast = lines[1];
  EXPECT_EQ(fast["parent_id"], seed_);
  EXPECT_EQ(fast["candidate"], 2);
  EXPECT_EQ(fast["parent"], 1);
  EXPECT_EQ(fast["origin"], "llm");
  EXPECT_EQ(fast["role"], "coder");
  EXPECT_EQ(fast["messages"], kOpenAiPrompt);
  EXPECT_EQ(fast["response"], "A");
  EXPECT_EQ(fast["source"], "source A");
  EXPECT_EQ(fast["knobs"], json::object());
  EXPECT_EQ(fast["verdict"], SampleVerdict("passed", 2.0));

  const json& child = lines[5];
  EXPECT_EQ(child["parent_id"], fast_);
  EXPECT_EQ(child["parent"], 2);
  EXPECT_EQ(child["messages"], json::array({{{"role", "system"}, {"content", "You write kernels."}},
                                            {{"role", "user"}, {"content", "Improve this."}}}));
  EXPECT_EQ(child["status"], "compile_error");
  EXPECT_TRUE(child["speedup"].is_null());

  const json& no_reply = lines[7];
  EXPECT_EQ(no_reply["messages"], kOpenAiPrompt) << "the prompt was sent even though no reply came";
  EXPECT_TRUE(no_reply["response"].is_null());
  EXPECT_EQ(no_reply["status"], "extraction_failed");
  EXPECT_TRUE(no_reply["verdict"].is_null());
  EXPECT_EQ(lines[9]["status"], "pending");
}

TEST_F(ExportTest, SftHasPassedLlmAnswersWithThePromptAndTheReply) {
  const auto lines = Export(ExportFormat::kSft);
  ASSERT_EQ(lines.size(), 3u) << "the seed passed too, but no model wrote it";
  const std::vector<std::pair<int64_t, std::string>> expected = {{fast_, "A"}, {slow_, "C"}, {almost_, "D"}};
  for (size_t i = 0; i < lines.size(); ++i) {
    json messages = kOpenAiPrompt;
    messages.push_back({{"role", "assistant"}, {"content", expected[i].second}, {"weight", 1}});
    EXPECT_EQ(lines[i]["messages"], messages);
    EXPECT_EQ(lines[i]["candidate_id"], expected[i].first);
    EXPECT_EQ(lines[i]["task"], "vector_add");
    EXPECT_EQ(lines[i]["run_id"], "run-x");
  }
  EXPECT_EQ(lines[0]["speedup"], 2.0);
  EXPECT_EQ(lines[0]["candidate"], 2);
}

TEST_F(ExportTest, AKernelThePersonEditedIsNotTheModelsAnswerToLearn) {
  // The model answered "Z" (a wrong kernel, say); the person edited it and the edit passed, fastest of all.
  const int64_t call = store_->AddLlmCall("run-x", SampleCall("Z")).value();
  CandidateRecord edited = SampleCandidate("run-x", call, fast_);
  edited.origin = "edited";
  edited.source = "source Z as the person fixed it";
  const int64_t id = store_->AddCandidate(edited).value();
  ASSERT_TRUE(store_->AddVerdict(id, SampleVerdict("passed", 5.0)).ok());
  for (const ExportFormat format : {ExportFormat::kSft, ExportFormat::kSftFinal, ExportFormat::kPairs}) {
    for (const auto& line : Export(format)) {
      EXPECT_EQ(line.dump().find("\"Z\""), std::string::npos) << ExportFormatName(format) << ": " << line.dump();
    }
  }
  // The trajectory keeps it, as what it is.
  const auto trajectory = Export(ExportFormat::kTrajectory);
  ASSERT_FALSE(trajectory.empty());
  EXPECT_EQ(trajectory.back()["origin"], "edited");
  EXPECT_EQ(trajectory.back()["response"], "Z");
  EXPECT_EQ(trajectory.back()["source"], "source Z as the person fixed it");
}

TEST_F(ExportTest, SftFinalIsTheFirstPromptWithTheFastestPassingAnswer) {
  const auto lines = Export(ExportFormat::kSftFinal);
  ASSERT_EQ(lines.size(), 1u);
  json messages = kOpenAiPrompt;
  messages.push_back({{"role", "assistant"}, {"content", "A"}, {"weight", 1}});
  EXPECT_EQ(lines[0]["messages"], messages);
  EXPECT_EQ(lines[0]["candidate_id"], fast_);
  EXPECT_EQ(lines[0]["speedup"], 2.0);
}

TEST_F(ExportTest, PairsPreferPassedOverFailedAndClearlyFasterOverSlower) {
  const auto lines = Export(ExportFormat::kPairs);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const json& line : lines) {
    pairs.emplace_back(line["chosen"].get<std::string>(), line["rejected"].get<std::string>());
  }
  // Not: A over D (within 5%), anything over F (infra error), H (pending), the failed call
  // (no reply), or E (its group, children of A, has no passed answer).
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"A", "B"}, {"A", "C"}, {"A", "G"}, {"C", "B"}, {"C", "G"}, {"D", "B"}, {"D", "C"}, {"D", "G"}};
  EXPECT_EQ(pairs, expected);
  ASSERT_FALSE(lines.empty());
  const json& first = lines[0];
  EXPECT_EQ(first["prompt"], kOpenAiPrompt);
  EXPECT_EQ(first["chosen_status"], "passed");
  EXPECT_EQ(first["rejected_status"], "wrong_output");
  EXPECT_EQ(first["chosen_speedup"], 2.0);
  EXPECT_TRUE(first["rejected_speedup"].is_null());
  EXPECT_EQ(first["task"], "vector_add");
  EXPECT_EQ(first["run_id"], "run-x");
  EXPECT_EQ(lines[1]["rejected_speedup"], 1.5);
  EXPECT_EQ(lines[2]["rejected_status"], "extraction_failed");
}

// A refine run as the store keeps it: each request carries the conversation so far. The model's
// wrong first answer is in the prompt of the passing one, and a fine-tune must not learn it.
class RefineExportTest : public ExportTest {
 protected:
  // A call whose request is the system prompt, the task, then (answer, feedback) turns.
  int64_t AddTurn(const std::vector<std::string>& earlier_answers, const std::string& reply, const std::string& status,
                  std::optional<int64_t> parent) {
    LlmCall call = SampleCall(reply);
    json messages = kOpenAiPrompt;
    for (const auto& answer : earlier_answers) {
      messages.push_back({{"role", "assistant"}, {"content", answer}});
      messages.push_back({{"role", "user"}, {"content", "Verdict: ..."}});
    }
    call.request["messages"] = messages;
    const auto call_id = store_->AddLlmCall("run-r", call).value();
    CandidateRecord candidate = SampleCandidate("run-r", call_id, parent);
    const int64_t id = store_->AddCandidate(candidate).value();
    EXPECT_TRUE(store_->AddVerdict(id, SampleVerdict(status, status == "passed" ? std::optional(1.5) : std::nullopt)).ok());
    return id;
  }
};

TEST_F(RefineExportTest, SftWeightsOnlyTheAnswersThatPassed) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-r"), testing::kSampleTaskToml).ok());
  const int64_t wrong = AddTurn({}, "WRONG", "wrong_output", std::nullopt);
  const int64_t right = AddTurn({"WRONG"}, "RIGHT", "passed", wrong);
  AddTurn({"WRONG", "RIGHT"}, "FASTER?", "compile_error", right);
  const int64_t faster = AddTurn({"WRONG", "RIGHT", "FASTER?"}, "FASTER", "passed", right);

  const auto lines = Export(ExportFormat::kSft, "run-r");
  ASSERT_EQ(lines.size(), 2u);
  auto weights = [](const json& line) {
    std::vector<std::pair<std::string, int>> found;
    for (const auto& message : line["messages"]) {
      if (message["role"] == "assistant") found.emplace_back(message["content"], message.value("weight", -1));
      else EXPECT_FALSE(message.contains("weight")) << message.dump();
    }
    return found;
  };
  EXPECT_EQ(weights(lines[0]), (std::vector<std::pair<std::string, int>>{{"WRONG", 0}, {"RIGHT", 1}}));
  EXPECT_EQ(weights(lines[1]),
            (std::vector<std::pair<std::string, int>>{{"WRONG", 0}, {"RIGHT", 1}, {"FASTER?", 0}, {"FASTER", 1}}));
  EXPECT_EQ(lines[1]["candidate"], 4);

  // Final answers only: the first prompt, before any feedback, and the best passing answer.
  const auto finals = Export(ExportFormat::kSftFinal, "run-r");
  ASSERT_EQ(finals.size(), 1u);
  json messages = kOpenAiPrompt;
  messages.push_back({{"role", "assistant"}, {"content", "RIGHT"}, {"weight", 1}});
  EXPECT_EQ(finals[0]["messages"], messages) << "both passed at 1.5x: the earlier one";
  EXPECT_NE(finals[0]["candidate_id"], faster);
}

TEST_F(ExportTest, ARunWithoutModelAnswersWritesNothingAndSaysWhy) {
  RunRecord tune = SampleRun("run-t");
  tune.strategy = "tune";
  tune.provider = "";
  ASSERT_TRUE(store_->CreateRun(tune, testing::kSampleTaskToml).ok());
  for (int i = 0; i < 3; ++i) {
    CandidateRecord candidate = SampleCandidate("run-t");
    candidate.origin = "tune";
    const int64_t id = store_->AddCandidate(candidate).value();
    ASSERT_TRUE(store_->AddVerdict(id, SampleVerdict("passed", 1.2)).ok());
  }
  for (ExportFormat format : {ExportFormat::kSft, ExportFormat::kSftFinal, ExportFormat::kPairs}) {
    std::string note;
    EXPECT_TRUE(Export(format, "run-t", &note).empty());
    EXPECT_EQ(note, "run run-t has no model answers to learn from: its 3 candidates came from the tune strategy, "
                    "not from a model (`--format trajectory` exports them)")
        << ExportFormatName(format);
  }
  EXPECT_EQ(Export(ExportFormat::kTrajectory, "run-t").size(), 3u);
}

TEST_F(ExportTest, ARunWhereNoAnswerPassedSaysSoForSft) {
  ASSERT_TRUE(store_->CreateRun(SampleRun("run-f"), testing::kSampleTaskToml).ok());
  const int64_t call = store_->AddLlmCall("run-f", SampleCall("WRONG")).value();
  const int64_t id = store_->AddCandidate(SampleCandidate("run-f", call)).value();
  ASSERT_TRUE(store_->AddVerdict(id, SampleVerdict("wrong_output", std::nullopt)).ok());
  std::string note;
  EXPECT_TRUE(Export(ExportFormat::kSft, "run-f", &note).empty());
  EXPECT_NE(note.find("none of the 1 model answer of run run-f passed"), std::string::npos) << note;
}

TEST_F(ExportTest, UnknownRunIsNotFound) {
  std::ostringstream out;
  auto lines = ExportRun(*store_, "nope", ExportFormat::kSft, out);
  ASSERT_FALSE(lines.ok());
  EXPECT_EQ(lines.error().kind, ErrorKind::kNotFound);
  EXPECT_TRUE(out.str().empty());
}

TEST(ExportFormatNames, ParseKnownNamesAndListThemOnError) {
  EXPECT_EQ(ParseExportFormat("trajectory").value(), ExportFormat::kTrajectory);
  EXPECT_EQ(ParseExportFormat("sft").value(), ExportFormat::kSft);
  EXPECT_EQ(ParseExportFormat("sft-final").value(), ExportFormat::kSftFinal);
  EXPECT_EQ(ParseExportFormat("pairs").value(), ExportFormat::kPairs);
  auto unknown = ParseExportFormat("dpo");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("'dpo' (valid: trajectory, sft, sft-final, pairs)"), std::string::npos)
      << unknown.error().message;
  for (ExportFormat format :
       {ExportFormat::kTrajectory, ExportFormat::kSft, ExportFormat::kSftFinal, ExportFormat::kPairs}) {
    EXPECT_EQ(ParseExportFormat(ExportFormatName(format)).value(), format);
  }
}

TEST(ExportPromptMessages, MissingOrOddShapesGiveWhatCanBeRead) {
  EXPECT_EQ(PromptMessages(json::object()), json::array());
  EXPECT_EQ(PromptMessages("not an object"), json::array());
  EXPECT_EQ(PromptMessages({{"messages", "not a list"}}), json::array());
  EXPECT_EQ(PromptMessages({{"system", ""}, {"messages", {{{"role", "user"}, {"content", 7}}, "junk"}}}),
            json::array({{{"role", "user"}, {"content", ""}}}));
}

}  // namespace
}  // namespace ksmith
