// The refine conversation under a budget: what is kept whole, what is summarized, and that the
// estimate never exceeds the window.
#include "agent/conversation.h"

#include <string>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

const std::string kSystem = "SYSTEM: you write kernels. " + std::string(600, 's');
const std::string kTask = "TASK: vector_add. " + std::string(1200, 't');

// Candidate `id` of its run; the store's id differs (other runs share the store), and the model
// is shown the number in the run, as the person is.
Turn MakeTurn(int64_t id, size_t answer_chars, size_t feedback_chars) {
  Turn turn;
  turn.candidate_id = 1000 + id;
  turn.number = id;
  turn.answer = "ANSWER " + std::to_string(id) + " " + std::string(answer_chars, 'a');
  turn.feedback = "FEEDBACK " + std::to_string(id) + " " + std::string(feedback_chars, 'f');
  turn.summary = "wrong_output: n=" + std::to_string(id) + " normal, max error 0.5 at [3]";
  return turn;
}

int64_t Total(const std::vector<ChatMessage>& messages) {
  int64_t tokens = 0;
  for (const auto& message : messages) tokens += EstimateTokens(message.content);
  return tokens;
}

// System first, then user and assistant alternating, ending with the user.
void ExpectAlternation(const std::vector<ChatMessage>& messages) {
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages[0].role, "system");
  for (size_t i = 1; i < messages.size(); ++i) {
    EXPECT_EQ(messages[i].role, i % 2 == 1 ? "user" : "assistant") << "message " << i;
    EXPECT_FALSE(messages[i].content.empty()) << "message " << i;
  }
  EXPECT_EQ(messages.back().role, "user");
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(EstimateTokens, RoundsUpAtThreeCharactersPerToken) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("abc"), 1);
  EXPECT_EQ(EstimateTokens("abcd"), 2);
  EXPECT_EQ(EstimateTokens(std::string(3000, 'x')), 1000);
}

TEST(BuildConversation, FirstRequestIsSystemAndTaskWithTheInstruction) {
  const auto messages = BuildConversation(kSystem, kTask, {}, std::nullopt, "", "Write the kernel.", {});
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].content, kSystem);
  EXPECT_EQ(messages[1].content, kTask + "\n\nWrite the kernel.");
  ExpectAlternation(messages);
}

TEST(BuildConversation, TurnsThatFitAreKeptWholeInOrder) {
  std::vector<Turn> turns = {MakeTurn(1, 100, 100), MakeTurn(2, 100, 100), MakeTurn(3, 100, 100)};
  const auto messages = BuildConversation(kSystem, kTask, turns, turns[2], turns[2].answer, "Improve it.", {});
  ASSERT_EQ(messages.size(), 8u);
  ExpectAlternation(messages);
  EXPECT_EQ(messages[1].content, kTask);
  for (size_t i = 0; i < turns.size(); ++i) {
    EXPECT_EQ(messages[2 + 2 * i].content, turns[i].answer);
    EXPECT_TRUE(messages[3 + 2 * i].content.starts_with(turns[i].feedback));
  }
  EXPECT_TRUE(messages.back().content.ends_with("\n\nImprove it."));
  EXPECT_FALSE(Contains(messages[1].content, "Earlier attempts"));
  EXPECT_FALSE(Contains(messages[1].content, "best kernel so far")) << "the best is the latest turn, already whole";
}

TEST(BuildConversation, AKeptBestThatIsNotTheLatestIsPointedAt) {
  std::vector<Turn> turns = {MakeTurn(1, 100, 100), MakeTurn(2, 100, 100)};
  turns[0].summary = "passed, 1.50x [1.40, 1.60] (faster)";
  const auto messages = BuildConversation(kSystem, kTask, turns, turns[0], turns[0].answer, "", {});
  EXPECT_TRUE(Contains(messages.back().content, "The best kernel so far is attempt 1 above (passed, 1.50x"));
}

TEST(BuildConversation, TinyBudgetSummarizesOldTurnsKeepsTheLatestAndRestatesTheBest) {
  std::vector<Turn> turns;
  for (int64_t id = 1; id <= 40; ++id) turns.push_back(MakeTurn(id, 3000, 1500));
  turns[9].summary = "passed, 1.84x [1.80, 1.88] (faster)";
  const std::string best_source = "extern \"C\" void vector_add() { /* the best */ }" + std::string(900, 'b');
  const ConversationBudget budget{6000, 1000};
  const auto messages = BuildConversation(kSystem, kTask, turns, turns[9], best_source, "Fix the last error.", budget);

  EXPECT_LE(Total(messages), budget.context_tokens - budget.output_tokens);
  ExpectAlternation(messages);
  EXPECT_EQ(messages[0].content, kSystem);
  const std::string& first = messages[1].content;
  EXPECT_TRUE(first.starts_with(kTask));
  EXPECT_TRUE(Contains(first, "## Earlier attempts, summarized (oldest first)\n"));
  EXPECT_TRUE(Contains(first, "- attempt 1 (candidate 1): wrong_output: n=1 normal, max error 0.5 at [3]\n"));
  EXPECT_TRUE(Contains(first, "- attempt 10 (candidate 10): passed, 1.84x [1.80, 1.88] (faster)\n"));
  EXPECT_TRUE(Contains(first, "## The best kernel so far (attempt 10: passed, 1.84x"));
  EXPECT_TRUE(Contains(first, "```cpp\n" + best_source + "\n```")) << "the best is restated whole";
  // The latest turn is kept whole, and the instruction closes the request.
  ASSERT_GE(messages.size(), 4u);
  EXPECT_EQ(messages[messages.size() - 2].content, turns.back().answer);
  EXPECT_EQ(messages.back().content, turns.back().feedback + "\n\nFix the last error.");
  // Whatever is kept whole is the latest, in order.
  const size_t kept = (messages.size() - 2) / 2;
  for (size_t i = 0; i < kept; ++i) {
    EXPECT_EQ(messages[2 + 2 * i].content, turns[turns.size() - kept + i].answer);
  }
  EXPECT_FALSE(Contains(first, "- attempt 40 ")) << "kept turns are not also summarized";
}

TEST(BuildConversation, ALatestTurnTooLargeForTheWindowIsSummarizedToo) {
  std::vector<Turn> turns = {MakeTurn(1, 100, 100), MakeTurn(2, 30000, 100)};
  const ConversationBudget budget{3000, 500};
  const auto messages = BuildConversation(kSystem, kTask, turns, std::nullopt, "", "Try again.", budget);
  EXPECT_LE(Total(messages), 2500);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_TRUE(Contains(messages[1].content, "- attempt 2 (candidate 2): wrong_output: n=2"));
  EXPECT_TRUE(messages[1].content.ends_with("\n\nTry again."));
}

TEST(BuildConversation, AVeryLongRunDropsTheOldestSummaryLines) {
  std::vector<Turn> turns;
  for (int64_t id = 1; id <= 2000; ++id) turns.push_back(MakeTurn(id, 50, 50));
  const ConversationBudget budget{4000, 1000};
  const auto messages = BuildConversation(kSystem, kTask, turns, std::nullopt, "", "Go on.", budget);
  EXPECT_LE(Total(messages), 3000);
  ExpectAlternation(messages);
  EXPECT_TRUE(Contains(messages[1].content, "earlier attempts not listed)"));
  EXPECT_FALSE(Contains(messages[1].content, "- attempt 1 (candidate 1):"));
  EXPECT_EQ(messages[messages.size() - 2].content, turns.back().answer);
}

TEST(BuildConversation, WhenEvenTheFixedPartsDoNotFitTheTaskIsCutFirstAndTheBudgetHolds) {
  const std::string system = "SYSTEM " + std::string(900, 's');
  const std::string task = "TASK " + std::string(6000, 't');
  const Turn best = MakeTurn(7, 100, 100);
  const std::string best_source = "BEST " + std::string(600, 'b');
  const ConversationBudget budget{1500, 500};
  const auto messages =
      BuildConversation(system, task, {MakeTurn(7, 100, 100)}, best, best_source, "Improve it.", budget);
  EXPECT_LE(Total(messages), 1000);
  ExpectAlternation(messages);
  EXPECT_EQ(messages[0].content, system) << "the system prompt is cut only after the task and the best";
  EXPECT_TRUE(messages[1].content.starts_with("TASK "));
  EXPECT_TRUE(Contains(messages[1].content, "[... cut to fit the context window]"));
  EXPECT_TRUE(Contains(messages[1].content, best_source)) << "the best is kept whole while the task can give way";
  EXPECT_TRUE(messages.back().content.ends_with("Improve it."));
}

TEST(BuildConversation, NeverExceedsEvenAnAbsurdlySmallWindow) {
  std::vector<Turn> turns;
  for (int64_t id = 1; id <= 30; ++id) turns.push_back(MakeTurn(id, 2000, 2000));
  for (const int64_t window : {0, 5, 20, 100, 400, 1000}) {
    const ConversationBudget budget{window + 100, 100};
    const auto messages =
        BuildConversation(kSystem, kTask, turns, turns[3], "SRC " + std::string(3000, 'c'), "Go.", budget);
    EXPECT_LE(Total(messages), window) << "window " << window;
    ASSERT_GE(messages.size(), 2u);
    EXPECT_EQ(messages[0].role, "system");
    EXPECT_EQ(messages.back().role, "user");
  }
}

TEST(BuildConversation, EmptyAnswersAndFeedbackAreNeverSentEmpty) {
  Turn empty;
  empty.candidate_id = 5;
  const auto messages = BuildConversation(kSystem, kTask, {empty}, std::nullopt, "", "", {});
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[2].content, "(empty answer)");
  EXPECT_EQ(messages[3].content, "(no feedback)");
}

TEST(BuildConversation, ABestFromOutsideTheChainIsRestatedWithACudaFenceForCuda) {
  Turn best = MakeTurn(99, 10, 10);
  best.summary = "passed, 2.10x [2.00, 2.20] (faster)";
  const std::string source = "__global__ void k() {}\nextern \"C\" void f(cudaStream_t stream) {}";
  const auto messages = BuildConversation(kSystem, kTask, {MakeTurn(1, 10, 10)}, best, source, "", {});
  EXPECT_TRUE(Contains(messages[1].content, "## The best kernel so far (an earlier attempt: passed, 2.10x"));
  EXPECT_TRUE(Contains(messages[1].content, "```cuda\n" + source + "\n```"));
}

}  // namespace
}  // namespace ksmith
