// `ksmith eval --sweep`: one candidate judged and timed at each size of a grid, with a table, JSON
// and CSV whose times follow the work at each size.
#include "cli_runner.h"

namespace ksmith::it {
namespace {

TEST(EvalSweep, EachSizeIsJudgedAndTimedAndTheTimesFollowTheWork) {
  TempDir dir("eval-sweep");
  const fs::path csv = dir.path() / "sweep.csv";
  const CliResult run = RunKsmith({"eval", "--task", "matmul", (HonestDir() / "matmul_fast.cpp").string(), "--sweep",
                                   "m=128,1024", "--sweep", "n=128", "--csv", csv.string(), "--json", "--timing-budget",
                                   "0.3"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const nlohmann::json sweep = run.Json();
  ASSERT_EQ(sweep.at("points").size(), 2u) << sweep.dump();
  const nlohmann::json& small = sweep.at("points").at(0);
  const nlohmann::json& large = sweep.at("points").at(1);
  EXPECT_EQ(small.at("shape"), (nlohmann::json{{"k", 512}, {"m", 128}, {"n", 128}})) << "k stays the bench shape's";
  EXPECT_EQ(large.at("shape").at("m"), 1024);
  for (const auto* point : {&small, &large}) {
    EXPECT_EQ(point->value("status", ""), "passed") << point->dump();
    EXPECT_GT(point->value("candidate_gflops", 0.0), 0.0) << point->dump();
    EXPECT_GT(point->value("baseline_gbs", 0.0), 0.0) << point->dump();
  }
  // Eight times the rows, about eight times the time on both sides (a loose bound: shared cores,
  // and a small product's threads cost more than its arithmetic).
  EXPECT_GT(large.value("candidate_us", 0.0), 2 * small.value("candidate_us", 0.0)) << sweep.dump();
  EXPECT_GT(large.value("baseline_us", 0.0), 2 * small.value("baseline_us", 0.0)) << sweep.dump();
  EXPECT_NE(run.err.find("[2/2] m=1024, n=128, k=512: passed"), std::string::npos) << run.err;
  const std::string table = Slurp(csv);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 3) << table;
  EXPECT_EQ(table.rfind("m,n,k,status,candidate_us", 0), 0u) << table;
}

TEST(EvalSweep, ASweepOfSeveralCandidatesOrAnUnknownDimIsAUsageError) {
  const std::string kernel = (HonestDir() / "matmul_fast.cpp").string();
  const CliResult two = RunKsmith({"eval", "--task", "matmul", kernel, kernel, "--sweep", "m=64"});
  EXPECT_EQ(two.exit_code, 2) << two.Describe();
  EXPECT_NE(two.err.find("give one candidate"), std::string::npos) << two.err;
  const CliResult unknown = RunKsmith({"eval", "--task", "matmul", kernel, "--sweep", "rows=64"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.Describe();
  EXPECT_NE(unknown.err.find("task matmul has no dim rows; its dims are m, n, k"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace ksmith::it
