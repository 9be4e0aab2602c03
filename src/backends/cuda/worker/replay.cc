#include "backends/cuda/worker/replay.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "backends/cuda/worker/device_case.h"
#include "backends/cuda/worker/nvrtc_module.h"
#include "binary/shared_library.h"
#include "core/files.h"

namespace ksmith {

int ReplayOnce(const std::string& directory, int device) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "ksmith-cuda-worker --replay: %s\n", message.c_str());
    return 3;
  };
  auto layout_text = ReadFile(directory + "/layout.json");
  auto arena_bytes = ReadFile(directory + "/arena.bin");
  if (!layout_text.ok()) return fail(layout_text.error().message);
  if (!arena_bytes.ok()) return fail(arena_bytes.error().message);
  auto layout = CaseLayout::FromJson(nlohmann::json::parse(*layout_text, nullptr, false));
  if (!layout.ok()) return fail(layout.error().message);
  if (cudaSetDevice(device) != cudaSuccess) return fail("no CUDA device");
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(*layout));
  if (!memory.ok()) return fail(memory.error().message);
  if (arena_bytes->size() != (*memory)->size()) return fail("arena.bin does not match layout.json");
  std::memcpy((*memory)->data(), arena_bytes->data(), arena_bytes->size());
  auto device_case = DeviceCase::Create(std::move(layout.value()), std::move(memory.value()));
  if (!device_case.ok()) return fail(device_case.error().message);
  auto library = SharedLibrary::Open(directory + "/kernel.so");
  if (!library.ok()) return fail(library.error().message);
  auto symbol = (*library)->Symbol(kKernelEntrySymbol);
  if (!symbol.ok()) return fail(symbol.error().message);
  // An NVRTC-form library launches through the worker's launcher, as in an evaluation; its
  // device code sits beside the library's link (cuda_profile.cc).
  std::unique_ptr<NvrtcModule> module;
  if (const std::string cubin = directory + "/kernel.cubin"; std::filesystem::exists(cubin)) {
    auto loaded = NvrtcModule::Load(cubin);
    if (!loaded.ok()) return fail(loaded.error().message);
    module = std::move(loaded.value());
    if (auto bound = module->BindTo(**library); !bound.ok()) return fail(bound.error().message);
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if ((*device_case)->Upload(stream) != cudaSuccess) return fail("upload failed");
  reinterpret_cast<CudaEntry>(*symbol)((*device_case)->device_pointers(), (*device_case)->scalars(), stream);
  if (auto error = cudaDeviceSynchronize(); error != cudaSuccess) return fail(cudaGetErrorString(error));
  // The arena as the call left it, for whoever wants the outputs (the reference cross-check).
  if ((*device_case)->Download(stream) != cudaSuccess) return fail("download failed");
  const auto* bytes = reinterpret_cast<const char*>((*device_case)->host_base());
  if (auto status = WriteFileAtomic(directory + "/result.bin", std::string(bytes, (*device_case)->bytes()));
      !status.ok()) {
    return fail(status.error().message);
  }
  return 0;
}

}  // namespace ksmith
