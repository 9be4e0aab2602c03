#include "backends/opencl/opencl_tools.h"

#include <fmt/format.h>

#include "backends/opencl/opencl_compiler.h"

namespace ksmith {
namespace {

// The OpenCL platforms and devices the opencl backend can use (ksmith-oclc lists them).
nlohmann::json OpenclJson() {
  auto devices = ListOpenclDevices();
  if (!devices.ok()) return {{"available", false}, {"reason", devices.error().message}};
  if (devices->empty()) {
    return {{"available", false},
            {"reason", "the OpenCL loader found no platform (install pocl-opencl-icd, or register a vendor's library in "
                       "/etc/OpenCL/vendors)"}};
  }
  return {{"available", true}, {"devices", *devices}};
}

std::string OpenclText(const nlohmann::json& opencl) {
  if (!opencl.value("available", false)) return fmt::format("opencl       none: {}\n", opencl.value("reason", std::string()));
  std::string text;
  for (const auto& device : opencl["devices"]) {
    text += fmt::format("opencl       --devices {}: {} ({}, {}, {}; {} compute units, {} MiB)\n", device.value("index", 0),
                        device.value("name", std::string()), device.value("platform", std::string()),
                        device.value("type", std::string()), device.value("version", std::string()),
                        device.value("compute_units", 0), device.value("global_memory_bytes", uint64_t{0}) >> 20);
  }
  return text;
}

}  // namespace

DoctorSection OpenclDoctor(const std::filesystem::path&, bool) {
  DoctorSection section;
  section.json["opencl"] = OpenclJson();
  section.text = OpenclText(section.json["opencl"]);
  return section;
}

}  // namespace ksmith
