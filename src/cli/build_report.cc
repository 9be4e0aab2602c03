#include "cli/build_report.h"

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/backend_registry.h"

namespace ksmith {
namespace {

const BuildFacts* FactsOf(const Verdict& verdict) {
  const StageRecord* build = verdict.FindStage(StageId::kBuild);
  return build != nullptr && build->details.build ? &*build->details.build : nullptr;
}

// The SASS counts of each kernel by mangled name (one arch per build: the target's).
std::map<std::string, const KernelSass*> SassByName(const SassSummary& sass) {
  std::map<std::string, const KernelSass*> by_name;
  for (const auto& kernel : sass.kernels) by_name[kernel.mangled_name] = &kernel;
  return by_name;
}

std::string CountsLine(const SassCounts& counts) {
  std::string line = fmt::format("{} instructions: {} FMA, {} loads ({} of 64+ bits, {} of 128 bits), "
                                 "{} local loads / {} local stores, {} tensor-core",
                                 counts.instructions, counts.fma, counts.loads, counts.wide_loads, counts.loads_128_bit,
                                 counts.local_loads, counts.local_stores, counts.tensor_core);
  if (counts.tma > 0) line += fmt::format(", {} TMA", counts.tma);
  for (const auto& [opcode, count] : counts.tensor_opcodes) line += fmt::format(", {} {}", count, opcode);
  return line;
}

}  // namespace

bool Built(const Verdict& verdict) {
  const BuildFacts* facts = FactsOf(verdict);
  return verdict.FailedStage() == nullptr && facts != nullptr && facts->shared_object.has_value();
}

nlohmann::json BuildReportJson(const Verdict& verdict) {
  const bool built = Built(verdict);
  nlohmann::json report = {{"task", verdict.task},
                           {"backend", verdict.backend},
                           {"candidate", verdict.candidate},
                           {"built", built},
                           {"status", built ? std::string("built") : std::string(VerdictStatusName(verdict.status))},
                           {"reason", built ? std::string() : verdict.reason},
                           {"target", verdict.provenance.value("target", nlohmann::json::object())},
                           {"compiler", verdict.provenance.value("compiler", nlohmann::json())},
                           {"kernels", nlohmann::json::array()}};
  report["stages"] = verdict.ToJson().value("stages", nlohmann::json::array());  // as a verdict writes them
  const BuildFacts* facts = FactsOf(verdict);
  if (facts == nullptr) return report;
  report["cache_hit"] = facts->cache_hit;
  report["compile_s"] = facts->compile_s;
  report["command"] = facts->command;
  if (facts->shared_object) report["shared_object"] = *facts->shared_object;
  const SassSummary sass = facts->sass.value_or(SassSummary{});
  const auto by_name = SassByName(sass);
  for (const KernelResources& kernel : facts->resources.value_or(std::vector<KernelResources>{})) {
    nlohmann::json entry = kernel.ToJson();
    const auto found = by_name.find(kernel.mangled_name);
    entry["sass"] = found != by_name.end() ? found->second->counts.ToJson() : nlohmann::json(nullptr);
    report["kernels"].push_back(std::move(entry));
  }
  report["sass_total"] = sass.total.ToJson();
  if (!sass.error.empty()) report["sass_error"] = sass.error;
  return report;
}

std::string RenderBuildReport(const Verdict& verdict) {
  const BuildFacts* facts = FactsOf(verdict);
  if (facts == nullptr) return verdict.Render();
  const nlohmann::json target = verdict.provenance.value("target", nlohmann::json::object());
  const std::string arch = target.value("arch", std::string());
  const std::string origin = target.value("origin", std::string());
  std::string text = fmt::format("built {} for task {} ({}{}) {}\n", verdict.candidate, verdict.task, verdict.backend,
                                 arch.empty() ? "" : ", " + arch + (origin.empty() ? "" : ": " + origin),
                                 facts->cache_hit ? std::string("from the cache")
                                                  : fmt::format("in {:.2f} s", facts->compile_s));
  const SassSummary sass = facts->sass.value_or(SassSummary{});
  const auto by_name = SassByName(sass);
  const auto resources = facts->resources.value_or(std::vector<KernelResources>{});
  for (const KernelResources& kernel : resources) {
    text += fmt::format("{} {} [{}]\n", kernel.is_kernel ? "kernel" : "device function", kernel.name, kernel.arch);
    text += fmt::format("  registers {}, shared memory {} B static, constant memory {} B, barriers {}\n",
                        kernel.registers, kernel.shared_memory_bytes, kernel.constant_memory_bytes, kernel.barriers);
    text += fmt::format("  local memory: stack frame {} B, spill stores {} B, spill loads {} B\n",
                        kernel.stack_frame_bytes, kernel.spill_store_bytes, kernel.spill_load_bytes);
    if (const auto found = by_name.find(kernel.mangled_name); found != by_name.end()) {
      text += "  SASS: " + CountsLine(found->second->counts) + "\n";
    }
  }
  if (resources.empty() && TraitsOf(verdict.backend).reports_kernel_resources) {
    text += "no kernels in the device compiler's report\n";
  } else if (resources.empty()) {
    std::vector<std::string> reporting;
    for (const auto& name : BackendRegistry::Global().Names()) {
      if (TraitsOf(name).reports_kernel_resources) reporting.push_back("--backend " + name);
    }
    text += fmt::format("no per-kernel resources: the {} backend's compiler reports none (registers and SASS come "
                        "from {})\n",
                        verdict.backend, fmt::join(reporting, " or "));
  }
  if (!sass.error.empty()) {
    text += "no SASS summary: " + sass.error + "\n";
  } else if (sass.kernels.size() > 1) {
    text += "SASS total: " + CountsLine(sass.total) + "\n";
  }
  if (facts->shared_object) text += "object: " + *facts->shared_object + "\n";
  return text;
}

}  // namespace ksmith
