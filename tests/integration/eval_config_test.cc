// `ksmith eval` takes its evaluation settings from ksmith.toml's [eval] table (or --config's), as
// the README shows, under its flags: it ignored the file.
#include <regex>

#include "cli_runner.h"

namespace ksmith::it {
namespace {

// The number of correctness cases a passing verdict reports ("correct on all N cases"): it grows
// with the seeds per shape and distribution.
int CasesOf(const CliResult& run) {
  std::smatch match;
  const std::string reason = run.Json().value("reason", std::string());
  return std::regex_search(reason, match, std::regex("correct on all ([0-9]+) cases")) ? std::stoi(match[1]) : -1;
}

TEST(EvalConfig, TheEvalTableSetsTheSeedsAndAFlagWins) {
  TempDir dir("eval-config");
  const fs::path config = dir.path() / "ksmith.toml";
  std::ofstream(config) << "[eval]\nseeds = 1\n";
  const std::string kernel = (HonestDir() / "vector_add_fast.cpp").string();
  auto eval = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"eval", "--task", "vector_add", "--no-time", "--json", "--quiet", kernel};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult run = RunKsmith(args);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    return CasesOf(run);
  };
  const int by_default = eval({});       // 3 seeds
  const int from_file = eval({"--config", config.string()});
  const int flag_wins = eval({"--config", config.string(), "--seeds", "3"});
  ASSERT_GT(from_file, 0);
  EXPECT_LT(from_file, by_default) << "[eval] seeds = 1 was not applied";
  EXPECT_EQ(flag_wins, by_default) << "--seeds did not win over the file";
}

}  // namespace
}  // namespace ksmith::it
