// Correctness cases: the plan, the inputs, the reference's answer, and how a snapshot of the
// worker's buffers is judged (guards, unchanged inputs, outputs).
#include "eval/cases.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kCanary = 0x3c5a7e91u;
constexpr size_t kGuard = 64;

Task LoadBuiltIn(const std::string& category, const std::string& name) {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / category / name);
  EXPECT_TRUE(task.ok()) << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

// vector_add's reference and kernels, bound like ksmith_entry: a, b, c, n.
void ReferenceAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  const float* b = static_cast<const float*>(p[1]);
  double* c = static_cast<double*>(p[2]);
  for (int64_t i = 0; i < s[3]; ++i) c[i] = static_cast<double>(a[i]) + b[i];
}

void HonestAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  const float* b = static_cast<const float*>(p[1]);
  float* c = static_cast<float*>(p[2]);
  for (int64_t i = 0; i < s[3]; ++i) c[i] = a[i] + b[i];
}

class VectorAddCases : public ::testing::Test {
 protected:
  // Prepares a case of `n` elements, runs `kernel` in a guarded arena and returns the snapshot.
  std::string RunKernel(KernelEntry kernel, size_t n = 100) {
    spec_.shape = {{"n", static_cast<int64_t>(n)}};
    spec_.distribution = Distribution::kNormal;
    spec_.seed = 99;
    prepared_ = PrepareCase(task_, spec_, kGuard);
    ComputeExpected(task_, ReferenceAdd, prepared_);
    arena_ = std::make_unique<GuardedArena>(prepared_.layout);
    EXPECT_TRUE(arena_->Prepare(prepared_.inputs, kCanary).ok());
    kernel(arena_->pointers(), arena_->scalars());
    return arena_->Snapshot();
  }

  CaseCheck Check(const std::string& snapshot) { return CheckSnapshot(task_, prepared_, snapshot, kCanary); }

  Task task_ = LoadBuiltIn("elementwise", "vector_add");
  CaseSpec spec_;
  PreparedCase prepared_;
  std::unique_ptr<GuardedArena> arena_;
};

TEST(PlanCases, CountsShapesTimesDistributionsTimesSeedsPlusTheBenchCase) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const int64_t large = int64_t{1} << 20;
  size_t expected = 1;  // the bench case
  for (const auto& shape : task.eval_shapes) {
    const bool is_large = shape.at("n") > large;
    expected += task.distributions.size() * (is_large ? 1 : 3);
  }
  const auto cases = PlanCases(task, 42, 3, large, /*random_shapes=*/0);
  EXPECT_EQ(cases.size(), expected);
  EXPECT_EQ(cases.back().shape, task.bench_shape);
  EXPECT_EQ(cases.back().distribution, task.distributions.front());
}

TEST(PlanCases, LargeShapesGetOneSeed) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const auto cases = PlanCases(task, 42, 3, /*large_elements=*/100, 0);
  size_t small_shapes = 0;
  for (const auto& shape : task.eval_shapes) small_shapes += shape.at("n") <= 100;
  const size_t large_shapes = task.eval_shapes.size() - small_shapes;
  EXPECT_EQ(cases.size(), task.distributions.size() * (3 * small_shapes + large_shapes) + 1);
}

TEST(PlanCases, EveryCaseHasItsOwnSeedAndTheSecretSeedDecides) {
  const Task task = LoadBuiltIn("gemm", "matmul");
  const auto cases = PlanCases(task, 1, 3, int64_t{1} << 20, 0);
  std::set<uint64_t> seeds;
  for (const auto& spec : cases) seeds.insert(spec.seed);
  EXPECT_EQ(seeds.size(), cases.size());
  const auto again = PlanCases(task, 1, 3, int64_t{1} << 20, 0);
  const auto other = PlanCases(task, 2, 3, int64_t{1} << 20, 0);
  ASSERT_EQ(again.size(), cases.size());
  ASSERT_EQ(other.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(again[i].seed, cases[i].seed);
    EXPECT_NE(other[i].seed, cases[i].seed);
  }
}

TEST(PlanCases, LabelsNameShapeDistributionAndSeedOrdinalButNotTheSeed) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const auto cases = PlanCases(task, 7, 2, int64_t{1} << 20, 0);
  EXPECT_EQ(cases[0].label, "n=" + std::to_string(task.eval_shapes[0].at("n")) + ", " +
                                DistributionName(task.distributions[0]) + ", seed #1");
  EXPECT_EQ(cases[1].label.substr(cases[1].label.size() - 7), "seed #2");
  for (const auto& spec : cases) EXPECT_EQ(spec.label.find(std::to_string(spec.seed)), std::string::npos);
}

TEST(PlanCases, AddsRandomShapesDrawnFromTheSecretSeed) {
  const Task task = LoadBuiltIn("normalization", "softmax");
  const auto without = PlanCases(task, 5, 1, int64_t{1} << 20, 0);
  const auto with = PlanCases(task, 5, 1, int64_t{1} << 20, 2);
  ASSERT_EQ(with.size(), without.size() + 2);
  for (size_t i = without.size() - 1; i < with.size() - 1; ++i) {
    EXPECT_NE(with[i].label.find("(random shape)"), std::string::npos) << with[i].label;
    for (const auto& dim : task.dims) {
      int64_t largest = 1;
      for (const auto& shape : task.eval_shapes) largest = std::max(largest, shape.at(dim));
      EXPECT_GE(with[i].shape.at(dim), 1);
      EXPECT_LE(with[i].shape.at(dim), largest);
    }
  }
  EXPECT_EQ(with.back().shape, task.bench_shape);
}

TEST(PlanBenchShapeCases, EveryDistributionAtTheBenchShapeAloneWithOneSeedWhereLarge) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const auto cases = PlanBenchShapeCases(task, 3, 2, int64_t{1} << 40);
  ASSERT_EQ(cases.size(), 2 * task.distributions.size());
  std::set<uint64_t> seeds;
  for (const auto& spec : cases) {
    EXPECT_EQ(spec.shape, task.bench_shape);
    EXPECT_NE(spec.label.find("(the bench shape)"), std::string::npos) << spec.label;
    seeds.insert(spec.seed);
  }
  EXPECT_EQ(seeds.size(), cases.size());
  EXPECT_EQ(PlanBenchShapeCases(task, 3, 2, /*large_elements=*/1).size(), task.distributions.size());
}

TEST(PlanGeneralizationCases, EveryHiddenShapeUnderEveryDistributionWithSeedsUnlikeTheDecidingCases) {
  const Task task = LoadBuiltIn("normalization", "softmax");
  const auto hidden = PlanGeneralizationCases(task, 9);
  ASSERT_EQ(hidden.size(), task.eval_shapes.size() * task.distributions.size());
  std::set<uint64_t> deciding;
  for (const auto& spec : PlanBenchShapeCases(task, 9, 3, int64_t{1} << 40)) deciding.insert(spec.seed);
  for (size_t i = 0; i < hidden.size(); ++i) {
    EXPECT_EQ(hidden[i].shape, task.eval_shapes[i / task.distributions.size()]);
    EXPECT_NE(hidden[i].label.find("(hidden shape)"), std::string::npos) << hidden[i].label;
    EXPECT_FALSE(deciding.contains(hidden[i].seed)) << hidden[i].label;
  }
}

TEST(RandomShape, IsReproducibleAndSmallEnoughToCheckQuickly) {
  const Task task = LoadBuiltIn("gemm", "matmul");
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const auto shape = RandomShape(task, seed);
    ASSERT_TRUE(shape.has_value()) << seed;
    EXPECT_EQ(RandomShape(task, seed), shape);
    EXPECT_LE(task.Flops(*shape), 100'000'000) << task.FormatShape(*shape);
    for (const auto& tensor : task.outputs) EXPECT_LE(task.Elements(tensor, *shape), int64_t{1} << 20);
  }
}

TEST(MakeLayout, PlacesEveryTensorOfTheSignature) {
  const Task task = LoadBuiltIn("gemm", "matmul");
  const CaseLayout layout = MakeLayout(task, {{"m", 3}, {"n", 5}, {"k", 7}}, 128);
  EXPECT_EQ(layout.scalars, (std::vector<int64_t>{0, 0, 0, 3, 5, 7}));
  ASSERT_EQ(layout.tensors.size(), 3u);
  EXPECT_EQ(layout.tensors[0].parameter, 0u);
  EXPECT_EQ(layout.tensors[0].bytes, 3u * 7 * 4);  // a[m, k]
  EXPECT_FALSE(layout.tensors[0].output);
  EXPECT_EQ(layout.tensors[1].bytes, 7u * 5 * 4);  // b[k, n]
  EXPECT_EQ(layout.tensors[2].bytes, 3u * 5 * 4);  // c[m, n]
  EXPECT_TRUE(layout.tensors[2].output);
  EXPECT_EQ(layout.guard_bytes, 128u);
}

TEST(PrepareCase, InputsMatchTheLayoutAndTheSeed) {
  const Task task = LoadBuiltIn("gemm", "matmul");
  CaseSpec spec{{{"m", 3}, {"n", 5}, {"k", 7}}, Distribution::kTies, 11, "x"};
  const PreparedCase prepared = PrepareCase(task, spec, 64);
  EXPECT_EQ(prepared.inputs.size(), (3u * 7 + 7 * 5) * 4);
  std::vector<float> values(prepared.inputs.size() / 4);
  std::memcpy(values.data(), prepared.inputs.data(), prepared.inputs.size());
  for (float value : values) EXPECT_EQ(value, std::round(value));  // ties are integers
  EXPECT_EQ(PrepareCase(task, spec, 64).inputs, prepared.inputs);
  spec.seed = 12;
  EXPECT_NE(PrepareCase(task, spec, 64).inputs, prepared.inputs);
  EXPECT_TRUE(prepared.expected.empty());
}

// fp32 inputs are drawn where they go (no second buffer); the bytes are what the layout draws.
TEST(PrepareCase, Fp32InputsAreExactlyTheLayoutsDraw) {
  const Task task = LoadBuiltIn("gemm", "matmul");
  const CaseSpec spec{{{"m", 33}, {"n", 17}, {"k", 65}}, Distribution::kNormal, 5, "x"};
  const PreparedCase prepared = PrepareCase(task, spec, 64);
  size_t offset = 0;
  for (const auto& slot : prepared.layout.tensors) {
    if (slot.output) continue;
    std::vector<float> drawn(slot.Elements());
    prepared.layout.FillSlot(slot, drawn.data(), spec.distribution, spec.seed, slot.parameter);
    ASSERT_EQ(std::memcmp(prepared.inputs.data() + offset, drawn.data(), slot.bytes), 0) << slot.parameter;
    offset += slot.bytes;
  }
  EXPECT_EQ(offset, prepared.inputs.size());
  double squares = 0;
  size_t count = 0;
  for (size_t at = 0; at < prepared.inputs.size(); at += sizeof(float)) {
    float value;
    std::memcpy(&value, prepared.inputs.data() + at, sizeof(float));
    squares += static_cast<double>(value) * value;
    ++count;
  }
  EXPECT_NEAR(InputRms(prepared), std::sqrt(squares / static_cast<double>(count)), 1e-9);
}

TEST(PrepareCase, LaidOutThenDrawnIsTheSameCaseAndCarriesItsDraw) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const CaseSpec spec{.shape = {{"n", 1000}}, .distribution = Distribution::kLarge, .seed = 41};
  const PreparedCase whole = PrepareCase(task, spec, 64);
  PreparedCase laid_out = LayOutCase(task, spec, 64);
  EXPECT_TRUE(laid_out.inputs.empty());
  ASSERT_TRUE(laid_out.draw.has_value());
  EXPECT_EQ(laid_out.draw->seed, 41u);
  EXPECT_EQ(laid_out.draw->distribution, Distribution::kLarge);
  DrawCaseInputs(laid_out, std::string(5, 'x'));
  EXPECT_EQ(laid_out.inputs, whole.inputs);
  EXPECT_EQ(laid_out.layout.Key(), whole.layout.Key());
  ASSERT_TRUE(whole.draw.has_value());
  EXPECT_EQ(whole.draw->seed, 41u);
}

// A model's weights (held inputs) are its state: the same in every case of a verification at a
// shape, whatever the case's seed and distribution, and secret (the verification's seed decides).
TEST(PrepareCase, AHeldInputIsTheSameInEveryCaseOfAVerification) {
  Task task = LoadBuiltIn("gemm", "matmul");
  ASSERT_EQ(task.inputs.size(), 2u);
  task.inputs[1].draw.held = true;  // b: the weight
  CaseSpec spec{{{"m", 3}, {"n", 5}, {"k", 7}}, Distribution::kNormal, 11, "x", HeldSeed(5)};
  const size_t a_bytes = 3 * 7 * 4;
  const PreparedCase first = PrepareCase(task, spec, 64);
  spec.seed = 12;
  spec.distribution = Distribution::kLarge;
  const PreparedCase second = PrepareCase(task, spec, 64);
  EXPECT_NE(first.inputs.substr(0, a_bytes), second.inputs.substr(0, a_bytes));  // the input is fresh
  EXPECT_EQ(first.inputs.substr(a_bytes), second.inputs.substr(a_bytes));        // the weight is held
  spec.held_seed = HeldSeed(6);
  EXPECT_NE(PrepareCase(task, spec, 64).inputs.substr(a_bytes), first.inputs.substr(a_bytes));
  const auto plans = {PlanCases(task, 5, 1, 1 << 20), PlanBenchShapeCases(task, 5, 1, 1 << 20),
                      PlanGeneralizationCases(task, 5)};
  for (const auto& plan : plans) {
    for (const CaseSpec& planned : plan) EXPECT_EQ(planned.held_seed, HeldSeed(5)) << planned.label;
  }
}

// A reference that writes into its (const) inputs after answering.
void ReferenceAddThatScribbles(void* const* p, const int64_t* s) {
  ReferenceAdd(p, s);
  static_cast<float*>(p[1])[s[3] - 1] += 1.0f;
}

TEST_F(VectorAddCases, InPlaceTheReferencesWriteToItsInputsIsSeenAndACopyKeepsThemAsGiven) {
  spec_.shape = {{"n", 1000}};
  spec_.seed = 7;
  prepared_ = PrepareCase(task_, spec_, kGuard);
  EXPECT_FALSE(ComputeExpectedInPlace(task_, ReferenceAddThatScribbles, prepared_));
  EXPECT_NE(prepared_.inputs, PrepareCase(task_, spec_, kGuard).inputs);
  prepared_ = PrepareCase(task_, spec_, kGuard);
  ComputeExpected(task_, ReferenceAddThatScribbles, prepared_);
  EXPECT_EQ(prepared_.inputs, PrepareCase(task_, spec_, kGuard).inputs);
  PreparedCase in_place = PrepareCase(task_, spec_, kGuard);
  ASSERT_TRUE(ComputeExpectedInPlace(task_, ReferenceAdd, in_place));
  EXPECT_EQ(in_place.expected, prepared_.expected);
  EXPECT_EQ(in_place.inputs, prepared_.inputs);
}

TEST_F(VectorAddCases, AJudgedCasesOutputVectorsAreReusedForTheNext) {
  RunKernel(HonestAdd, 1000);
  std::vector<std::vector<double>> kept = std::move(prepared_.expected);
  const double* memory = kept[0].data();
  spec_.shape = {{"n", 600}};
  PreparedCase next = PrepareCase(task_, spec_, kGuard);
  next.expected = std::move(kept);
  ComputeExpected(task_, ReferenceAdd, next);
  ASSERT_EQ(next.expected.size(), 1u);
  ASSERT_EQ(next.expected[0].size(), 600u);
  EXPECT_EQ(next.expected[0].data(), memory);
  std::vector<float> inputs(1200);
  std::memcpy(inputs.data(), next.inputs.data(), inputs.size() * sizeof(float));
  for (size_t i = 0; i < 600; ++i) EXPECT_DOUBLE_EQ(next.expected[0][i], static_cast<double>(inputs[i]) + inputs[600 + i]);
}

TEST_F(VectorAddCases, ComputeExpectedRunsTheReferenceOnACopyOfTheInputs) {
  RunKernel(HonestAdd, 10);
  EXPECT_EQ(prepared_.inputs, PrepareCase(task_, spec_, kGuard).inputs);
  ASSERT_EQ(prepared_.expected.size(), 1u);
  ASSERT_EQ(prepared_.expected[0].size(), 10u);
  std::vector<float> inputs(20);
  std::memcpy(inputs.data(), prepared_.inputs.data(), 80);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(prepared_.expected[0][i], static_cast<double>(inputs[i]) + inputs[10 + i]);
  }
}

TEST_F(VectorAddCases, HonestKernelPasses) {
  const CaseCheck check = Check(RunKernel(HonestAdd));
  EXPECT_EQ(check.problem, CaseProblem::kNone) << check.description;
  EXPECT_LT(check.worst_norm_error, 1e-6);
}

TEST_F(VectorAddCases, WritingPastTheEndDamagesTheGuard) {
  const CaseCheck check = Check(RunKernel([](void* const* p, const int64_t* s) {
    HonestAdd(p, s);
    static_cast<float*>(p[2])[s[3]] = 1.0f;
  }));
  EXPECT_EQ(check.problem, CaseProblem::kGuardDamaged);
  EXPECT_NE(check.description.find("past the end of 'c'"), std::string::npos) << check.description;
  EXPECT_NE(check.description.find("at byte 0 past its end (in c[100] of a 100-element tensor)"), std::string::npos)
      << check.description;
  ASSERT_TRUE(check.guard.has_value());
  EXPECT_EQ(check.guard->tensor, "c");
  EXPECT_EQ(check.guard->side, "after");
  EXPECT_EQ(check.guard->offset, 400);
  EXPECT_EQ(check.guard->element, 100);
  EXPECT_GE(check.guard->changed_bytes, 1);
}

TEST_F(VectorAddCases, CopyingOneZoneIntoAnotherDamagesTheGuard) {
  // Given a kernel that writes past its output the bytes past an input (an off-by-one that
  // copies, a padded tail) or the bytes before its output, the zone after the output changes:
  // no two zones hold the same bytes.
  const KernelEntry copies[] = {
      [](void* const* p, const int64_t* s) {
        HonestAdd(p, s);
        std::memcpy(static_cast<float*>(p[2]) + s[3], static_cast<const float*>(p[0]) + s[3], 64);
      },
      [](void* const* p, const int64_t* s) {
        HonestAdd(p, s);
        std::memcpy(static_cast<float*>(p[2]) + s[3], static_cast<const float*>(p[1]) + s[3], 64);
      },
      [](void* const* p, const int64_t* s) {
        HonestAdd(p, s);
        std::memcpy(static_cast<float*>(p[2]) + s[3], static_cast<const float*>(p[2]) - 16, 64);
      },
  };
  for (const KernelEntry copy : copies) {
    const CaseCheck check = Check(RunKernel(copy));
    EXPECT_EQ(check.problem, CaseProblem::kGuardDamaged) << check.description;
    ASSERT_TRUE(check.guard.has_value());
    EXPECT_EQ(check.guard->tensor, "c");
    EXPECT_EQ(check.guard->side, "after");
  }
}

TEST_F(VectorAddCases, WritingBeforeTheStartDamagesTheGuard) {
  const CaseCheck check = Check(RunKernel([](void* const* p, const int64_t* s) {
    HonestAdd(p, s);
    static_cast<float*>(p[2])[-2] = 1.0f;
  }));
  EXPECT_EQ(check.problem, CaseProblem::kGuardDamaged);
  EXPECT_NE(check.description.find("before the start of 'c'"), std::string::npos) << check.description;
  ASSERT_TRUE(check.guard.has_value());
  EXPECT_EQ(check.guard->side, "before");
  EXPECT_EQ(check.guard->element, -2);
  EXPECT_LE(check.guard->offset, -5);
  EXPECT_GE(check.guard->offset, -8);
}

TEST_F(VectorAddCases, ModifyingAnInputIsCaughtWithItsFirstChangedElement) {
  const CaseCheck check = Check(RunKernel([](void* const* p, const int64_t* s) {
    HonestAdd(p, s);
    const_cast<float*>(static_cast<const float*>(p[1]))[37] += 1.0f;
  }));
  EXPECT_EQ(check.problem, CaseProblem::kInputModified);
  EXPECT_NE(check.description.find("modified its input 'b' (first change at element 37)"), std::string::npos)
      << check.description;
}

TEST_F(VectorAddCases, InputsTheWorkerFoundAsDrawnAreNotComparedAgainButTheirGuardsAre) {
  // A CUDA worker that drew the inputs on the device and found them unchanged after the call
  // sends back only guards and outputs: the inputs' bytes in the snapshot are not read, the
  // inputs' guard zones and the outputs are.
  std::string snapshot = RunKernel(HonestAdd);
  const size_t b_data = kGuard + 400 + 2 * kGuard;  // past a's zones and data, b's first zone
  snapshot[b_data + 4] ^= 0x40;                      // stale input bytes, never copied back
  EXPECT_EQ(Check(snapshot).problem, CaseProblem::kInputModified);
  CaseCheck check = CheckSnapshot(task_, prepared_, snapshot, kCanary, ArenaPart::kGuardsAndOutputs);
  EXPECT_EQ(check.problem, CaseProblem::kNone) << check.description;
  snapshot[b_data - 1] ^= 0x40;  // b's leading zone
  check = CheckSnapshot(task_, prepared_, snapshot, kCanary, ArenaPart::kGuardsAndOutputs);
  EXPECT_EQ(check.problem, CaseProblem::kGuardDamaged) << check.description;
  snapshot = RunKernel([](void* const* p, const int64_t* s) {
    HonestAdd(p, s);
    static_cast<float*>(p[2])[3] += 1.0f;
  });
  check = CheckSnapshot(task_, prepared_, snapshot, kCanary, ArenaPart::kGuardsAndOutputs);
  EXPECT_EQ(check.problem, CaseProblem::kWrongOutput) << check.description;
}

TEST_F(VectorAddCases, OneWrongElementIsAWrongOutput) {
  const CaseCheck check = Check(RunKernel([](void* const* p, const int64_t* s) {
    HonestAdd(p, s);
    static_cast<float*>(p[2])[5] += 0.5f;
  }));
  EXPECT_EQ(check.problem, CaseProblem::kWrongOutput);
  EXPECT_NE(check.description.find("output 'c'"), std::string::npos) << check.description;
  EXPECT_GT(check.worst_norm_error, 0.0);
}

TEST_F(VectorAddCases, UnwrittenOutputIsAWrongOutput) {
  const CaseCheck check = Check(RunKernel([](void* const* p, const int64_t* s) {
    float* c = static_cast<float*>(p[2]);
    for (int64_t i = 0; i < s[3] / 2; ++i) c[i] = static_cast<const float*>(p[0])[i] + static_cast<const float*>(p[1])[i];
  }));
  EXPECT_EQ(check.problem, CaseProblem::kWrongOutput);
  EXPECT_NE(check.description.find("50 of 100 output elements were never written"), std::string::npos)
      << check.description;
}

TEST_F(VectorAddCases, SnapshotOfTheWrongSizeIsMalformed) {
  std::string snapshot = RunKernel(HonestAdd);
  snapshot.pop_back();
  const CaseCheck check = Check(snapshot);
  EXPECT_EQ(check.problem, CaseProblem::kMalformed);
  EXPECT_NE(check.description.find("expected " + std::to_string(prepared_.layout.SnapshotBytes())),
            std::string::npos);
}

TEST(InputVariants, NudgeFp32InputsByTheRelativeStepAndClearSigns) {
  const Task task = LoadBuiltIn("elementwise", "vector_add");
  const CaseSpec spec{{{"n", 6}}, Distribution::kNormal, 5, "n=6"};
  const PreparedCase prepared = PrepareCase(task, spec, kGuard);
  const auto* given = reinterpret_cast<const float*>(prepared.inputs.data());
  const std::string absolute = VariantInputs(prepared.layout, prepared.inputs, InputVariant::kAbsolute);
  const std::string nudged = VariantInputs(prepared.layout, prepared.inputs, InputVariant::kNudgedAlternating);
  const auto* absolute_values = reinterpret_cast<const float*>(absolute.data());
  const auto* nudged_values = reinterpret_cast<const float*>(nudged.data());
  for (int i = 0; i < 12; ++i) {  // both inputs, 6 elements each
    EXPECT_EQ(absolute_values[i], std::abs(given[i]));
    const double step = (static_cast<double>(nudged_values[i]) - given[i]) / given[i];
    EXPECT_NEAR(step, i % 2 == 0 ? kInputNudge : -kInputNudge, 0.5 * kInputNudge) << i;
  }
  EXPECT_EQ(VariantInputs(prepared.layout, prepared.inputs, InputVariant::kAsGiven), prepared.inputs);
}

TEST(InputVariants, IntegerInputsKeepTheirValuesAndStayOutOfTheInputRms) {
  // vector_add with b made an int32 input drawn from [-3, 4): labels or offsets, not magnitudes.
  Task task = LoadBuiltIn("elementwise", "vector_add");
  task.inputs[1].dtype = DType::kInt32;
  task.inputs[1].integer_range = {"-3", "4"};
  const CaseSpec spec{{{"n", 64}}, Distribution::kLarge, 5, "n=64"};
  const PreparedCase prepared = PrepareCase(task, spec, kGuard);
  const auto* labels = reinterpret_cast<const int32_t*>(prepared.inputs.data() + 64 * sizeof(float));
  bool negative = false;
  for (int i = 0; i < 64; ++i) {
    ASSERT_GE(labels[i], -3);
    ASSERT_LT(labels[i], 4);
    negative |= labels[i] < 0;
  }
  EXPECT_TRUE(negative);
  for (InputVariant variant : {InputVariant::kAbsolute, InputVariant::kNudgedAlternating}) {
    const std::string varied = VariantInputs(prepared.layout, prepared.inputs, variant);
    EXPECT_EQ(varied.substr(64 * sizeof(float)), prepared.inputs.substr(64 * sizeof(float)));
  }
  const auto* x = reinterpret_cast<const float*>(prepared.inputs.data());
  EXPECT_DOUBLE_EQ(InputRms(prepared), RootMeanSquare(x, 64));
}

TEST(InputVariants, MagnitudeIsTheLargestOfTheAbsoluteAnswerAndEachScaledChange) {
  const std::vector<std::vector<double>> expected = {{1.0, -2.0, 3.0}};
  std::vector<std::vector<double>> magnitude;
  EXPECT_TRUE(FoldMagnitude(InputVariant::kAbsolute, expected, {{1.5, 2.0, 3.0}}, magnitude));
  // 10 against an absolute-value bound of 2: widened past twice it.
  EXPECT_TRUE(FoldMagnitude(InputVariant::kNudgedAlternating, expected, {{1.0, -2.0 + 10 * kInputNudge, 3.0}}, magnitude));
  // 1 against 1.5, nothing against 10, NaN against 3: nothing widened.
  EXPECT_FALSE(FoldMagnitude(InputVariant::kNudgedScattered, expected, {{1.0 + kInputNudge, -2.0, std::nan("")}}, magnitude));
  ASSERT_EQ(magnitude.size(), 1u);
  EXPECT_DOUBLE_EQ(magnitude[0][0], 1.5);
  EXPECT_NEAR(magnitude[0][1], 10.0, 1e-6);
  EXPECT_DOUBLE_EQ(magnitude[0][2], 3.0);
}

// layernorm: x, gamma, beta, y, rows, cols.
void ReferenceLayernorm(void* const* p, const int64_t* s) {
  const auto* x = static_cast<const float*>(p[0]);
  const auto* gamma = static_cast<const float*>(p[1]);
  const auto* beta = static_cast<const float*>(p[2]);
  auto* y = static_cast<double*>(p[3]);
  const int64_t rows = s[4], cols = s[5];
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += x[r * cols + c];
    mean /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) var += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    var /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (x[r * cols + c] - mean) / std::sqrt(var + 1e-5) * gamma[c] + beta[c];
  }
}

// What an honest fp32 kernel does (two passes, as layernorm_fast), with its inputs first
// rounded to `keep_bits` mantissa bits (23: none lost).
void Fp32Layernorm(void* const* p, const int64_t* s, int keep_bits) {
  const auto* x = static_cast<const float*>(p[0]);
  const auto* gamma = static_cast<const float*>(p[1]);
  const auto* beta = static_cast<const float*>(p[2]);
  auto* y = static_cast<float*>(p[3]);
  const int64_t rows = s[4], cols = s[5];
  auto round = [keep_bits](float value) {
    const float scale = std::ldexp(1.0f, keep_bits - std::ilogb(value == 0 ? 1.0f : value));
    return std::nearbyint(value * scale) / scale;
  };
  for (int64_t r = 0; r < rows; ++r) {
    float mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c) mean += round(x[r * cols + c]);
    mean /= static_cast<float>(cols);
    for (int64_t c = 0; c < cols; ++c) var += (round(x[r * cols + c]) - mean) * (round(x[r * cols + c]) - mean);
    var /= static_cast<float>(cols);
    const float rstd = 1.0f / std::sqrt(var + 1e-5f);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = (round(x[r * cols + c]) - mean) * rstd * gamma[c] + beta[c];
  }
}

// Rows of two values a thousand times the spread of normal inputs ("large"), each pair a few
// thousandths apart: (x - mean) keeps only a few significant bits in fp32, in any kernel.
PreparedCase CloseRows(const Task& task, float apart) {
  PreparedCase prepared = PrepareCase(task, CaseSpec{{{"rows", 64}, {"cols", 2}}, Distribution::kLarge, 7, "close rows"}, kGuard);
  auto* x = reinterpret_cast<float*>(prepared.inputs.data());
  for (int r = 0; r < 64; ++r) {
    x[2 * r] = 1000.1f + 0.37f * static_cast<float>(r);
    x[2 * r + 1] = x[2 * r] + apart * static_cast<float>(1 + r % 5);
  }
  auto* gamma = x + 128;
  gamma[0] = gamma[1] = -820.0f;
  return prepared;
}

CaseCheck RunLayernorm(const Task& task, const PreparedCase& prepared, int keep_bits) {
  GuardedArena arena(prepared.layout);
  EXPECT_TRUE(arena.Prepare(prepared.inputs, kCanary).ok());
  Fp32Layernorm(arena.pointers(), arena.scalars(), keep_bits);
  return CheckSnapshot(task, prepared, arena.Snapshot(), kCanary);
}

TEST(InputVariants, AnHonestKernelPassesWhereNoFp32KernelCanMatchTheExactAnswer) {
  const Task task = LoadBuiltIn("normalization", "layernorm");
  PreparedCase prepared = CloseRows(task, 0.003f);
  ComputeExpected(task, ReferenceLayernorm, prepared);
  ASSERT_TRUE(WantsMagnitude(task, prepared));
  const CaseCheck honest = RunLayernorm(task, prepared, 23);
  EXPECT_EQ(honest.problem, CaseProblem::kNone) << honest.description;
  // What the nudged inputs add is what lets it pass: without them it fails (the false rejection
  // an H200 run met on a random shape of two columns).
  PreparedCase absolute_only = prepared;
  absolute_only.magnitude.clear();
  FoldMagnitude(InputVariant::kAbsolute, prepared.expected,
                RunReference(task, ReferenceLayernorm, prepared, InputVariant::kAbsolute), absolute_only.magnitude);
  EXPECT_EQ(RunLayernorm(task, absolute_only, 23).problem, CaseProblem::kWrongOutput);
}

TEST(InputVariants, ManyShortRowsGetMagnitudesAndLongRowsOfALargeOutputDoNot) {
  // 44819 x 2 (89638 outputs): the shape on which an honest fp32 seed read 0.7% off on the H200
  // without them; 4096 x 4096 costs the reference too much for three more runs.
  const Task task = LoadBuiltIn("normalization", "layernorm");
  PreparedCase short_rows = LayOutCase(task, CaseSpec{{{"rows", 44819}, {"cols", 2}}, Distribution::kLarge, 3, "rows"}, kGuard);
  EXPECT_TRUE(WantsMagnitude(task, short_rows));
  PreparedCase long_rows = LayOutCase(task, CaseSpec{{{"rows", 4096}, {"cols", 4096}}, Distribution::kLarge, 3, "rows"}, kGuard);
  EXPECT_FALSE(WantsMagnitude(task, long_rows));
}

TEST(InputVariants, InputsRoundedToHalfPrecisionStillFailOnOrdinaryRows) {
  const Task task = LoadBuiltIn("normalization", "layernorm");
  for (const Distribution distribution : {Distribution::kNormal, Distribution::kLarge}) {
    PreparedCase prepared = PrepareCase(task, CaseSpec{{{"rows", 64}, {"cols", 16}}, distribution, 11, "rows"}, kGuard);
    ComputeExpected(task, ReferenceLayernorm, prepared);
    EXPECT_EQ(RunLayernorm(task, prepared, 23).problem, CaseProblem::kNone);
    EXPECT_EQ(RunLayernorm(task, prepared, 10).problem, CaseProblem::kWrongOutput);  // fp16's mantissa
  }
}

TEST(InputVariants, TheSecondNudgeRunsOnlyWhereTheFirstWidenedTheBound) {
  auto runs_for = [](const Task& task, PreparedCase prepared, KernelEntry reference) {
    prepared.expected = RunReference(task, reference, prepared, InputVariant::kAsGiven);
    int runs = 0;
    const Status computed = ComputeMagnitude(prepared, [&](const std::string& inputs, std::vector<std::vector<double>>& answer) {
      ++runs;
      PreparedCase variant;
      variant.layout = prepared.layout;
      variant.inputs = inputs;
      answer = RunReference(task, reference, variant, InputVariant::kAsGiven);
      return Status();
    });
    EXPECT_TRUE(computed.ok());
    return runs;
  };
  const Task add = LoadBuiltIn("elementwise", "vector_add");
  const PreparedCase sums = PrepareCase(add, CaseSpec{{{"n", 1000}}, Distribution::kLarge, 3, "n=1000"}, kGuard);
  EXPECT_EQ(runs_for(add, sums, ReferenceAdd), 2) << "a sum: a nudge never exceeds the absolute-value bound";
  const Task layernorm = LoadBuiltIn("normalization", "layernorm");
  EXPECT_EQ(runs_for(layernorm, CloseRows(layernorm, 0.003f), ReferenceLayernorm), 3);
}

}  // namespace
}  // namespace ksmith
