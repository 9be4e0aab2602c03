// The interleaved timing loop, run in-process with kernels defined here: honest kernels are
// timed, kernels that cache, skip or stall when timed are caught by the output check.
#include "sandbox/timing_loop.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ksmith {
namespace {

constexpr size_t kN = 1000;

// vector_add binding: pointers 0, 1 inputs, 2 output; scalars[3] = n.
void HonestAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  const float* b = static_cast<const float*>(p[1]);
  float* c = static_cast<float*>(p[2]);
  for (int64_t i = 0; i < s[3]; ++i) c[i] = a[i] + b[i];
}

// Computes once per output buffer, then returns what it computed the first time.
std::map<const void*, int> g_calls_per_output;
void CachingAdd(void* const* p, const int64_t* s) {
  if (g_calls_per_output[p[2]]++ == 0) HonestAdd(p, s);
}

void WritesNothing(void* const*, const int64_t*) {}

// Right on the first two calls (the warm-up and the first round), then skips half the work.
int g_lazy_calls = 0;
void LazyWhenTimed(void* const* p, const int64_t* s) {
  HonestAdd(p, s);
  if (++g_lazy_calls > 2) static_cast<float*>(p[2])[s[3] - 1] = 0.0f;
}

CaseLayout VectorAddLayout(size_t n) {
  CaseLayout layout;
  layout.scalars = {0, 0, 0, static_cast<int64_t>(n)};
  layout.tensors = {{0, n * 4, false}, {1, n * 4, false}, {2, n * 4, true}};
  layout.guard_bytes = 64;
  return layout;
}

nlohmann::json Request(size_t sets, size_t max_rounds = 40, size_t n = kN) {
  nlohmann::json request = VectorAddLayout(n).ToJson();
  request.update({{"type", "time"},
                  {"sets", sets},
                  {"seed", 1234},
                  {"distribution", "normal"},
                  {"mutations", 16},
                  {"min_rounds", 5},
                  {"max_rounds", max_rounds},
                  {"min_time_s", 0.0},
                  {"max_time_s", 0.2},
                  {"target_rse", 0.5},
                  {"tolerance", {{"norm", 1e-5}, {"elem", 1e-4}, {"epsilon", 0x1p-24}, {"accumulation", 1.0}}}});
  return request;
}

std::vector<float> Inputs(size_t sets, size_t n = kN) {
  std::vector<float> inputs(TimingInputBytes(VectorAddLayout(n), sets) / sizeof(float));
  FillTimingInputs(VectorAddLayout(n), sets, Distribution::kNormal, 1234, inputs.data());
  return inputs;
}

TEST(TimingInputBytes, CountsEveryInputOncePerSet) {
  EXPECT_EQ(TimingInputBytes(VectorAddLayout(10), 1), 80u);
  EXPECT_EQ(TimingInputBytes(VectorAddLayout(10), 3), 240u);
  EXPECT_EQ(TimingInputBytes(CaseLayout{}, 5), 0u);
}

TEST(FillTimingInputs, IsReproducibleAndDiffersBetweenSetsAndTensors) {
  const auto first = Inputs(2);
  const auto second = Inputs(2);
  ASSERT_EQ(first.size(), 4 * kN);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
  // a and b of set 0, then a and b of set 1: four different blocks.
  for (size_t x = 0; x < 4; ++x) {
    for (size_t y = x + 1; y < 4; ++y) {
      EXPECT_NE(std::memcmp(first.data() + x * kN, first.data() + y * kN, kN * sizeof(float)), 0) << x << " " << y;
    }
  }
}

// Drives the bench as the evaluator does: per round, the first call mutates, then both sides
// run and the outputs are compared. Returns the first round whose check failed, or -1.
int FirstMismatch(TimingBench& bench, size_t sets, size_t rounds) {
  for (size_t round = 0; round < rounds; ++round) {
    const size_t set = round % sets;
    EXPECT_TRUE(bench.Call("candidate", set, round, true).ok());
    EXPECT_TRUE(bench.Call("baseline", set, round, false).ok());
    if (!bench.Check(set).passed) return static_cast<int>(round);
  }
  return -1;
}

TEST(TimingBench, TimesAnHonestKernelAgainstItself) {
  auto inputs = Inputs(2);
  auto bench = TimingBench::Create(Request(2), inputs.data(), HonestAdd, HonestAdd);
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  auto elapsed = (*bench)->Call("candidate", 1, 0, true);
  ASSERT_TRUE(elapsed.ok());
  EXPECT_GT(*elapsed, 0.0);
  EXPECT_EQ(FirstMismatch(**bench, 2, 20), -1);
}

// A baseline that leaves its sum aside and writes it only when finished (as an imported task's
// torch eager does): the finish runs after each baseline call and outside its time.
std::vector<float> g_pending;
float* g_pending_output = nullptr;
int g_finishes = 0;
void DeferredAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  const float* b = static_cast<const float*>(p[1]);
  g_pending.assign(static_cast<size_t>(s[3]), 0.0f);
  for (int64_t i = 0; i < s[3]; ++i) g_pending[static_cast<size_t>(i)] = a[i] + b[i];
  g_pending_output = static_cast<float*>(p[2]);
}
void FinishDeferredAdd(void* stream) {
  EXPECT_EQ(stream, nullptr);
  std::copy(g_pending.begin(), g_pending.end(), g_pending_output);
  ++g_finishes;
}

TEST(TimingBench, AFinishPutsTheOutputsInPlaceOnlyWhenAskedAfterTheTimedCall) {
  auto inputs = Inputs(2);
  g_finishes = 0;
  auto bench = TimingBench::Create(Request(2), inputs.data(), HonestAdd, DeferredAdd, FinishDeferredAdd);
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  EXPECT_EQ(g_finishes, 1) << "the untimed first call is finished too";
  EXPECT_TRUE((*bench)->HasFinish("baseline"));
  EXPECT_FALSE((*bench)->HasFinish("candidate")) << "a candidate's finish is only ever given by the worker";
  ASSERT_TRUE((*bench)->Call("candidate", 0, 0, false).ok());
  ASSERT_TRUE((*bench)->Call("baseline", 0, 0, false).ok());
  EXPECT_EQ(g_finishes, 1) << "no clock of the timed call may see the copy";
  EXPECT_FALSE((*bench)->Check(0).passed) << "the baseline's outputs are not in place before its finish";
  (*bench)->Finish("candidate");  // it has none: nothing happens
  EXPECT_EQ(g_finishes, 1);
  (*bench)->Finish("baseline");
  EXPECT_EQ(g_finishes, 2);
  EXPECT_TRUE((*bench)->Check(0).passed) << "the baseline's outputs are in place once finished";
  // A generated candidate shim's finish, where the worker was told to call it.
  auto both = TimingBench::Create(Request(2), inputs.data(), DeferredAdd, DeferredAdd, FinishDeferredAdd,
                                  FinishDeferredAdd);
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE((*both)->HasFinish("candidate"));
}

TEST(TimingBench, CatchesAKernelThatReturnsCachedResults) {
  g_calls_per_output.clear();
  auto inputs = Inputs(2);
  auto bench = TimingBench::Create(Request(2), inputs.data(), CachingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok());
  const int round = FirstMismatch(**bench, 2, 20);
  EXPECT_GE(round, 0);
  EXPECT_LE(round, 2);
}

TEST(TimingBench, CatchesAKernelThatWritesNothing) {
  auto inputs = Inputs(1);
  auto bench = TimingBench::Create(Request(1), inputs.data(), WritesNothing, HonestAdd);
  ASSERT_TRUE(bench.ok());
  ASSERT_TRUE((*bench)->Call("candidate", 0, 0, true).ok());
  ASSERT_TRUE((*bench)->Call("baseline", 0, 0, false).ok());
  const Comparison check = (*bench)->Check(0);
  EXPECT_FALSE(check.passed);
  EXPECT_NE(check.Describe().find("never written"), std::string::npos) << check.Describe();
}

TEST(TimingBench, CatchesAKernelThatChangesBehaviourAfterWarmUp) {
  g_lazy_calls = 0;
  auto inputs = Inputs(2);
  auto bench = TimingBench::Create(Request(2), inputs.data(), LazyWhenTimed, HonestAdd);
  ASSERT_TRUE(bench.ok());
  EXPECT_EQ(FirstMismatch(**bench, 2, 20), 1);
}

// Records the sum of the first input it is given, then adds honestly.
double g_last_input_sum = 0;
void RecordingAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  g_last_input_sum = 0;
  for (int64_t i = 0; i < s[3]; ++i) g_last_input_sum += a[i];
  HonestAdd(p, s);
}

TEST(TimingBench, MutatesInputsOnlyWhenAsked) {
  auto inputs = Inputs(1);
  const auto before = inputs;
  auto bench = TimingBench::Create(Request(1), inputs.data(), RecordingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok());
  ASSERT_TRUE((*bench)->Call("candidate", 0, 0, false).ok());
  const double unchanged = g_last_input_sum;
  ASSERT_TRUE((*bench)->Call("candidate", 0, 0, false).ok());
  EXPECT_EQ(g_last_input_sum, unchanged);
  ASSERT_TRUE((*bench)->Call("candidate", 0, 1, true).ok());
  EXPECT_NE(g_last_input_sum, unchanged);
  // The bench works on its own copy: the shared inputs it was given stay as they were.
  EXPECT_EQ(inputs, before);
}

// Keeps a copy of the first input of its latest call.
std::vector<float> g_seen_input;
void CopyingAdd(void* const* p, const int64_t* s) {
  const float* a = static_cast<const float*>(p[0]);
  g_seen_input.assign(a, a + s[3]);
  HonestAdd(p, s);
}

// Keeps a copy of the second input (the weight, below) of its latest call.
std::vector<float> g_seen_weight;
void WeightCopyingAdd(void* const* p, const int64_t* s) {
  const float* b = static_cast<const float*>(p[1]);
  g_seen_weight.assign(b, b + s[3]);
  HonestAdd(p, s);
}

// A model's weight (a held input) is the same in every timing set and never mutated between
// calls, as a module's parameters are not; the other inputs move.
TEST(TimingBench, AHeldInputIsTheSameInEverySetAndNeverMutated) {
  CaseLayout layout = VectorAddLayout(kN);
  layout.tensors[1].draw.held = true;
  layout.held_seed = 99;
  std::vector<float> inputs(TimingInputBytes(layout, 2) / sizeof(float));
  FillTimingInputs(layout, 2, Distribution::kNormal, 1234, inputs.data());
  const std::vector<float> weight(inputs.begin() + kN, inputs.begin() + 2 * kN);
  EXPECT_EQ(std::memcmp(inputs.data() + 3 * kN, weight.data(), kN * sizeof(float)), 0);  // set 1's b
  EXPECT_NE(std::memcmp(inputs.data() + 2 * kN, inputs.data(), kN * sizeof(float)), 0);  // set 1's a
  nlohmann::json request = Request(2);
  request.update(layout.ToJson());
  auto bench = TimingBench::Create(request, inputs.data(), WeightCopyingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  for (size_t round = 0; round < 6; ++round) {
    ASSERT_TRUE((*bench)->Call("candidate", round % 2, round, true).ok());
    EXPECT_EQ(g_seen_weight, weight) << "round " << round;
  }
}

// With "spare_set", the bench has one set past the evaluator's, starting as set 0, which a refresh
// gives inputs of its own and on which both sides run and are checked like any set's.
TEST(TimingBench, ASpareSetStartsAsSetZeroAndRunsLikeAnyOther) {
  auto inputs = Inputs(2);
  nlohmann::json request = Request(2);
  request["spare_set"] = true;
  g_seen_input.clear();
  auto bench = TimingBench::Create(request, inputs.data(), CopyingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok()) << bench.error().message;
  ASSERT_TRUE((*bench)->HasSet(2));
  EXPECT_FALSE((*bench)->HasSet(3));
  ASSERT_TRUE((*bench)->Call("candidate", 2, 0, false).ok());
  const std::vector<float> set_zero(inputs.begin(), inputs.begin() + kN);
  EXPECT_EQ(g_seen_input, set_zero);
  (*bench)->Refresh(2, 7);
  ASSERT_TRUE((*bench)->Call("candidate", 2, 1, false).ok());
  EXPECT_NE(g_seen_input, set_zero);
  ASSERT_TRUE((*bench)->Call("baseline", 2, 1, false).ok());
  EXPECT_TRUE((*bench)->Check(2).passed);
  auto without = TimingBench::Create(Request(2), inputs.data(), CopyingAdd, HonestAdd);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE((*without)->HasSet(2));
}

TEST(TimingBench, ARefreshMovesEveryValueAndKeepsTheirDistribution) {
  auto inputs = Inputs(2);
  auto bench = TimingBench::Create(Request(2), inputs.data(), CopyingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok());
  // The first calls ran on set 0, so set 0 was refreshed before any timed call.
  ASSERT_TRUE((*bench)->Call("candidate", 0, 0, false).ok());
  const std::vector<float> first = g_seen_input;
  std::vector<float> original(inputs.begin(), inputs.begin() + kN);
  EXPECT_NE(first, original);
  (*bench)->Refresh(0, 1);
  ASSERT_TRUE((*bench)->Call("candidate", 0, 1, false).ok());
  const std::vector<float> second = g_seen_input;
  size_t same_place = 0;
  for (size_t i = 0; i < kN; ++i) same_place += first[i] == second[i];
  EXPECT_LT(same_place, kN / 20) << "nearly every element moves";
  // The same values: the distribution does not change.
  auto sorted = [](std::vector<float> values) {
    std::sort(values.begin(), values.end());
    return values;
  };
  EXPECT_EQ(sorted(second), sorted(original));
  // Reproducible for a round, different between rounds.
  (*bench)->Refresh(0, 1);
  ASSERT_TRUE((*bench)->Call("candidate", 0, 1, false).ok());
  EXPECT_EQ(g_seen_input, second);
  (*bench)->Refresh(0, 2);
  ASSERT_TRUE((*bench)->Call("candidate", 0, 2, false).ok());
  EXPECT_NE(g_seen_input, second);
}

TEST(EvictFromCaches, IsAvailableWhereTheCpuHasClflushoptAndKeepsTheContents) {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  EXPECT_EQ(CanEvictFromCaches(), text.find(" clflushopt") != std::string::npos);
#else
  EXPECT_FALSE(CanEvictFromCaches());
#endif
  // Unaligned on both ends: the lines that hold the first and the last byte are written back too.
  std::vector<unsigned char> data(10'000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
  const auto before = data;
  EvictFromCaches(data.data() + 3, data.size() - 5);
  EvictFromCaches(data.data(), 0);
  EXPECT_EQ(data, before);
}

TEST(TimingBench, AnEvictedSetKeepsItsInputsAndOutputs) {
  auto inputs = Inputs(2);
  auto bench = TimingBench::Create(Request(2), inputs.data(), CopyingAdd, HonestAdd);
  ASSERT_TRUE(bench.ok());
  ASSERT_TRUE((*bench)->Call("candidate", 1, 0, false).ok());
  ASSERT_TRUE((*bench)->Call("baseline", 1, 0, false).ok());
  const std::vector<float> seen = g_seen_input;
  (*bench)->Evict(1);
  EXPECT_TRUE((*bench)->Check(1).passed);
  ASSERT_TRUE((*bench)->Call("candidate", 1, 0, false).ok());
  EXPECT_EQ(g_seen_input, seen);
}

TEST(TimingBench, RefusesMissingKernelsBadLayoutsAndUnknownTargets) {
  auto inputs = Inputs(1);
  EXPECT_FALSE(TimingBench::Create(Request(1), inputs.data(), nullptr, HonestAdd).ok());
  EXPECT_FALSE(TimingBench::Create(Request(1), inputs.data(), HonestAdd, nullptr).ok());
  nlohmann::json bad = Request(1);
  bad.erase("scalars");
  EXPECT_FALSE(TimingBench::Create(bad, inputs.data(), HonestAdd, HonestAdd).ok());
  auto bench = TimingBench::Create(Request(1), inputs.data(), HonestAdd, HonestAdd);
  ASSERT_TRUE(bench.ok());
  EXPECT_FALSE((*bench)->Call("someone", 0, 0, false).ok());
  EXPECT_FALSE((*bench)->Call("candidate", 5, 0, false).ok());
  EXPECT_TRUE((*bench)->Call("none", 0, 0, false).ok());
}

}  // namespace
}  // namespace ksmith
