// Case layouts and guarded arenas: where tensors sit, guard zones, poisoned outputs, snapshots.
#include "sandbox/layout.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tensor/compare.h"

namespace ksmith {
namespace {

constexpr uint32_t kCanary = 0xa5c3e1f7u;
constexpr uint64_t kGuardKey = 0x5eed'a5c3'e1f7ull;

// vector_add-like: a (param 0), b (param 1) inputs, c (param 2) output, n (param 3) scalar.
CaseLayout VectorAddLayout(size_t n, size_t guard_bytes = 128) {
  CaseLayout layout;
  layout.scalars = {0, 0, 0, static_cast<int64_t>(n)};
  layout.tensors = {{0, n * 4, false}, {1, n * 4, false}, {2, n * 4, true}};
  layout.guard_bytes = guard_bytes;
  return layout;
}

std::string Floats(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST(FillPattern, RepeatsTheFourBytePatternIncludingAPartialTail) {
  unsigned char data[13];
  FillPattern(data, sizeof(data), 0x04030201u);
  for (size_t i = 0; i < sizeof(data); ++i) EXPECT_EQ(data[i], (i % 4) + 1) << i;
  EXPECT_EQ(FindPatternBreak(std::string_view(reinterpret_cast<char*>(data), sizeof(data)), 0x04030201u),
            std::string_view::npos);
}

TEST(GuardedArena, ALargeCaseIsCopiedAndPoisonedWholeAcrossThreads) {
  // Past 32 MiB a tensor is copied and poisoned in pieces on several threads: every byte of the
  // inputs arrives, every byte of the output holds the poison, and the snapshot is the arena.
  const size_t n = (size_t{40} << 20) / 4 + 3;  // not a whole number of pieces
  const CaseLayout layout = VectorAddLayout(n);
  std::string inputs(2 * n * 4, '\0');
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<char>((i * 131) ^ (i >> 13));
  GuardedArena arena(layout);
  ASSERT_TRUE(arena.Prepare(inputs, kGuardKey).ok());
  EXPECT_EQ(std::memcmp(arena.pointers()[0], inputs.data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(arena.pointers()[1], inputs.data() + n * 4, n * 4), 0);
  const std::string_view output(static_cast<const char*>(arena.pointers()[2]), n * 4);
  EXPECT_EQ(FindPatternBreak(output, kPoisonBits), std::string_view::npos);
  std::string snapshot;
  arena.SnapshotInto(snapshot);
  ASSERT_EQ(snapshot.size(), layout.SnapshotBytes());
  EXPECT_EQ(snapshot.compare(layout.guard_bytes, n * 4, inputs, 0, n * 4), 0);
}

TEST(FindPatternBreak, ReturnsTheFirstDifferingByte) {
  std::string data(64, '\0');
  FillPattern(reinterpret_cast<unsigned char*>(data.data()), data.size(), kCanary);
  data[37] ^= 0x01;
  data[50] ^= 0x01;
  EXPECT_EQ(FindPatternBreak(data, kCanary), 37u);
  data[0] ^= 0x80;
  EXPECT_EQ(FindPatternBreak(data, kCanary), 0u);
}

TEST(FindPatternBreak, EmptyDataHasNoBreak) {
  EXPECT_EQ(FindPatternBreak("", kCanary), std::string_view::npos);
}

TEST(CaseLayout, JsonRoundTripAndKeys) {
  const CaseLayout layout = VectorAddLayout(10);
  auto back = CaseLayout::FromJson(layout.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scalars, layout.scalars);
  ASSERT_EQ(back->tensors.size(), 3u);
  EXPECT_EQ(back->tensors[2].parameter, 2u);
  EXPECT_EQ(back->tensors[2].bytes, 40u);
  EXPECT_TRUE(back->tensors[2].output);
  EXPECT_EQ(back->guard_bytes, 128u);
  EXPECT_EQ(back->Key(), layout.Key());
  EXPECT_NE(VectorAddLayout(11).Key(), layout.Key());
  EXPECT_NE(VectorAddLayout(10, 64).Key(), layout.Key());
}

TEST(CaseLayout, SnapshotBytesCountsEveryTensorWithBothGuards) {
  EXPECT_EQ(VectorAddLayout(10, 128).SnapshotBytes(), 3 * (40 + 2 * 128u));
  EXPECT_EQ(CaseLayout{}.SnapshotBytes(), 0u);
}

TEST(CaseLayout, FromJsonRefusesMissingOrMistypedFields) {
  for (const char* text : {R"({"tensors": [], "guard_bytes": 64})",
                           R"({"scalars": [1], "tensors": [{"parameter": 0, "bytes": 4}], "guard_bytes": 64})",
                           R"({"scalars": "many", "tensors": [], "guard_bytes": 64})",
                           R"({"scalars": [1], "tensors": [], "guard_bytes": "64"})"}) {
    auto layout = CaseLayout::FromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(layout.ok()) << text;
    EXPECT_EQ(layout.error().kind, ErrorKind::kProtocol) << text;
  }
}

TEST(CaseLayout, FromJsonRefusesUnalignedGuards) {
  nlohmann::json json = VectorAddLayout(4).ToJson();
  json["guard_bytes"] = 100;
  auto layout = CaseLayout::FromJson(json);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.error().kind, ErrorKind::kProtocol);
}

TEST(CaseLayout, FromJsonRefusesASlotForAParameterThatDoesNotExist) {
  nlohmann::json json = VectorAddLayout(4).ToJson();
  json["tensors"][1]["parameter"] = 4;
  auto layout = CaseLayout::FromJson(json);
  ASSERT_FALSE(layout.ok());
  EXPECT_EQ(layout.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(layout.error().message.find("parameter 4 of 4"), std::string::npos) << layout.error().message;
}

TEST(GuardedArena, GivesAlignedPointersForTensorsAndNullForScalars) {
  GuardedArena arena(VectorAddLayout(7));
  for (int i = 0; i < 3; ++i) {
    ASSERT_NE(arena.pointers()[i], nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.pointers()[i]) % 64, 0u) << i;
  }
  EXPECT_EQ(arena.pointers()[3], nullptr);
  EXPECT_EQ(arena.scalars()[3], 7);
  // Tensors do not overlap: each starts at least its size plus both guards after the previous one.
  const auto* a = static_cast<const char*>(arena.pointers()[0]);
  const auto* b = static_cast<const char*>(arena.pointers()[1]);
  EXPECT_GE(b - a, 7 * 4 + 2 * 128);
}

TEST(GuardedArena, PrepareCopiesInputsPoisonsOutputsAndFillsGuards) {
  const size_t n = 5;
  const CaseLayout layout = VectorAddLayout(n);
  GuardedArena arena(layout);
  const std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50};
  ASSERT_TRUE(arena.Prepare(Floats(a) + Floats(b), kGuardKey).ok());
  EXPECT_EQ(std::memcmp(arena.pointers()[0], a.data(), n * 4), 0);
  EXPECT_EQ(std::memcmp(arena.pointers()[1], b.data(), n * 4), 0);
  const auto* c = static_cast<const float*>(arena.pointers()[2]);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(c[i]), kPoisonBits) << i;

  const std::string snapshot = arena.Snapshot();
  ASSERT_EQ(snapshot.size(), layout.SnapshotBytes());
  const size_t guard = layout.guard_bytes;
  const GuardPattern guards(kGuardKey);
  size_t offset = 0;
  for (size_t i = 0; i < layout.tensors.size(); ++i) {
    const std::string_view before = std::string_view(snapshot).substr(offset, guard);
    const std::string_view after = std::string_view(snapshot).substr(offset + guard + layout.tensors[i].bytes, guard);
    EXPECT_FALSE(guards.Inspect(before, i, GuardSide::kBefore).any()) << i;
    EXPECT_FALSE(guards.Inspect(after, i, GuardSide::kAfter).any()) << i;
    // No zone holds another's bytes: a copy from one to another shows.
    EXPECT_NE(before, after) << i;
    if (i > 0) EXPECT_NE(after, std::string_view(snapshot).substr(offset - guard, guard)) << i;
    offset += layout.tensors[i].bytes + 2 * guard;
  }
  EXPECT_EQ(snapshot.substr(guard, n * 4), Floats(a));
}

TEST(GuardedArena, PrepareGuardsWritesTheZonesAloneAndAPartialSnapshotSkipsTheInputs) {
  const size_t n = 5;
  const CaseLayout layout = VectorAddLayout(n);
  GuardedArena arena(layout);
  const std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50}, c = {7, 7, 7, 7, 7};
  std::memcpy(arena.pointers()[0], a.data(), n * 4);
  std::memcpy(arena.pointers()[1], b.data(), n * 4);
  std::memcpy(arena.pointers()[2], c.data(), n * 4);
  arena.PrepareGuards(kGuardKey);
  EXPECT_EQ(std::memcmp(arena.pointers()[0], a.data(), n * 4), 0);  // the device draws inputs
  EXPECT_EQ(std::memcmp(arena.pointers()[2], c.data(), n * 4), 0);  // and poisons outputs
  const std::string full = arena.Snapshot();
  std::string partial(layout.SnapshotBytes(), 'x');
  arena.SnapshotInto(partial, ArenaPart::kGuardsAndOutputs);
  ASSERT_EQ(partial.size(), full.size());
  const size_t guard = layout.guard_bytes;
  const GuardPattern guards(kGuardKey);
  size_t offset = 0;
  for (size_t i = 0; i < layout.tensors.size(); ++i) {
    const size_t bytes = layout.tensors[i].bytes;
    EXPECT_FALSE(guards.Inspect(std::string_view(partial).substr(offset, guard), i, GuardSide::kBefore).any()) << i;
    EXPECT_FALSE(guards.Inspect(std::string_view(partial).substr(offset + guard + bytes, guard), i, GuardSide::kAfter)
                     .any())
        << i;
    const std::string data = partial.substr(offset + guard, bytes);
    if (layout.tensors[i].output) {
      EXPECT_EQ(data, full.substr(offset + guard, bytes)) << i;
    } else {
      EXPECT_EQ(data, std::string(bytes, 'x')) << i;  // left as it was
    }
    offset += bytes + 2 * guard;
  }
}

TEST(CaseDraw, TravelsInARequestAndAMalformedOneIsRefused) {
  nlohmann::json request = {{"type", "run"}};
  auto none = CaseDraw::FromRequest(request);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  request["draw"] = CaseDraw{0xfeed'0000'0001ull, Distribution::kTies}.ToJson();
  auto draw = CaseDraw::FromRequest(request);
  ASSERT_TRUE(draw.ok() && draw->has_value());
  EXPECT_EQ((*draw)->seed, 0xfeed'0000'0001ull);
  EXPECT_EQ((*draw)->distribution, Distribution::kTies);
  for (const nlohmann::json& bad : {nlohmann::json(7), nlohmann::json{{"seed", 1}},
                                    nlohmann::json{{"seed", -1}, {"distribution", "normal"}},
                                    nlohmann::json{{"seed", 1}, {"distribution", "cauchy"}}}) {
    request["draw"] = bad;
    EXPECT_FALSE(CaseDraw::FromRequest(request).ok()) << bad.dump();
  }
}

TEST(CaseLayout, DrawableOnDeviceWhereEveryInputHasTheDevicesGenerator) {
  CaseLayout layout = VectorAddLayout(4);
  EXPECT_TRUE(DrawableOnDevice(layout));
  layout.tensors[0].dtype = DType::kFloat16;
  layout.tensors[1].dtype = DType::kInt32;
  layout.tensors[1].draw.integers = IntegerRange{0, 10};
  EXPECT_TRUE(DrawableOnDevice(layout));
  layout.tensors[1].draw.integers.reset();  // an int32 input without its range
  EXPECT_FALSE(DrawableOnDevice(layout));
  layout.tensors[1].dtype = DType::kFloat32;
  layout.tensors[1].draw.integers = IntegerRange{0, 10};  // integers in a float tensor
  EXPECT_FALSE(DrawableOnDevice(layout));
  layout.tensors[2].dtype = DType::kInt32;  // an output is never drawn
  layout.tensors[1].draw.integers.reset();
  EXPECT_TRUE(DrawableOnDevice(layout));
  layout.tensors[1].dtype = DType::kInt32;
  layout.tensors[1].draw.integers = IntegerRange{(int64_t{1} << 24) + 1, (int64_t{1} << 24) + 9};
  EXPECT_FALSE(DrawableOnDevice(layout));  // past what the host's float draw holds exactly
}

TEST(GuardedArena, GuardsDependOnTheKey) {
  GuardedArena first(VectorAddLayout(5));
  GuardedArena second(VectorAddLayout(5));
  const std::string inputs = Floats({1, 2, 3, 4, 5}) + Floats({6, 7, 8, 9, 10});
  ASSERT_TRUE(first.Prepare(inputs, kGuardKey).ok());
  ASSERT_TRUE(second.Prepare(inputs, kGuardKey).ok());
  EXPECT_EQ(first.Snapshot(), second.Snapshot());
  ASSERT_TRUE(second.Prepare(inputs, kGuardKey + 1).ok());
  EXPECT_NE(first.Snapshot().substr(0, 128), second.Snapshot().substr(0, 128));
}

TEST(GuardedArena, SnapshotIntoReplacesWhatItHeldAndKeepsItsMemory) {
  GuardedArena large(VectorAddLayout(1000));
  GuardedArena small(VectorAddLayout(5));
  ASSERT_TRUE(large.Prepare(std::string(2 * 1000 * 4, '\x01'), kGuardKey).ok());
  ASSERT_TRUE(small.Prepare(Floats({1, 2, 3, 4, 5}) + Floats({6, 7, 8, 9, 10}), kGuardKey).ok());
  std::string snapshot = "left over";
  large.SnapshotInto(snapshot);
  EXPECT_EQ(snapshot, large.Snapshot());
  const char* memory = snapshot.data();
  small.SnapshotInto(snapshot);
  EXPECT_EQ(snapshot, small.Snapshot());
  EXPECT_EQ(snapshot.data(), memory) << "a smaller snapshot reuses the memory of a larger one";
}

TEST(GuardedArena, KeepsItsPointersAcrossPrepareCallsAndRepoisonsOutputs) {
  GuardedArena arena(VectorAddLayout(3));
  ASSERT_TRUE(arena.Prepare(Floats({1, 2, 3}) + Floats({4, 5, 6}), kGuardKey).ok());
  std::vector<void*> before(arena.pointers(), arena.pointers() + 4);
  static_cast<float*>(arena.pointers()[2])[1] = 42.0f;
  ASSERT_TRUE(arena.Prepare(Floats({7, 8, 9}) + Floats({1, 1, 1}), kGuardKey ^ 0xffu).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(arena.pointers()[i], before[i]) << i;
  EXPECT_EQ(static_cast<const float*>(arena.pointers()[0])[0], 7.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(static_cast<const float*>(arena.pointers()[2])[1]), kPoisonBits);
}

TEST(GuardedArena, WritesOutOfBoundsShowUpInTheSnapshotGuards) {
  const CaseLayout layout = VectorAddLayout(4, 64);
  GuardedArena arena(layout);
  ASSERT_TRUE(arena.Prepare(Floats({1, 2, 3, 4}) + Floats({1, 2, 3, 4}), kGuardKey).ok());
  float* c = static_cast<float*>(arena.pointers()[2]);
  c[4] = 0.0f;   // one element past the end
  c[-1] = 0.0f;  // one element before the start
  const std::string snapshot = arena.Snapshot();
  const size_t output_start = 2 * (16 + 2 * 64);
  const GuardPattern guards(kGuardKey);
  const GuardDamage before = guards.Inspect(std::string_view(snapshot).substr(output_start, 64), 2, GuardSide::kBefore);
  EXPECT_EQ(before.changed, 4u) << "every guard byte is odd, so each byte of a 0.0f differs";
  EXPECT_EQ(before.first, 60u);
  const GuardDamage after =
      guards.Inspect(std::string_view(snapshot).substr(output_start + 64 + 16, 64), 2, GuardSide::kAfter);
  EXPECT_EQ(after.changed, 4u);
  EXPECT_EQ(after.first, 0u);
}

TEST(GuardedArena, PrepareRefusesInputDataOfTheWrongLength) {
  GuardedArena arena(VectorAddLayout(4));
  const Status short_data = arena.Prepare(Floats({1, 2, 3, 4}) + Floats({1, 2, 3}), kGuardKey);
  ASSERT_FALSE(short_data.ok());
  EXPECT_EQ(short_data.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(short_data.error().message.find("shorter"), std::string::npos);
  const Status long_data = arena.Prepare(Floats({1, 2, 3, 4, 5}) + Floats({1, 2, 3, 4}), kGuardKey);
  ASSERT_FALSE(long_data.ok());
  EXPECT_EQ(long_data.error().kind, ErrorKind::kProtocol);
  EXPECT_NE(long_data.error().message.find("longer"), std::string::npos);
}

TEST(GuardedArena, HandlesEmptyAndOddSizedTensors) {
  CaseLayout layout;
  layout.scalars = {0, 0};
  layout.tensors = {{0, 0, false}, {1, 6, true}};
  layout.guard_bytes = 64;
  GuardedArena arena(layout);
  ASSERT_TRUE(arena.Prepare("", kGuardKey).ok());
  const std::string snapshot = arena.Snapshot();
  ASSERT_EQ(snapshot.size(), layout.SnapshotBytes());
  // The 6-byte output holds the poison pattern, cut after 6 bytes.
  const std::string output = snapshot.substr(2 * 64 + 64, 6);
  EXPECT_EQ(FindPatternBreak(output, kPoisonBits), std::string_view::npos);
}

TEST(CaseLayout, AnInputsDrawSurvivesTheTripToTheWorker) {
  CaseLayout layout = VectorAddLayout(16);
  layout.tensors[1].draw.own = Distribution::kUniform;
  layout.tensors[1].draw.scale = 0.125;
  layout.tensors[1].draw.offset = -1.0;
  layout.tensors[1].draw.nonnegative = true;
  layout.tensors[1].draw.held = true;
  layout.held_seed = 77;
  auto parsed = CaseLayout::FromJson(layout.ToJson());
  EXPECT_EQ(parsed->held_seed, 77u);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_TRUE(parsed->tensors[0].draw.IsDefault());
  EXPECT_EQ(parsed->tensors[1].draw, layout.tensors[1].draw);
  // An index input: int32 labels drawn from [0, 4096).
  layout.tensors[0].dtype = DType::kInt32;
  layout.tensors[0].draw.integers = IntegerRange{0, 4096};
  parsed = CaseLayout::FromJson(layout.ToJson());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->tensors[0].dtype, DType::kInt32);
  EXPECT_EQ(parsed->tensors[0].draw, layout.tensors[0].draw);
  // A default draw adds nothing to the request, so the layouts of built-in tasks keep their keys.
  EXPECT_EQ(VectorAddLayout(16).ToJson().dump().find("draw"), std::string::npos);
  auto json = layout.ToJson();
  json["tensors"][1]["draw"]["distribution"] = "gaussian";
  EXPECT_FALSE(CaseLayout::FromJson(json).ok());
  json = layout.ToJson();
  json["tensors"][0]["draw"]["integers"] = {5, 5};  // empty
  EXPECT_FALSE(CaseLayout::FromJson(json).ok());
}

}  // namespace
}  // namespace ksmith
