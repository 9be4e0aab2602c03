#include "eval/failure_dump.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/files.h"
#include "eval/failed_case.h"
#include "task/task_loader.h"
#include "tensor/npy.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr size_t kGuard = 64;

Task LoadRelu() {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "relu");
  EXPECT_TRUE(task.ok()) << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

// A relu case whose "kernel" copied x into y: wrong wherever x < 0.
struct WrongRelu {
  Task task = LoadRelu();
  CaseSpec spec{{{"n", 37}}, Distribution::kNormal, 12345, "n=37, normal, seed #1", 0};
  PreparedCase prepared;
  std::string snapshot;  // [guard | x | guard][guard | y | guard]
  CaseCheck check;

  WrongRelu() {
    prepared = PrepareCase(task, spec, kGuard);
    std::vector<float> x(37);
    std::memcpy(x.data(), prepared.inputs.data(), prepared.inputs.size());
    prepared.expected = {std::vector<double>(37)};
    std::transform(x.begin(), x.end(), prepared.expected[0].begin(), [](float v) { return std::max(double(v), 0.0); });
    const std::string guard(kGuard, '\x5a');
    snapshot = guard + prepared.inputs + guard + guard + prepared.inputs + guard;
    check.problem = CaseProblem::kWrongOutput;
    check.output = "y";
  }
  size_t FirstNegative() const {
    const auto* x = reinterpret_cast<const float*>(prepared.inputs.data());
    return std::find_if(x, x + 37, [](float v) { return v < 0; }) - x;
  }
};

Verdict VerdictWith(VerdictStatus status) {
  Verdict verdict;
  verdict.status = status;
  verdict.task = "relu";
  verdict.backend = "cpu";
  verdict.candidate = "wrong.cc";
  verdict.reason = "output 'y' is wrong";
  return verdict;
}

TEST(FailedCaseKeeper, GivesTheFirstWrongCaseOnlyOnceTheVerdictIsAWrongOutput) {
  WrongRelu wrong;
  int delivered = 0;
  FailedCase got;
  FailedCaseKeeper keeper([&](const FailedCase& failed) { ++delivered, got = failed; }, 3);
  keeper.Keep(wrong.task, wrong.spec, wrong.prepared, wrong.snapshot, wrong.check);
  CaseSpec later = wrong.spec;
  later.label = "a later case";
  keeper.Keep(wrong.task, later, wrong.prepared, wrong.snapshot, wrong.check);
  keeper.Deliver(VerdictWith(VerdictStatus::kWrongOutput), 99);
  keeper.Deliver(VerdictWith(VerdictStatus::kWrongOutput), 99);
  ASSERT_EQ(delivered, 1);
  EXPECT_EQ(got.spec.label, "n=37, normal, seed #1");
  EXPECT_EQ(got.evaluation_seed, 99u);
  EXPECT_EQ(got.seeds, 3);
  EXPECT_EQ(got.inputs, wrong.prepared.inputs);
  EXPECT_EQ(got.outputs, wrong.prepared.inputs);  // the guards are dropped
  EXPECT_EQ(got.dims.at("n"), 37);
}

TEST(FailedCaseKeeper, GivesNothingForAnyOtherVerdictOrAnyOtherProblem) {
  WrongRelu wrong;
  int delivered = 0;
  const auto sink = [&](const FailedCase&) { ++delivered; };
  for (const auto status : {VerdictStatus::kPassed, VerdictStatus::kIntegrityViolation, VerdictStatus::kRuntimeError}) {
    FailedCaseKeeper keeper(sink, 3);
    keeper.Keep(wrong.task, wrong.spec, wrong.prepared, wrong.snapshot, wrong.check);
    keeper.Deliver(VerdictWith(status), 1);
  }
  FailedCaseKeeper guard_only(sink, 3);
  CaseCheck damaged;
  damaged.problem = CaseProblem::kGuardDamaged;
  guard_only.Keep(wrong.task, wrong.spec, wrong.prepared, wrong.snapshot, damaged);
  guard_only.Deliver(VerdictWith(VerdictStatus::kWrongOutput), 1);
  EXPECT_EQ(delivered, 0);
}

FailedCase Kept(const WrongRelu& wrong, uint64_t seed) {
  FailedCase kept;
  FailedCaseKeeper keeper([&](const FailedCase& failed) { kept = failed; }, 2);
  keeper.Keep(wrong.task, wrong.spec, wrong.prepared, wrong.snapshot, wrong.check);
  keeper.Deliver(VerdictWith(VerdictStatus::kWrongOutput), seed);
  return kept;
}

TEST(FailureDump, FirstDifferenceIsTheFirstElementTheCopyGotWrong) {
  WrongRelu wrong;
  const FailedCase failed = Kept(wrong, 7);
  const nlohmann::json first = FirstDifference(failed);
  ASSERT_TRUE(first.is_object());
  EXPECT_EQ(first["output"], "y");
  EXPECT_EQ(first["index"].get<size_t>(), wrong.FirstNegative());
  EXPECT_LT(first["actual"].get<double>(), 0);
  EXPECT_EQ(first["expected"].get<double>(), 0);
}

TEST(FailureDump, RerunReplaysTheSeedWithTheSameNumberOfSeedsUntimed) {
  WrongRelu wrong;
  const auto rerun = RerunCommand({"/bin/ksmith", "eval", "--task", "relu"}, Kept(wrong, 4242), "/k/it's.cc");
  const std::vector<std::string> want = {"/bin/ksmith", "eval", "--task", "relu", "--seed", "4242",
                                         "--seeds",     "2",    "--no-time", "/k/it's.cc"};
  EXPECT_EQ(rerun, want);
  EXPECT_EQ(ShellCommandLine(rerun), "/bin/ksmith eval --task relu --seed 4242 --seeds 2 --no-time '/k/it'\\''s.cc'");
}

TEST(FailureDump, WritesInputsExpectedAndActualAsNpyBesideTheCase) {
  WrongRelu wrong;
  ScopedTempDir folder("dump");
  const auto directory = folder.path() / "case";
  const FailedCase failed = Kept(wrong, 7);
  const auto rerun = RerunCommand({"ksmith", "eval"}, failed, "wrong.cc");
  ASSERT_TRUE(WriteFailureDump(directory, failed, VerdictWith(VerdictStatus::kWrongOutput), rerun).ok());

  const std::string f4 = NpyHeader("<f4", {37});
  auto input = ReadFile(directory / "inputs" / "x.npy");
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(*input, f4 + wrong.prepared.inputs);
  auto actual = ReadFile(directory / "actual" / "y.npy");
  ASSERT_TRUE(actual.ok());
  EXPECT_EQ(*actual, f4 + wrong.prepared.inputs);
  auto expected = ReadFile(directory / "expected" / "y.npy");
  ASSERT_TRUE(expected.ok());
  const std::string f8 = NpyHeader("<f8", {37});
  ASSERT_EQ(expected->size(), f8.size() + 37 * sizeof(double));
  EXPECT_EQ(expected->substr(0, f8.size()), f8);
  EXPECT_EQ(std::memcmp(expected->data() + f8.size(), wrong.prepared.expected[0].data(), 37 * sizeof(double)), 0);

  auto text = ReadFile(directory / "case.json");
  ASSERT_TRUE(text.ok());
  const auto described = nlohmann::json::parse(*text);
  EXPECT_EQ(described["task"], "relu");
  EXPECT_EQ(described["shape"]["n"], 37);
  EXPECT_EQ(described["distribution"], "normal");
  EXPECT_EQ(described["evaluation_seed"], 7);
  EXPECT_EQ(described["label"], "n=37, normal, seed #1");
  EXPECT_TRUE(described["tolerance"].contains("fp32"));
  EXPECT_EQ(described["first_difference"]["index"].get<size_t>(), wrong.FirstNegative());
  EXPECT_EQ(described["rerun"], rerun);
  ASSERT_EQ(described["tensors"].size(), 2u);
  EXPECT_EQ(described["tensors"][0]["file"], "inputs/x.npy");
  EXPECT_EQ(described["tensors"][1]["expected_file"], "expected/y.npy");

  auto script = ReadFile(directory / "rerun.sh");
  ASSERT_TRUE(script.ok());
  EXPECT_NE(script->find("exec " + ShellCommandLine(rerun)), std::string::npos);
  struct stat info {};
  ASSERT_EQ(::stat((directory / "rerun.sh").c_str(), &info), 0);
  EXPECT_TRUE(info.st_mode & S_IXUSR);
  EXPECT_TRUE(fs::exists(directory / "README.md"));
}

}  // namespace
}  // namespace ksmith
