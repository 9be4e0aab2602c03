#include "cli/optimize_settings.h"

#include "cli/setting_ranges.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <type_traits>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/json_fields.h"

namespace ksmith {
namespace {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

}  // namespace

nlohmann::json OptimizeSettings::ToJson() const {
  nlohmann::json json = {
      {"task", task}, {"backend", backend}, {"strategy", strategy}, {"islands", islands}, {"overlap", overlap}, {"knowledge", knowledge},
      {"profile_every", profile_every},
      {"provider", provider},
      {"base_url", base_url}, {"model", model}, {"replay_run", replay_run}, {"kernel", kernel}, {"format", format},
      {"max_candidates", max_candidates}, {"parallel", parallel}, {"max_output_tokens", max_output_tokens},
      {"temperature", temperature}, {"context_tokens", context_tokens}, {"request_timeout_s", request_timeout_s},
      {"request_attempts", request_attempts},
      {"price_input_per_million", price_input_per_million},
      {"price_output_per_million", price_output_per_million}, {"response_cache", response_cache},
      {"arch", arch}, {"seeds", seeds}, {"timing_budget_s", timing_budget_s}, {"eval_timeout_ms", eval_timeout_ms},
      {"build_memory_gib", build_memory_gib}, {"build_cpu_s", build_cpu_s}};
  json["budget_tokens"] = budget_tokens ? nlohmann::json(*budget_tokens) : nlohmann::json();
  json["budget_dollars"] = budget_dollars ? nlohmann::json(*budget_dollars) : nlohmann::json();
  json["budget_wall_s"] = budget_wall_s ? nlohmann::json(*budget_wall_s) : nlohmann::json();
  json["roles"] = nlohmann::json::object();
  for (const auto& [role, model] : roles) {
    json["roles"][role] = {{"provider", model.provider}, {"base_url", model.base_url}, {"model", model.model},
                           {"temperature", model.temperature ? nlohmann::json(*model.temperature) : nlohmann::json()}};
  }
  return json;
}

const std::vector<std::string>& TeamRoleNames() {
  static const std::vector<std::string> names = {"planner", "coder", "debugger", "judge"};
  return names;
}

Result<OptimizeSettings> OptimizeSettings::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return MakeError(ErrorKind::kDamaged, "the settings are JSON of type {}, not object", json.type_name());
  OptimizeSettings settings;
  std::string wrong;  // the first key whose value has another type than its field
  auto read = [&json, &wrong](const char* key, auto& field) {
    const auto found = json.find(key);
    if (found == json.end() || found->is_null()) return;
    using Field = std::decay_t<decltype(field)>;
    bool read_ok = false;
    if constexpr (IsOptional<Field>::value) {
      typename Field::value_type value{};
      read_ok = json_fields::FromJsonValue(*found, value);
      if (read_ok) field = value;
    } else {
      read_ok = json_fields::FromJsonValue(*found, field);
    }
    if (!read_ok && wrong.empty()) {
      wrong = fmt::format("'{}' is JSON of type {}", key, found->type_name());
    }
  };
  // Runs stored before these settings existed ran without them: a resume keeps it so.
  if (!json.contains("overlap")) settings.overlap = false;
  if (!json.contains("knowledge")) settings.knowledge = false;
  if (!json.contains("profile_every")) settings.profile_every = 0;
  read("task", settings.task);
  read("backend", settings.backend);
  read("strategy", settings.strategy);
  read("islands", settings.islands);
  read("overlap", settings.overlap);
  read("knowledge", settings.knowledge);
  read("profile_every", settings.profile_every);
  read("provider", settings.provider);
  read("base_url", settings.base_url);
  read("model", settings.model);
  read("replay_run", settings.replay_run);
  read("kernel", settings.kernel);
  read("format", settings.format);
  read("max_candidates", settings.max_candidates);
  read("parallel", settings.parallel);
  read("max_output_tokens", settings.max_output_tokens);
  read("temperature", settings.temperature);
  read("context_tokens", settings.context_tokens);
  read("request_timeout_s", settings.request_timeout_s);
  read("request_attempts", settings.request_attempts);
  read("price_input_per_million", settings.price_input_per_million);
  read("price_output_per_million", settings.price_output_per_million);
  read("response_cache", settings.response_cache);
  read("arch", settings.arch);
  read("seeds", settings.seeds);
  read("timing_budget_s", settings.timing_budget_s);
  read("eval_timeout_ms", settings.eval_timeout_ms);
  read("build_memory_gib", settings.build_memory_gib);
  read("build_cpu_s", settings.build_cpu_s);
  read("budget_tokens", settings.budget_tokens);
  read("budget_dollars", settings.budget_dollars);
  read("budget_wall_s", settings.budget_wall_s);
  if (const auto roles = json.find("roles"); roles != json.end() && roles->is_object()) {
    for (const auto& [role, model] : roles->items()) {
      if (!model.is_object()) {
        if (wrong.empty()) wrong = fmt::format("'roles.{}' is JSON of type {}", role, model.type_name());
        continue;
      }
      RoleModelSettings& read_model = settings.roles[role];
      read_model.provider = model.value("provider", "");
      read_model.base_url = model.value("base_url", "");
      read_model.model = model.value("model", "");
      if (const auto t = model.find("temperature"); t != model.end() && t->is_number()) read_model.temperature = t->get<double>();
    }
  }
  // A mistyped setting read as its default would change the run under a resume: refused instead.
  if (!wrong.empty()) return MakeError(ErrorKind::kDamaged, "{}", wrong);
  return settings;
}

namespace {

// One setter per accepted key; each checks the value's type. Numbers are range-checked before
// (cli/setting_ranges.h), the same rule as their flags.
using Setter = std::function<Status(const toml::node&, OptimizeSettings&)>;

template <typename T>
Setter Field(T OptimizeSettings::*field) {
  return [field](const toml::node& node, OptimizeSettings& settings) -> Status {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!node.is_string()) return MakeError(ErrorKind::kInvalidArgument, "must be a string");
      settings.*field = node.value<std::string>().value_or("");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!node.is_boolean()) return MakeError(ErrorKind::kInvalidArgument, "must be true or false");
      settings.*field = node.value<bool>().value_or(false);
    } else if constexpr (std::is_floating_point_v<T>) {
      auto value = node.value<double>();
      if (!value) return MakeError(ErrorKind::kInvalidArgument, "must be a number");
      settings.*field = *value;
    } else {
      auto value = node.value<int64_t>();
      if (!node.is_integer() || !value) return MakeError(ErrorKind::kInvalidArgument, "must be an integer");
      settings.*field = static_cast<T>(*value);
    }
    return {};
  };
}

template <typename T>
Setter OptionalField(std::optional<T> OptimizeSettings::*field) {
  return [field](const toml::node& node, OptimizeSettings& settings) -> Status {
    auto value = node.value<T>();
    if (!value) return MakeError(ErrorKind::kInvalidArgument, "must be a number");
    settings.*field = *value;
    return {};
  };
}

const std::map<std::string, std::map<std::string, Setter>>& Schema() {
  static const auto* schema = new std::map<std::string, std::map<std::string, Setter>>{
      {"llm",
       {{"provider", Field(&OptimizeSettings::provider)},
        {"base_url", Field(&OptimizeSettings::base_url)},
        {"model", Field(&OptimizeSettings::model)},
        {"max_concurrency", Field(&OptimizeSettings::parallel)},
        {"max_output_tokens", Field(&OptimizeSettings::max_output_tokens)},
        {"temperature", Field(&OptimizeSettings::temperature)},
        {"context_tokens", Field(&OptimizeSettings::context_tokens)},
        {"request_timeout_s", Field(&OptimizeSettings::request_timeout_s)},
        {"request_attempts", Field(&OptimizeSettings::request_attempts)},
        {"price_input_per_million", Field(&OptimizeSettings::price_input_per_million)},
        {"price_output_per_million", Field(&OptimizeSettings::price_output_per_million)},
        {"cache", Field(&OptimizeSettings::response_cache)}}},
      {"optimize",
       {{"task", Field(&OptimizeSettings::task)},
        {"backend", Field(&OptimizeSettings::backend)},
        {"strategy", Field(&OptimizeSettings::strategy)},
        {"islands", Field(&OptimizeSettings::islands)},
        {"overlap", Field(&OptimizeSettings::overlap)},
        {"knowledge", Field(&OptimizeSettings::knowledge)},
        {"profile_every", Field(&OptimizeSettings::profile_every)},
        {"max_candidates", Field(&OptimizeSettings::max_candidates)},
        {"kernel", Field(&OptimizeSettings::kernel)},
        {"format", Field(&OptimizeSettings::format)}}},
      {"budget",
       {{"tokens", OptionalField(&OptimizeSettings::budget_tokens)},
        {"dollars", OptionalField(&OptimizeSettings::budget_dollars)},
        {"wall_s", OptionalField(&OptimizeSettings::budget_wall_s)}}},
      {"eval",
       {{"arch", Field(&OptimizeSettings::arch)},
        {"seeds", Field(&OptimizeSettings::seeds)},
        {"timing_budget_s", Field(&OptimizeSettings::timing_budget_s)},
        {"timeout_ms", Field(&OptimizeSettings::eval_timeout_ms)},
        {"build_memory_gib", Field(&OptimizeSettings::build_memory_gib)},
        {"build_cpu_s", Field(&OptimizeSettings::build_cpu_s)}}},
  };
  return *schema;
}

bool LooksLikeKey(const std::string& key) {
  const bool ends_in_key = key.size() >= 4 && key.compare(key.size() - 4, 4, "_key") == 0;
  return key == "key" || key == "token" || key == "secret" || ends_in_key;
}

// [roles.planner], [roles.judge]...: provider, base_url, model and temperature of one role.
Status ApplyRoles(const std::filesystem::path& path, const toml::table& roles, OptimizeSettings& settings) {
  const auto& names = TeamRoleNames();
  for (const auto& [role_key, role_node] : roles) {
    const std::string role(role_key.str());
    if (std::find(names.begin(), names.end(), role) == names.end() || !role_node.is_table()) {
      return MakeError(ErrorKind::kInvalidArgument, "{}: unknown table [roles.{}] (known: [roles.planner], [roles.coder], "
                       "[roles.debugger], [roles.judge])", path.string(), role);
    }
    RoleModelSettings& model = settings.roles[role];
    for (const auto& [key_name, node] : *role_node.as_table()) {
      const std::string key(key_name.str());
      if (LooksLikeKey(key)) {
        return MakeError(ErrorKind::kInvalidArgument,
                         "{}: [roles.{}] {}: API keys are read only from the environment (OPENAI_API_KEY, "
                         "ANTHROPIC_API_KEY), never from files; remove it",
                         path.string(), role, key);
      }
      if (key == "temperature") {
        const auto value = node.value<double>();
        if (!node.is_number() || !value) {
          return MakeError(ErrorKind::kInvalidArgument, "{}: [roles.{}] temperature must be a number", path.string(), role);
        }
        if (const std::string wrong = CheckRange(*RangeOf("temperature"), fmt::format("{}", *value)); !wrong.empty()) {
          return MakeError(ErrorKind::kInvalidArgument, "{}: [roles.{}] temperature {}", path.string(), role, wrong);
        }
        model.temperature = *value;
        continue;
      }
      std::string* field = key == "provider" ? &model.provider : key == "base_url" ? &model.base_url
                         : key == "model"    ? &model.model    : nullptr;
      if (field == nullptr) {
        return MakeError(ErrorKind::kInvalidArgument, "{}: [roles.{}] has no key '{}' (known: provider, base_url, model, "
                         "temperature)", path.string(), role, key);
      }
      if (!node.is_string()) return MakeError(ErrorKind::kInvalidArgument, "{}: [roles.{}] {} must be a string", path.string(), role, key);
      *field = node.value<std::string>().value_or("");
    }
  }
  return {};
}

}  // namespace

std::filesystem::path ConfigFilePath(const std::string& config_flag) {
  if (!config_flag.empty()) return config_flag;
  std::error_code error;
  return std::filesystem::exists("ksmith.toml", error) ? std::filesystem::path("ksmith.toml") : std::filesystem::path();
}

Status ApplyConfigFile(const std::filesystem::path& path, OptimizeSettings& settings) {
  toml::table table;
  try {
    table = toml::parse_file(path.string());
  } catch (const toml::parse_error& error) {
    return MakeError(ErrorKind::kInvalidArgument, "{}:{}:{}: {}", path.string(), error.source().begin.line,
                     error.source().begin.column, error.description());
  }
  for (const auto& [section_key, section_node] : table) {
    const std::string section(section_key.str());
    // `ksmith serve`'s reward rule: its own reader checks it (server/reward.h).
    if (section == "reward" && section_node.is_table()) continue;
    if (section == "roles" && section_node.is_table()) {
      if (Status roles = ApplyRoles(path, *section_node.as_table(), settings); !roles.ok()) return roles;
      continue;
    }
    auto known = Schema().find(section);
    if (known == Schema().end() || !section_node.is_table()) {
      return MakeError(ErrorKind::kInvalidArgument, "{}: unknown table [{}] (known: [llm], [optimize], [budget], [eval], [roles.NAME], [reward])",
                       path.string(), section);
    }
    for (const auto& [key_name, node] : *section_node.as_table()) {
      const std::string key(key_name.str());
      if (LooksLikeKey(key)) {
        return MakeError(ErrorKind::kInvalidArgument,
                         "{}: [{}] {}: API keys are read only from the environment (OPENAI_API_KEY, "
                         "ANTHROPIC_API_KEY), never from files; remove it",
                         path.string(), section, key);
      }
      auto setter = known->second.find(key);
      if (setter == known->second.end()) {
        std::string names;
        for (const auto& [name, unused] : known->second) names += (names.empty() ? "" : ", ") + name;
        return MakeError(ErrorKind::kInvalidArgument, "{}: [{}] has no key '{}' (known: {})", path.string(), section,
                         key, names);
      }
      // Numbers follow the same rule, in the same words, as the flags (cli/setting_ranges.h).
      if (const SettingRange* range = RangeOf(key)) {
        const std::string text = node.is_number() ? fmt::format("{}", node.value<double>().value_or(0))
                                                  : (node.is_string() ? *node.value<std::string>() : "?");
        if (const std::string wrong = CheckRange(*range, text); !wrong.empty()) {
          return MakeError(ErrorKind::kInvalidArgument, "{}: [{}] {} {}", path.string(), section, key, wrong);
        }
      }
      if (auto status = setter->second(node, settings); !status.ok()) {
        return MakeError(ErrorKind::kInvalidArgument, "{}: [{}] {} {}", path.string(), section, key,
                         status.error().message);
      }
    }
  }
  return {};
}

}  // namespace ksmith
