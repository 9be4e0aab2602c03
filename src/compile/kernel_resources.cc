#include "compile/kernel_resources.h"

#include "core/json_fields.h"

namespace ksmith {

// Field lists (core/json_fields.h): in ksmith itself, where argument-dependent lookup finds them.
template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, KernelResources> {
  io("name", self.name);
  io("mangled_name", self.mangled_name);
  io("arch", self.arch);
  io("is_kernel", self.is_kernel);
  io("registers", self.registers);
  io("barriers", self.barriers);
  io("shared_memory_bytes", self.shared_memory_bytes);
  io("stack_frame_bytes", self.stack_frame_bytes);
  io("spill_store_bytes", self.spill_store_bytes);
  io("spill_load_bytes", self.spill_load_bytes);
  io("constant_memory_bytes", self.constant_memory_bytes);
  io("cumulative_stack_bytes", self.cumulative_stack_bytes);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, SassCounts> {
  io("instructions", self.instructions);
  io("tensor_core", self.tensor_core);
  io("warpgroup", self.warpgroup);
  io("tma", self.tma);
  io("fma", self.fma);
  io("loads", self.loads);
  io("wide_loads", self.wide_loads);
  io("loads_128_bit", self.loads_128_bit);
  io("local_loads", self.local_loads);
  io("local_stores", self.local_stores);
  io("tensor_opcodes", self.tensor_opcodes);
}

template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, KernelSass> {
  io("name", self.name);
  io("mangled_name", self.mangled_name);
  io("arch", self.arch);
  io("counts", self.counts);
}


nlohmann::json KernelResources::ToJson() const { return json_fields::ToObject(*this); }
KernelResources KernelResources::FromJson(const nlohmann::json& json) { return json_fields::FromObject<KernelResources>(json); }

nlohmann::json ToJson(const std::vector<KernelResources>& resources) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& kernel : resources) list.push_back(kernel.ToJson());
  return list;
}

void SassCounts::Add(const SassCounts& other) {
  instructions += other.instructions;
  tensor_core += other.tensor_core;
  warpgroup += other.warpgroup;
  tma += other.tma;
  fma += other.fma;
  loads += other.loads;
  wide_loads += other.wide_loads;
  loads_128_bit += other.loads_128_bit;
  local_loads += other.local_loads;
  local_stores += other.local_stores;
  for (const auto& [opcode, count] : other.tensor_opcodes) tensor_opcodes[opcode] += count;
}

nlohmann::json SassCounts::ToJson() const { return json_fields::ToObject(*this); }
SassCounts SassCounts::FromJson(const nlohmann::json& json) { return json_fields::FromObject<SassCounts>(json); }
nlohmann::json KernelSass::ToJson() const { return json_fields::ToObject(*this); }
KernelSass KernelSass::FromJson(const nlohmann::json& json) { return json_fields::FromObject<KernelSass>(json); }

nlohmann::json SassSummary::ToJson() const {
  if (!error.empty()) return {{"error", error}};
  return {{"total", total.ToJson()}, {"kernels", json_fields::ToJsonValue(kernels)}};
}

SassSummary SassSummary::FromJson(const nlohmann::json& json) {
  SassSummary summary;
  json_fields::Reader reader(json);
  reader("error", summary.error);
  reader("total", summary.total);
  reader("kernels", summary.kernels);
  return summary;
}

}  // namespace ksmith
