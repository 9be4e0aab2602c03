#include "backends/opencl/opencl_form.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/strings.h"

namespace ksmith {
namespace {

constexpr std::string_view kLaunchTag = "@launch";
constexpr std::string_view kLaunchForm =
    "// @launch <kernel> global=(<size>[, <size>[, <size>]]) local=(<size>[, ...])";

// "a*b, c" -> {"a*b", "c"}: commas split only outside parentheses; an empty size stays empty (the
// caller refuses it).
std::vector<std::string> SplitSizes(std::string_view list) {
  std::vector<std::string> sizes;
  std::string current;
  int depth = 0;
  for (char c : list) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      sizes.push_back(std::string(Trim(current)));
      current.clear();
      continue;
    }
    current += c;
  }
  sizes.push_back(std::string(Trim(current)));
  return sizes;
}

// The parenthesised list after `key=` in `text`, without its outer parentheses.
Result<std::string> SizeList(std::string_view text, std::string_view key) {
  const std::string marker = std::string(key) + "=(";
  const size_t start = text.find(marker);
  if (start == std::string_view::npos) return MakeError(ErrorKind::kInvalidArgument, "no {}=(...)", key);
  int depth = 1;
  for (size_t i = start + marker.size(); i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return std::string(text.substr(start + marker.size(), i - start - marker.size()));
  }
  return MakeError(ErrorKind::kInvalidArgument, "{}=( is not closed", key);
}

bool IsIdentifierText(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

nlohmann::json OpenclLaunch::ToJson() const { return {{"kernel", kernel}, {"global", global}, {"local", local}}; }

Result<OpenclLaunch> OpenclLaunch::FromJson(const nlohmann::json& json) {
  try {
    return OpenclLaunch{json.at("kernel").get<std::string>(), json.at("global").get<std::vector<std::string>>(),
                        json.at("local").get<std::vector<std::string>>()};
  } catch (const nlohmann::json::exception& error) {
    return MakeError(ErrorKind::kInvalidArgument, "malformed launch: {}", error.what());
  }
}

nlohmann::json OpenclPlan::ToJson() const {
  nlohmann::json launches_json = nlohmann::json::array();
  for (const auto& launch : launches) launches_json.push_back(launch.ToJson());
  nlohmann::json macros_json = nlohmann::json::object();
  for (const auto& [name, value] : macros) macros_json[name] = value;
  return {{"launches", launches_json}, {"parameters", parameter_names}, {"macros", macros_json}};
}

Result<OpenclPlan> OpenclPlan::FromJson(const nlohmann::json& json) {
  OpenclPlan plan;
  try {
    for (const auto& launch : json.at("launches")) {
      auto parsed = OpenclLaunch::FromJson(launch);
      if (!parsed.ok()) return parsed.error();
      plan.launches.push_back(std::move(parsed.value()));
    }
    plan.parameter_names = json.at("parameters").get<std::vector<std::string>>();
    for (const auto& [name, value] : json.at("macros").items()) plan.macros[name] = value.get<int64_t>();
  } catch (const nlohmann::json::exception& error) {
    return MakeError(ErrorKind::kInvalidArgument, "malformed OpenCL plan: {}", error.what());
  }
  return plan;
}

std::filesystem::path OpenclPlanPath(const std::filesystem::path& binary) {
  return std::filesystem::path(binary.string() + ".plan.json");
}

Result<std::vector<OpenclLaunch>> ParseLaunches(std::string_view source) {
  std::vector<OpenclLaunch> launches;
  size_t line_number = 0;
  for (const auto& raw : SplitLines(source)) {
    ++line_number;
    const std::string_view line = Trim(raw);
    if (!line.starts_with("//")) continue;
    const std::string_view comment = Trim(line.substr(2));
    if (!comment.starts_with(kLaunchTag)) continue;
    const std::string_view rest = Trim(comment.substr(kLaunchTag.size()));
    const size_t name_end = rest.find_first_of(" \t");
    OpenclLaunch launch;
    launch.kernel = std::string(rest.substr(0, name_end));
    auto fail = [&](const std::string& what) {
      return MakeError(ErrorKind::kInvalidArgument, "line {}: {}; write {}", line_number, what, kLaunchForm);
    };
    if (!IsIdentifierText(launch.kernel)) return fail(fmt::format("'{}' is not a kernel name", launch.kernel));
    const std::string_view sizes = name_end == std::string_view::npos ? std::string_view() : rest.substr(name_end);
    auto global = SizeList(sizes, "global");
    if (!global.ok()) return fail(global.error().message);
    auto local = SizeList(sizes, "local");
    if (!local.ok()) return fail(local.error().message);
    launch.global = SplitSizes(*global);
    launch.local = SplitSizes(*local);
    if (launch.global.size() > 3 || launch.global.size() != launch.local.size() ||
        std::any_of(launch.global.begin(), launch.global.end(), [](const auto& size) { return size.empty(); }) ||
        std::any_of(launch.local.begin(), launch.local.end(), [](const auto& size) { return size.empty(); })) {
      return fail("global and local need the same number of sizes, 1 to 3");
    }
    launches.push_back(std::move(launch));
  }
  if (launches.empty()) {
    return MakeError(ErrorKind::kInvalidArgument,
                     "no `// @launch` line: say which kernels the worker launches, in order, as {}", kLaunchForm);
  }
  return launches;
}

DimValues IntegerMacros(std::string_view source) {
  // `#define WG 256`, `(16)`, `0x100`, `256u`, with a comment after it.
  static const std::regex kDefine(
      R"(^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)\s+\(?\s*(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))[uUlL]*\s*\)?\s*(//.*|/\*.*\*/\s*)?$)");
  DimValues macros;
  for (const auto& line : SplitLines(source)) {
    std::smatch match;
    const std::string text(line);
    if (!std::regex_match(text, match, kDefine)) continue;
    try {
      macros.emplace(match[1].str(), std::stoll(match[2].str(), nullptr, 0));
    } catch (const std::exception&) {
      // out of range: not a size anyone launches with
    }
  }
  return macros;
}

Result<OpenclPlan> MakePlan(std::string_view source, const Task& task) {
  auto launches = ParseLaunches(source);
  if (!launches.ok()) return launches.error();
  OpenclPlan plan;
  plan.launches = std::move(launches.value());
  for (const auto& parameter : task.signature.parameters) plan.parameter_names.push_back(parameter.name);
  plan.macros = IntegerMacros(source);
  return plan;
}

Result<LaunchSizes> ResolveLaunch(const OpenclLaunch& launch, const OpenclPlan& plan, const std::vector<int64_t>& scalars,
                                  size_t max_work_group_size) {
  DimValues names = plan.macros;
  for (size_t i = 0; i < plan.parameter_names.size() && i < scalars.size(); ++i) {
    names[plan.parameter_names[i]] = scalars[i];
  }
  LaunchSizes sizes;
  size_t group = 1;
  for (size_t axis = 0; axis < launch.global.size(); ++axis) {
    auto local = EvaluateExpression(launch.local[axis], names);
    if (!local.ok()) return MakeError(ErrorKind::kInvalidArgument, "{}'s local size '{}': {}", launch.kernel, launch.local[axis], local.error().message);
    auto global = EvaluateExpression(launch.global[axis], names);
    if (!global.ok()) return MakeError(ErrorKind::kInvalidArgument, "{}'s global size '{}': {}", launch.kernel, launch.global[axis], global.error().message);
    if (*local <= 0) return MakeError(ErrorKind::kInvalidArgument, "{}'s local size '{}' is {}, not positive", launch.kernel, launch.local[axis], *local);
    // A case with nothing to do (a zero dim) launches one group; the kernel's own bounds decide.
    const int64_t wanted = std::max<int64_t>(*global, 1);
    sizes.local.push_back(static_cast<size_t>(*local));
    sizes.global.push_back(static_cast<size_t>((wanted + *local - 1) / *local * *local));
    group *= static_cast<size_t>(*local);
  }
  if (max_work_group_size > 0 && group > max_work_group_size) {
    return MakeError(ErrorKind::kInvalidArgument, "{}'s work-group of {} items exceeds this device's {}", launch.kernel, group,
                     max_work_group_size);
  }
  return sizes;
}

std::string OpenclType(std::string_view base_type) {
  if (base_type == "float") return "float";
  if (base_type == "double") return "double";
  if (base_type == "int64_t") return "long";
  if (base_type == "int32_t" || base_type == "int") return "int";
  if (base_type == "uint16_t") return "ushort";
  if (base_type == "_Float16") return "half";
  return {};
}

Status SignatureMapsToOpencl(const Task& task) {
  for (const auto& parameter : task.signature.parameters) {
    if (OpenclType(parameter.base_type).empty()) {
      return MakeError(ErrorKind::kInvalidArgument, "parameter '{}' of type {} has no OpenCL C type", parameter.name,
                       parameter.base_type);
    }
    if (!parameter.is_pointer && parameter.base_type != "int64_t") {
      return MakeError(ErrorKind::kInvalidArgument, "scalar parameter '{}' is {}: only int64_t scalars are passed",
                       parameter.name, parameter.base_type);
    }
  }
  return {};
}

std::string KernelDeclaration(const Task& task, std::string_view kernel) {
  std::vector<std::string> arguments;
  for (const auto& parameter : task.signature.parameters) {
    const std::string type = OpenclType(parameter.base_type);
    arguments.push_back(parameter.is_pointer
                            ? fmt::format("__global {}{}* {}", parameter.is_const ? "const " : "", type, parameter.name)
                            : fmt::format("{} {}", type, parameter.name));
  }
  return fmt::format("__kernel void {}({})", kernel, fmt::join(arguments, ", "));
}

}  // namespace ksmith
