#include "server/reward.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace ksmith {
using json = nlohmann::json;

bool HasLabelStartingWith(const json& verdict, const std::string& prefix) {
  const auto labels = verdict.find("labels");
  if (labels == verdict.end() || !labels->is_array()) return false;
  return std::any_of(labels->begin(), labels->end(), [&prefix](const json& label) {
    return label.is_string() && label.get_ref<const std::string&>().starts_with(prefix);
  });
}

Result<RewardRule> RewardRule::FromConfigFile(const std::filesystem::path& path) {
  RewardRule rule;
  toml::table table;
  try {
    table = toml::parse_file(path.string());
  } catch (const toml::parse_error& error) {
    return MakeError(ErrorKind::kParse, "{}: not valid TOML: {}", path.string(), error.description());
  }
  const toml::table* reward = table["reward"].as_table();
  if (reward == nullptr) return rule;
  const std::pair<const char*, double*> keys[] = {
      {"correct", &rule.correct},         {"speedup_weight", &rule.speedup_weight},
      {"speedup_cap", &rule.speedup_cap}, {"coverage_weight", &rule.coverage_weight},
      {"failure", &rule.failure},         {"no_custom_kernel", &rule.no_custom_kernel},
      {"integrity_violation", &rule.integrity_violation}, {"infra_error", &rule.infra_error}};
  for (const auto& [key, node] : *reward) {
    const auto known = std::find_if(std::begin(keys), std::end(keys),
                                    [&key](const auto& entry) { return key.str() == entry.first; });
    if (known == std::end(keys)) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "{}: [reward] {}: unknown key (known: correct, speedup_weight, speedup_cap, coverage_weight, "
                       "failure, no_custom_kernel, integrity_violation, infra_error)",
                       path.string(), key.str());
    }
    const std::optional<double> value = node.value<double>();
    if (!value || !std::isfinite(*value)) {
      return MakeError(ErrorKind::kInvalidArgument, "{}: [reward] {} must be a number", path.string(), key.str());
    }
    *known->second = *value;
  }
  if (rule.speedup_cap <= 0) {
    return MakeError(ErrorKind::kInvalidArgument, "{}: [reward] speedup_cap must be above 0", path.string());
  }
  return rule;
}

json RewardRule::ToJson() const {
  return {{"correct", correct},       {"speedup_weight", speedup_weight},
          {"speedup_cap", speedup_cap}, {"coverage_weight", coverage_weight},
          {"failure", failure},       {"no_custom_kernel", no_custom_kernel},
          {"integrity_violation", integrity_violation}, {"infra_error", infra_error}};
}

Reward ComputeReward(const RewardRule& rule, const json& verdict) {
  Reward reward;
  const std::string status = verdict.value("status", std::string());
  if (status == "integrity_violation") {
    reward.value = rule.integrity_violation;
    reward.parts = {{"rule", "integrity_violation"}};
    return reward;
  }
  if (status == "infra_error") {
    reward.value = rule.infra_error;
    reward.parts = {{"rule", "infra_error"}};
    return reward;
  }
  if (status != "passed") {
    reward.value = rule.failure;
    reward.parts = {{"rule", "failure"}, {"status", status}};
    return reward;
  }
  // A candidate that left the work to torch earns nothing for it (KernelBench's "no custom
  // kernel"; CUPTI's attribution on the GPU, the shim's count of its own calls on the CPU).
  if (HasLabelStartingWith(verdict, "no custom kernel")) {
    reward.value = rule.no_custom_kernel;
    reward.parts = {{"rule", "no_custom_kernel"}};
    return reward;
  }
  double coverage = 1.0;
  std::string coverage_source = "own code by contract";
  if (const auto share = verdict.find("kernel_time_share"); share != verdict.end() && share->is_object()) {
    coverage = std::clamp(share->value("share", 0.0), 0.0, 1.0);
    coverage_source = "cupti";
  } else if (verdict.contains("generalization")) {
    // A KernelBench ModelNew whose GPU time nobody attributed (on the cpu, or without CUPTI): how
    // much of its work is its own is unknown, and torch doing most of it must not be paid as ours.
    coverage = 0.0;
    coverage_source = "unmeasured";
  }
  double speedup = 0;
  if (const auto found = verdict.find("speedup"); found != verdict.end() && found->is_number()) {
    speedup = std::max(0.0, found->get<double>());
  }
  const double speedup_term = rule.speedup_weight * std::min(speedup, rule.speedup_cap);
  const double coverage_term = rule.coverage_weight * coverage;
  reward.value = rule.correct + speedup_term + coverage_term;
  reward.parts = {{"rule", "passed"},
                  {"correct", rule.correct},
                  {"speedup", speedup_term},
                  {"coverage", coverage_term},
                  {"coverage_share", coverage},
                  {"coverage_source", coverage_source},
                  {"timed", verdict.contains("speedup")}};
  return reward;
}

}  // namespace ksmith
