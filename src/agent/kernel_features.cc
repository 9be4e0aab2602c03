#include "agent/kernel_features.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ksmith {
namespace {

int Quarter(double roofline_fraction) {
  if (roofline_fraction <= 0) return -1;
  return std::clamp(static_cast<int>(roofline_fraction * 4), 0, 3);
}

int RegistersBand(int registers) {
  for (int band : {32, 64, 128}) {
    if (registers <= band) return band;
  }
  return 255;
}

const char* Flag(const std::optional<bool>& flag, const char* yes, const char* no) {
  return *flag ? yes : no;
}

}  // namespace

KernelFeatures FeaturesOf(const Verdict& verdict) {
  KernelFeatures features;
  if (verdict.timing) {
    features.bound_by = verdict.timing->bound_by;
    features.limit_quarter = Quarter(verdict.timing->roofline_fraction);
  }
  const StageRecord* build = verdict.FindStage(StageId::kBuild);
  if (build == nullptr || !build->details.build) return features;
  const BuildFacts& facts = *build->details.build;
  if (facts.vector_code && facts.vector_code->instructions > 0) {
    features.vector_bits = facts.vector_code->widest_vector_bits();
    features.threads = facts.vector_code->openmp_parallel > 0;
    features.fp64 = facts.vector_code->packed_double > 0;
  }
  if (facts.resources && !facts.resources->empty()) {
    int registers = 0;
    bool shared = false;
    for (const auto& kernel : *facts.resources) {
      if (!kernel.is_kernel) continue;
      registers = std::max(registers, kernel.registers);
      shared = shared || kernel.shared_memory_bytes > 0;
    }
    features.registers_band = RegistersBand(registers);
    features.shared_memory = shared;
  }
  if (facts.sass && facts.sass->total.instructions > 0) {
    const SassCounts& sass = facts.sass->total;
    features.tensor_cores = sass.tensor_core > 0;
    features.load_bits = sass.loads_128_bit > 0 ? 128 : sass.wide_loads > 0 ? 64 : 32;
  }
  return features;
}

std::string KernelFeatures::Cell() const {
  std::vector<std::string> parts;
  // What the kernel is, not how fast it is: the limit it reaches is measured speed, and a faster
  // kernel of the same kind must replace the slower one, not sit beside it.
  parts.push_back(bound_by.empty() ? "untimed" : bound_by);
  if (vector_bits >= 0) parts.push_back(fmt::format("v{}", vector_bits));
  if (load_bits > 0) parts.push_back(fmt::format("ld{}", load_bits));
  if (threads) parts.push_back(Flag(threads, "omp", "serial"));
  if (fp64) parts.push_back(Flag(fp64, "fp64", "fp32"));
  if (shared_memory) parts.push_back(Flag(shared_memory, "smem", "nosmem"));
  if (tensor_cores) parts.push_back(Flag(tensor_cores, "tc", "notc"));
  if (registers_band > 0) parts.push_back(fmt::format("r{}", registers_band));
  std::string cell;
  for (const auto& part : parts) cell += (cell.empty() ? "" : "/") + part;
  return cell;
}

std::string KernelFeatures::Describe() const {
  std::vector<std::string> parts;
  if (bound_by.empty()) {
    parts.push_back("untimed");
  } else if (limit_quarter < 0) {
    parts.push_back(bound_by + "-bound");
  } else {
    parts.push_back(fmt::format("{}-bound at {}-{}% of the limit", bound_by, limit_quarter * 25, limit_quarter * 25 + 25));
  }
  if (vector_bits == 0) parts.push_back("scalar arithmetic");
  if (vector_bits > 0) parts.push_back(fmt::format("{}-bit vector arithmetic", vector_bits));
  if (load_bits > 0) parts.push_back(fmt::format("{}-bit loads", load_bits));
  if (threads) parts.push_back(Flag(threads, "an OpenMP parallel region", "no OpenMP parallel region"));
  if (fp64) parts.push_back(Flag(fp64, "fp64 vector arithmetic", "fp32 arithmetic"));
  if (shared_memory) parts.push_back(Flag(shared_memory, "shared memory", "no static shared memory"));
  if (tensor_cores) parts.push_back(Flag(tensor_cores, "tensor cores", "no tensor cores"));
  if (registers_band > 0) parts.push_back(fmt::format("<= {} registers per thread", registers_band));
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

nlohmann::json KernelFeatures::ToJson() const {
  nlohmann::json json = {{"cell", Cell()}, {"bound_by", bound_by}, {"limit_quarter", limit_quarter},
                         {"vector_bits", vector_bits}, {"load_bits", load_bits}};
  if (threads) json["threads"] = *threads;
  if (fp64) json["fp64"] = *fp64;
  if (shared_memory) json["shared_memory"] = *shared_memory;
  if (tensor_cores) json["tensor_cores"] = *tensor_cores;
  if (registers_band > 0) json["registers_band"] = registers_band;
  return json;
}

}  // namespace ksmith
