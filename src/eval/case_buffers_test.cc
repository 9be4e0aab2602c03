// Kept case memory: which buffer a case gets, the bound on what is kept, and that a case drawn
// into kept memory is the case drawn into fresh memory.
#include "eval/case_buffers.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

PreparedCase Judged(size_t input_bytes, size_t output_elements) {
  PreparedCase judged;
  judged.inputs.reserve(input_bytes);
  judged.inputs.resize(input_bytes / 2);
  judged.expected.emplace_back();
  judged.expected.back().reserve(output_elements);
  return judged;
}

TEST(CaseBuffers, TheSmallestBufferThatHoldsTheCaseElseTheLargest) {
  CaseBuffers buffers;
  EXPECT_LT(buffers.TakeInputs(100).capacity(), 100u) << "nothing kept yet: an empty string";
  for (const size_t bytes : {size_t{1000}, size_t{50000}, size_t{8000}}) buffers.Keep(Judged(bytes, bytes / 8));
  const size_t fits = buffers.TakeInputs(5000).capacity();
  EXPECT_GE(fits, 8000u);
  EXPECT_LT(fits, 50000u);
  EXPECT_GE(buffers.TakeInputs(100000).capacity(), 50000u) << "none holds it: the largest, to grow";
  EXPECT_GE(buffers.TakeInputs(10).capacity(), 1000u);
  EXPECT_LT(buffers.TakeInputs(10).capacity(), 1000u) << "all three were taken";
  const auto outputs = buffers.TakeOutputs(900);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_GE(outputs[0].capacity(), 1000u);
  EXPECT_LT(outputs[0].capacity(), 6250u);
}

TEST(CaseBuffers, KeepsOnlyTheLargestFew) {
  CaseBuffers buffers(2);
  for (const size_t bytes : {size_t{4000}, size_t{1000}, size_t{9000}, size_t{2000}}) {
    buffers.Keep(Judged(bytes, bytes / 8));
  }
  // 4000 + 9000 input bytes and (500 + 1125) doubles: the 1000- and 2000-byte cases were dropped.
  EXPECT_GE(buffers.HeldBytes(), 26000u);
  EXPECT_LT(buffers.HeldBytes(), 26000u + 2 * 64);
  EXPECT_GE(buffers.TakeInputs(1).capacity(), 4000u);
}

TEST(CaseBuffers, ACaseDrawnIntoKeptMemoryIsTheCaseDrawnIntoFreshMemory) {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
  ASSERT_TRUE(task.ok()) << task.error().message;
  CaseSpec large{.shape = {{"n", 5000}}, .distribution = Distribution::kNormal, .seed = 11};
  CaseSpec small{.shape = {{"n", 3000}}, .distribution = Distribution::kLarge, .seed = 12};
  CaseBuffers buffers;
  PreparedCase first = PrepareCase(*task, large, 64);
  ComputeExpected(*task, [](void* const* p, const int64_t* s) {
    for (int64_t i = 0; i < s[3]; ++i) {
      static_cast<double*>(p[2])[i] = static_cast<double>(static_cast<const float*>(p[0])[i]) +
                                      static_cast<const float*>(p[1])[i];
    }
  }, first);
  buffers.Keep(std::move(first));
  PreparedCase reused = PrepareCase(*task, small, 64, buffers.TakeInputs(2 * 3000 * sizeof(float)));
  const PreparedCase fresh = PrepareCase(*task, small, 64);
  EXPECT_EQ(reused.inputs, fresh.inputs);
}

}  // namespace
}  // namespace ksmith
