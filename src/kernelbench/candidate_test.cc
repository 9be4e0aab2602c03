#include "kernelbench/candidate.h"

#include <gtest/gtest.h>

namespace ksmith {
namespace {

const nlohmann::json kAnalysis = {{"constants", {{"batch_size", 4096}, {"dim", 393216}, {"eps", 1}}},
                                  {"constant_dims", {{"batch_size", "batch_size"}, {"dim", "dim"}}}};

TEST(ProblemSizesWhereReduced, EmptyAtTheProblemsOwnSizes) {
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 4096}, {"dim", 393216}}), "");
}

TEST(ProblemSizesWhereReduced, NamesEveryOwnSizeWhereAnyWasHalved) {
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 1024}, {"dim", 98304}}),
            "batch_size=4096, dim=393216");
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"batch_size", 4096}, {"dim", 1}}), "batch_size=4096, dim=393216");
}

TEST(ProblemSizesWhereReduced, IgnoresWhatTheAnalysisDoesNotSay) {
  EXPECT_EQ(ProblemSizesWhereReduced(nlohmann::json::object(), {{"n", 3}}), "");
  EXPECT_EQ(ProblemSizesWhereReduced(kAnalysis, {{"x_d2", 7}}), "");
}

}  // namespace
}  // namespace ksmith
