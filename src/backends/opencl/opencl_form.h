// The OpenCL candidate contract as text: OpenCL C `__kernel` functions whose arguments are the
// task's signature (pointers as `__global` buffers, int64_t as `long`), launched by the worker in
// the order the source declares with `// @launch` lines:
//
//   // @launch row_softmax global=(rows*THREADS) local=(THREADS)
//
// Each size is an integer expression over the signature's integer parameters and the source's
// integer `#define`s (the tuner's knobs); a global size is rounded up to a multiple of its local
// size. The worker owns every host call (buffers, arguments, launches, transfers): a candidate
// has no host code, so it cannot start threads, open files or time itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "task/expression.h"
#include "task/task.h"

namespace ksmith {

/// One `// @launch` line.
struct OpenclLaunch {
  std::string kernel;
  std::vector<std::string> global;  // 1 to 3 expressions
  std::vector<std::string> local;   // as many as `global`

  nlohmann::json ToJson() const;
  static Result<OpenclLaunch> FromJson(const nlohmann::json& json);
};

/// What the worker needs to run a built program: its launches in order, the names of the
/// signature's parameters (an expression's names) and the source's integer macros.
struct OpenclPlan {
  std::vector<OpenclLaunch> launches;
  std::vector<std::string> parameter_names;
  DimValues macros;

  nlohmann::json ToJson() const;
  static Result<OpenclPlan> FromJson(const nlohmann::json& json);
};

/// Where a built program's plan is kept: beside its binary.
std::filesystem::path OpenclPlanPath(const std::filesystem::path& binary);

/// One launch's sizes for one case: global rounded up to a multiple of local.
struct LaunchSizes {
  std::vector<size_t> global;
  std::vector<size_t> local;
};

/// The source's `// @launch` lines, in order. Errors name the line and what is wrong; a source
/// without any is an error that shows the form.
Result<std::vector<OpenclLaunch>> ParseLaunches(std::string_view source);

/// Object-like `#define NAME <integer>` lines (decimal or hex, with or without a u/l suffix; the
/// first definition of each name).
DimValues IntegerMacros(std::string_view source);

/// The plan of `source` for `task`: its launches, the task's parameter names, its macros.
Result<OpenclPlan> MakePlan(std::string_view source, const Task& task);

/// The sizes of `launch` where the signature's parameters have `scalars` (one per parameter, in
/// order; pointers' entries unused). A global size below 1 (a case with nothing to do) launches
/// one work-group. Errors: an expression that does not evaluate, a local size that is not
/// positive, a work-group of more than `max_work_group_size` items (0: no limit).
Result<LaunchSizes> ResolveLaunch(const OpenclLaunch& launch, const OpenclPlan& plan, const std::vector<int64_t>& scalars,
                                  size_t max_work_group_size);

/// The OpenCL C type of a signature's base type ("float" -> "float", "int64_t" -> "long");
/// empty where OpenCL C has none.
std::string OpenclType(std::string_view base_type);

/// The `__kernel` declaration every launched kernel must have, named `kernel`.
std::string KernelDeclaration(const Task& task, std::string_view kernel);

/// Whether every parameter of `task`'s signature maps to an OpenCL C argument; the reason
/// where not.
Status SignatureMapsToOpencl(const Task& task);

}  // namespace ksmith
