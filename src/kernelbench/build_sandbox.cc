#include "kernelbench/build_sandbox.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace ksmith {

namespace fs = std::filesystem;
using nlohmann::json;

json ShapesJson(const std::vector<DimValues>& shapes) {
  json list = json::array();
  for (const auto& shape : shapes) {
    json values = json::object();
    for (const auto& [dim, value] : shape) values[dim] = value;
    list.push_back(values);
  }
  return list;
}

std::string KernelBenchPython(const json& analysis) {
  const json& python = analysis.at("python");
  const std::string recorded = python.value("executable", std::string());
  if (!recorded.empty()) return recorded;
  return (fs::path(python.value("home", std::string("/usr"))) / "bin" / "python3").string();
}

// Only what python, the compilers and the GPU's libraries need from the user's environment: the
// build runs the candidate's code, which has no business with the user's keys.
std::vector<std::string> BuildSandboxEnvironment(const fs::path& work, bool cuda) {
  std::vector<std::string> environment = {"LC_ALL=C.UTF-8",
                                          "PYTHONDONTWRITEBYTECODE=1",
                                          "HOME=" + (work / "home").string(),
                                          "TMPDIR=" + (work / "tmp").string(),
                                          "XDG_CACHE_HOME=" + (work / "cache").string(),
                                          "TORCH_EXTENSIONS_DIR=" + (work / "torch_extensions").string(),
                                          "TRITON_CACHE_DIR=" + (work / "triton").string(),
                                          fmt::format("MAX_JOBS={}", kBuildSandboxCompilers)};
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES"}) {
    if (const char* value = std::getenv(name)) environment.push_back(fmt::format("{}={}", name, value));
  }
  if (cuda && std::getenv("CUDA_HOME") == nullptr && fs::exists("/usr/local/cuda")) {
    environment.emplace_back("CUDA_HOME=/usr/local/cuda");
  }
  return environment;
}

// Reads the system, python and torch; runs the system's programs (the compilers) and python's;
// writes only its own folder (and, on the GPU, the device files the driver opens read-write).
Result<LandlockRuleset> BuildSandboxRuleset(const json& analysis, const fs::path& work, bool cuda) {
  std::vector<fs::path> readable = {"/etc", "/proc", "/sys", "/dev/null", "/dev/urandom", "/dev/zero"};
  const json& python = analysis.at("python");
  readable.emplace_back(python.value("home", std::string("/usr")));
  for (const auto& folder : python.value("readable", std::vector<std::string>{})) readable.emplace_back(folder);
  for (const auto& folder : python.value("sys_path", std::vector<std::string>{})) readable.emplace_back(folder);
  // The compilers and what python's packages bring to run (pip's ninja, Triton's own ptxas), and
  // whatever the user's PATH finds.
  std::vector<fs::path> executable = {"/usr", "/bin", "/lib", "/lib64", "/opt", "/sbin"};
  executable.emplace_back(fs::path(KernelBenchPython(analysis)).parent_path());
  for (const auto& folder : python.value("sys_path", std::vector<std::string>{})) executable.emplace_back(folder);
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = std::min(rest.find(':'), rest.size());
      const fs::path folder(rest.substr(0, colon));
      if (folder.is_absolute()) executable.push_back(folder);
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
  }
  std::vector<fs::path> writable = {work, "/dev/null"};
  if (cuda) {
    readable.emplace_back("/dev/nvidia-caps");
    for (const char* device : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"}) {
      writable.emplace_back(device);
    }
    for (int device = 0; device < 16; ++device) writable.emplace_back(fmt::format("/dev/nvidia{}", device));
  }
  return LandlockRuleset::Create(readable, executable, writable);
}

size_t BuildSandboxSlots(bool cuda) { return cuda ? 3 : 4; }  // half limits, as its tree's limit

ChildLimits BuildSandboxLimits(const BuildLimits& limits, bool cuda) {
  // No address-space limit: python may start the CUDA runtime, which reserves far more, and the
  // OpenMP threads of a CPU extension each reserve a malloc arena.
  ChildLimits child = limits.ForChild(/*address_space=*/false);
  child.tree_memory_bytes = cuda ? limits.memory_bytes + limits.memory_bytes / 2 : 2 * limits.memory_bytes;
  return child;
}

}  // namespace ksmith
