#include "cli/machine_description.h"

#include "backends/cpu/machine.h"
#include "cli/context.h"
#include "eval/backend_registry.h"

namespace ksmith {

nlohmann::json DescribeThisMachine(const std::string& backend, EvalService& service) {
  nlohmann::json machine = nlohmann::json::object();
  auto context = LoadCpuContext(false);
  const MachineFacts facts = context.ok() ? context->machine : ProbeMachine();
  machine["cpu"] = facts.cpu_model;
  machine["cores"] = facts.cores;
  if (!context.ok()) return machine;
  machine["memory_bandwidth_gbs"] = facts.memory_bandwidth_gbs;
  machine["fp32_gflops"] = facts.fp32_gflops;
  if (const std::string key = TraitsOf(backend).device_key; !key.empty()) {
    if (auto device = service.DeviceFacts(backend); device.ok() && device->contains("name")) {
      machine[key] = (*device)["name"];
    }
  }
  return machine;
}

}  // namespace ksmith
