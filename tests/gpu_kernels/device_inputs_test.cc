// A case's inputs drawn on the device (backends/cuda/worker/device_inputs.h) against the host's
// PrepareCase, for every built-in task at its first and last eval shape: the same bytes, so that a
// checked call on inputs drawn in the worker is judged against the reference's answer for the
// host's. And the second draw after a call finds any changed word. Needs an NVIDIA GPU; skips,
// saying why, everywhere else.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "backends/cuda/worker/device_inputs.h"
#include "eval/cases.h"
#include "gpu_present.h"
#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

std::vector<Task> BuiltInTasks() {
  std::vector<Task> tasks;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(KSMITH_SOURCE_DIR) / "tasks")) {
    if (entry.path().filename() != "task.toml") continue;
    auto task = LoadTask(entry.path().parent_path());
    EXPECT_TRUE(task.ok()) << entry.path() << ": " << task.error().message;
    if (task.ok()) tasks.push_back(std::move(task.value()));
  }
  return tasks;
}

// The case's tensors in device memory, one allocation each.
struct DeviceTensors {
  std::vector<unsigned char*> tensors;
  explicit DeviceTensors(const CaseLayout& layout) {
    for (const auto& slot : layout.tensors) {
      unsigned char* data = nullptr;
      EXPECT_EQ(cudaMalloc(&data, std::max<size_t>(slot.bytes, 8)), cudaSuccess);
      tensors.push_back(data);
    }
  }
  ~DeviceTensors() {
    for (unsigned char* data : tensors) cudaFree(data);
  }
};

class DeviceInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = WhyNoGpu(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_F(DeviceInputs, EveryTasksInputsDrawnOnTheDeviceAreThePreparedCasesBytes) {
  int layouts = 0;
  for (const Task& task : BuiltInTasks()) {
    for (const DimValues& shape : {task.eval_shapes.front(), task.eval_shapes.back()}) {
      CaseSpec spec{.shape = shape, .distribution = task.distributions.back(), .seed = 0x5eed'0000'0000ull + layouts,
                    .held_seed = HeldSeed(11)};
      const PreparedCase prepared = PrepareCase(task, spec, 0);
      if (!DrawableOnDevice(prepared.layout)) {
        ADD_FAILURE() << task.name << ": its inputs cannot be drawn on the device";
        continue;
      }
      ++layouts;
      DeviceTensors device(prepared.layout);
      const CaseDraw draw{spec.seed, spec.distribution};
      ASSERT_EQ(DrawInputs(prepared.layout, device.tensors, draw, nullptr), cudaSuccess) << task.name;
      std::string drawn;
      size_t largest = 0;
      for (size_t i = 0; i < prepared.layout.tensors.size(); ++i) {
        const TensorSlot& slot = prepared.layout.tensors[i];
        if (slot.output) continue;
        largest = std::max(largest, slot.bytes);
        std::string bytes(slot.bytes, '\0');
        ASSERT_EQ(cudaMemcpy(bytes.data(), device.tensors[i], slot.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
        drawn += bytes;
      }
      ASSERT_EQ(drawn.size(), prepared.inputs.size()) << task.name;
      EXPECT_TRUE(drawn == prepared.inputs) << task.name << " at " << task.FormatShape(shape);

      // The second draw finds nothing changed, then the one word changed.
      unsigned char* scratch = nullptr;
      unsigned long long* counter = nullptr;
      ASSERT_EQ(cudaMalloc(&scratch, std::max<size_t>(LargestInputBytes(prepared.layout), 8)), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&counter, sizeof(*counter)), cudaSuccess);
      EXPECT_EQ(largest, LargestInputBytes(prepared.layout));
      unsigned long long changed = 99;
      ASSERT_EQ(CountInputChanges(prepared.layout, device.tensors, draw, scratch, counter, nullptr, changed), cudaSuccess);
      EXPECT_EQ(changed, 0u) << task.name;
      for (size_t i = 0; i < prepared.layout.tensors.size(); ++i) {
        const TensorSlot& slot = prepared.layout.tensors[i];
        if (slot.output || slot.bytes == 0) continue;
        const unsigned char flipped = 0x5a;
        ASSERT_EQ(cudaMemcpy(device.tensors[i] + slot.bytes - 1, &flipped, 1, cudaMemcpyHostToDevice), cudaSuccess);
        break;
      }
      ASSERT_EQ(CountInputChanges(prepared.layout, device.tensors, draw, scratch, counter, nullptr, changed), cudaSuccess);
      EXPECT_EQ(changed, 1u) << task.name;
      // Another seed is another draw.
      ASSERT_EQ(CountInputChanges(prepared.layout, device.tensors, CaseDraw{spec.seed + 1, spec.distribution}, scratch,
                                  counter, nullptr, changed),
                cudaSuccess);
      EXPECT_GT(changed, 0u) << task.name;
      cudaFree(scratch);
      cudaFree(counter);
    }
  }
  EXPECT_GT(layouts, 100);
}

TEST_F(DeviceInputs, AHeldInputIsDrawnFromTheHeldSeedInEveryCase) {
  // A module's weight keeps its values across cases: the device draws it from the layout's held
  // seed, whatever the case's seed, as FillSlot does.
  CaseLayout layout;
  layout.scalars = {0, 0, 0, 1000};
  layout.tensors = {{0, 4000, false}, {1, 4000, false}, {2, 4000, true}};
  layout.tensors[1].draw.held = true;
  layout.tensors[1].draw.own = Distribution::kUniform;
  layout.held_seed = HeldSeed(3);
  std::string host[2];
  for (size_t i = 0; i < 2; ++i) {
    std::vector<float> values(1000);
    layout.FillSlot(layout.tensors[i], values.data(), Distribution::kLarge, 77, layout.tensors[i].parameter);
    host[i].assign(reinterpret_cast<const char*>(values.data()), 4000);
  }
  for (const uint64_t seed : {uint64_t{77}, uint64_t{78}}) {
    DeviceTensors device(layout);
    ASSERT_EQ(DrawInputs(layout, device.tensors, CaseDraw{seed, Distribution::kLarge}, nullptr), cudaSuccess);
    std::string drawn[2] = {std::string(4000, '\0'), std::string(4000, '\0')};
    for (size_t i = 0; i < 2; ++i) {
      ASSERT_EQ(cudaMemcpy(drawn[i].data(), device.tensors[i], 4000, cudaMemcpyDeviceToHost), cudaSuccess);
    }
    EXPECT_EQ(drawn[0] == host[0], seed == 77);  // the case's own input follows its seed
    EXPECT_TRUE(drawn[1] == host[1]) << seed;     // the held one does not
  }
}

}  // namespace
}  // namespace ksmith
