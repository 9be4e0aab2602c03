// What `ksmith optimize` runs with: defaults, then ksmith.toml, then flags. Keys never come from
// here: only from the environment, and they are never written to the store. The settings a run
// started with are stored with it (ToJson), so `--resume` and `replay` run with the same ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// A role's own model ([roles.planner] in ksmith.toml); empty fields fall back to [llm]'s.
struct RoleModelSettings {
  std::string provider;
  std::string base_url;
  std::string model;
  std::optional<double> temperature;

  bool operator==(const RoleModelSettings&) const = default;
};

/// The roles a team has, which [roles.NAME] may name.
const std::vector<std::string>& TeamRoleNames();

struct OptimizeSettings {
  std::string task;
  std::string backend = "cpu";
  std::string strategy;           // empty: refine with a model, tune without
  int islands = 4;                // evolve: populations evolving apart
  bool overlap = true;            // sample, evolve with a model: write proposals while earlier ones are judged
  bool knowledge = true;          // notes from the knowledge base in prompts, and the run's experience harvested
  int profile_every = 5;          // profile the best kernel after this many verdicts (cuda, ncu); 0: never
  std::map<std::string, RoleModelSettings> roles;  // team (and any role): a model per role
  std::string provider;           // "", "openai", "anthropic", "replay"
  std::string base_url;           // empty: the provider's public endpoint
  std::string model;
  std::string replay_run;         // replay: the run whose recorded answers are replayed
  std::string kernel;             // a kernel file to start from (and, for tune, to tune)
  std::string format = "native";  // how candidates are written: native or kernelbench (ModelNew)
  int64_t max_candidates = 20;
  int parallel = 4;               // model calls in flight at once (sample) and the connection cap
  int64_t max_output_tokens = 8192;
  double temperature = 0.7;
  int64_t context_tokens = 128'000;
  double request_timeout_s = 600;
  int request_attempts = 6;       // per model call, retries included
  double price_input_per_million = 0;
  double price_output_per_million = 0;
  bool response_cache = false;    // on-disk cache of model answers, keyed by the request
  std::optional<int64_t> budget_tokens;
  std::optional<double> budget_dollars;
  std::optional<double> budget_wall_s;
  // Evaluation:
  std::string arch;               // cuda: the target, empty for the GPU found
  int seeds = 3;
  double timing_budget_s = 1.0;
  int eval_timeout_ms = 10'000;
  double build_memory_gib = 0;  // [GiB] each build process's memory limit; 0: the default (compile/build.h)
  double build_cpu_s = 0;       // [s] each build process's CPU time limit; 0: the default

  nlohmann::json ToJson() const;
  /// Reads what ToJson wrote; fields it lacks keep their defaults (older runs). A field of another
  /// type is kDamaged, naming the key: the stored settings were damaged.
  static Result<OptimizeSettings> FromJson(const nlohmann::json& json);
};

/// The settings file a command reads: `config_flag` (--config) when given, else ./ksmith.toml when
/// present; empty when there is none.
std::filesystem::path ConfigFilePath(const std::string& config_flag);

/// Applies a ksmith.toml to `settings`: tables [llm], [optimize], [budget], [eval]. An unknown
/// key, a wrong type or an API key in the file is an error naming the file and the key.
Status ApplyConfigFile(const std::filesystem::path& path, OptimizeSettings& settings);

}  // namespace ksmith
