#include "cli/terminal_review.h"

#include <cstdio>
#include <sstream>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

using Kind = ReviewAction::Kind;

Attempt Kernel(int64_t number, const std::string& source, const std::string& status) {
  Attempt attempt;
  attempt.candidate_id = 10 + number;
  attempt.number = number;
  attempt.source = source;
  attempt.status = status;
  if (status == "passed") attempt.speedup = 1.25;
  return attempt;
}

// A reviewer reading `input`, writing to a temporary file read back by Printed().
class TerminalReview : public ::testing::Test {
 protected:
  void SetUp() override { out_ = std::tmpfile(); ASSERT_NE(out_, nullptr); }
  void TearDown() override { std::fclose(out_); }
  std::string Printed() {
    std::fflush(out_);
    std::rewind(out_);
    std::string text;
    char buffer[4096];
    while (const size_t read = std::fread(buffer, 1, sizeof(buffer), out_)) text.append(buffer, read);
    return text;
  }
  ProposalView Proposal(const std::string& source) {
    ProposalView view;
    view.number = 3;
    view.role = "coder";
    view.explanation = "Unrolled the loop by four.";
    view.source = source;
    view.parent = &state_.attempts[1];
    view.file_extension = ".cc";
    return view;
  }
  std::FILE* out_ = nullptr;
  RunState state_{{Kernel(1, "int f() {\n  return 1;\n}\n", "passed"), Kernel(2, "int f() {\n  return 2;\n}\n", "passed")}};
};

TEST_F(TerminalReview, ShowsTheRationaleAndTheDiffAgainstTheParentThenTakesAConstraint) {
  std::istringstream input("what\nc keep block size 256\n");
  TerminalReviewer reviewer(input, out_, "true");
  state_.interventions.push_back({"constrain", 0, std::nullopt, {{"constraint", "no tensor cores"}}});
  const ReviewAction action = reviewer.Review(Proposal("int f() {\n  return 3;\n}\n"), state_, true);
  EXPECT_EQ(action.kind, Kind::kConstrain);
  EXPECT_EQ(action.text, "keep block size 256");
  const std::string printed = Printed();
  EXPECT_NE(printed.find("==== candidate 3 proposed by the coder, from candidate 2 (passed 1.25x) ===="), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("Rationale:\n  Unrolled the loop by four."), std::string::npos) << printed;
  EXPECT_NE(printed.find("  --- candidate 2\n  +++ candidate 3\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("  -  return 2;\n  +  return 3;\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("Constraints in every prompt:\n  - no tensor cores"), std::string::npos) << printed;
  EXPECT_NE(printed.find("'what' is not a choice here"), std::string::npos) << printed;
}

TEST_F(TerminalReview, ARollbackMustNameAKernelOfTheRunAndIsOfferedOnlyWhereFollowed) {
  std::istringstream input("r 9\nrollback x\nr\n1\n");
  TerminalReviewer reviewer(input, out_, "true");
  const ReviewAction action = reviewer.Review(Proposal("int f() { return 3; }\n"), state_, true);
  EXPECT_EQ(action.kind, Kind::kRollBack);
  EXPECT_EQ(action.to_number, 1);
  const std::string printed = Printed();
  EXPECT_NE(printed.find("no candidate 9 with a kernel in this run"), std::string::npos) << printed;
  EXPECT_NE(printed.find("'x' is not a candidate number"), std::string::npos) << printed;
  EXPECT_NE(printed.find("Kernels of this run:\n  1: passed 1.25x\n  2: passed 1.25x\n"), std::string::npos) << printed;

  std::istringstream refused("r 1\na\n");
  TerminalReviewer without_rollback(refused, out_, "true");
  EXPECT_EQ(without_rollback.Review(Proposal("int f() { return 3; }\n"), state_, false).kind, Kind::kApprove);
  EXPECT_NE(Printed().find("'r 1' is not a choice here"), std::string::npos);
}

TEST_F(TerminalReview, AnEditIsTheFileAsTheEditorLeftItAndAFailedEditorChangesNothing) {
  std::istringstream input("e\n");
  TerminalReviewer reviewer(input, out_, "sed -i s/return/return-edited/");
  const ReviewAction edited = reviewer.Review(Proposal("int f() { return 3; }\n"), state_, true);
  EXPECT_EQ(edited.kind, Kind::kEdit);
  EXPECT_EQ(edited.text, "int f() { return-edited 3; }\n");

  std::istringstream again("e\ne\ns\n");
  TerminalReviewer failing(again, out_, "false");
  EXPECT_EQ(failing.Review(Proposal("int f() { return 3; }\n"), state_, true).kind, Kind::kStop);
  EXPECT_NE(Printed().find("the editor (false) did not exit cleanly"), std::string::npos) << Printed();
  std::istringstream unchanged("edit\ns\n");
  TerminalReviewer untouched(unchanged, out_, "true");
  EXPECT_EQ(untouched.Review(Proposal("int f() { return 3; }\n"), state_, true).kind, Kind::kStop);
  EXPECT_NE(Printed().find("the kernel was not changed"), std::string::npos);
}

TEST_F(TerminalReview, TheEndOfInputStopsTheRunAndVerdictsAreShown) {
  std::istringstream input("");
  TerminalReviewer reviewer(input, out_, "true");
  EXPECT_EQ(reviewer.Review(Proposal("int f() { return 3; }\n"), state_, true).kind, Kind::kStop);
  Attempt judged = Kernel(3, "int f() { return 3; }\n", "passed");
  judged.verdict.emplace();
  judged.verdict->status = VerdictStatus::kPassed;
  judged.verdict->reason = "correct on all 9 cases; 1.25x faster";
  reviewer.ShowVerdict(judged);
  const std::string printed = Printed();
  EXPECT_NE(printed.find("(the input ended: stopping the run)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("---- candidate 3: passed 1.25x ----"), std::string::npos) << printed;
}

}  // namespace
}  // namespace ksmith
