#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "core/clock.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "eval/task_check.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct TasksFlags {
  bool json = false;
  std::string show_name;
  CLI::App* show = nullptr;
  CLI::App* check = nullptr;
  std::vector<std::string> check_names;
  bool gpu = false, no_gpu = false, quiet = false;
};

// `tasks check` exits 1 when a task is flagged: the command did its job and found a problem.
constexpr int kExitFlagged = 1;

constexpr const char* kCheckHelp = R"(Checks, on the dev shapes and the eval shapes of at most 2^20 elements per tensor and 5e7 flops,
under every distribution, 2 seeds each, with the task's CPU reference and the verdict's comparison:
  near_constant_output   an output's standard deviation is at most the elementwise tolerance times
                         its rms on every case (a 1-element output: across the cases), so a
                         constant output would pass.
  trivial_output_passes  the all-zeros output, or the output's mean in every element, passes on
                         every case of some shape (or on most cases of the task).
  input_ignored          redrawing one input alone leaves every output within tolerance of the
                         original on every case: the task barely depends on that input.
  output_too_small       an output's rms is below the comparison's magnitude floor (eps x rms of
                         the inputs) on every case of some shape: the floor, not the output, then
                         sets the tolerance's scale, and the output sits within rounding noise.
  baseline_wrong         the task's CPU baseline (what speedups are measured against), run on
                         the same shapes and judged as a candidate is, gets a case wrong.
  GPU cross-check        with a GPU and a [cuda] table, the GPU reference (reference.cu) must agree
                         with the CPU one to 1e-9 relative on the dev and small [cuda] eval shapes.
Cases whose right answer is itself trivial (exact zeros, one value repeated) are left out.
Findings name eval shapes: this is a tool for task authors.
Exit status: 0 every task OK, 1 some task flagged (or its files do not load or compile), 2 usage
error (unknown task), 3 this machine cannot run the checks (no compiler; --gpu without a GPU).)";

nlohmann::json TensorsJson(const std::vector<TensorSpec>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& tensor : tensors) {
    list.push_back({{"name", tensor.name}, {"dtype", DTypeName(tensor.dtype)}, {"shape", tensor.shape}});
  }
  return list;
}

// The backends that have a version of `task`: each declares one with its [baseline.<backend>].
std::vector<std::string> TaskBackends(const Task& task) {
  std::vector<std::string> backends;
  for (const auto& name : BackendRegistry::Global().Names()) {
    if (task.baselines.contains(name)) backends.push_back(name);
  }
  return backends;
}

// Eval and bench shapes are hidden by design: only their count is shown.
nlohmann::json TaskJson(const Task& task) {
  nlohmann::json distributions = nlohmann::json::array();
  for (auto distribution : task.distributions) distributions.push_back(DistributionName(distribution));
  nlohmann::json dev_shapes = nlohmann::json::array();
  for (const auto& shape : task.dev_shapes) dev_shapes.push_back(shape);
  nlohmann::json baselines = nlohmann::json::object();
  for (const auto& [backend, baseline] : task.baselines) baselines[backend] = baseline.description;
  nlohmann::json json = {{"name", task.name},
                         {"category", task.category},
                         {"level", task.level},
                         {"description", task.description},
                         {"pytorch", task.pytorch},
                         {"signature", task.signature.Declaration()},
                         {"dims", task.dims},
                         {"inputs", TensorsJson(task.inputs)},
                         {"outputs", TensorsJson(task.outputs)},
                         {"dev_shapes", dev_shapes},
                         {"eval_shape_count", task.eval_shapes.size()},
                         {"distributions", distributions},
                         {"flops", task.flops_expression},
                         {"bytes", task.bytes_expression},
                         {"allowed_libraries", task.allowed_libraries},
                         {"baselines", baselines},
                         {"backends", TaskBackends(task)},
                         {"directory", task.directory.string()}};
  // The CUDA form of the contract, for candidates (and prompts) that target the GPU.
  if (task.cuda) {
    json["cuda_signature"] = task.CudaDeclaration();
    json["cuda_eval_shape_count"] = task.cuda->eval_shapes.size();
  }
  return json;
}

int ListTasks(const TasksFlags& flags) {
  TaskRegistry registry = TaskRegistry::Default();
  auto entries = registry.List();
  if (!entries.ok()) {
    PrintError(entries.error().message);
    return kExitInfra;
  }
  nlohmann::json list = nlohmann::json::array();
  // Columns as wide as their longest entry, so that long names (KernelBench's) keep them apart.
  size_t name_width = 4;
  size_t category_width = 8;
  for (const auto& entry : *entries) {
    name_width = std::max(name_width, entry.name.size());
    category_width = std::max(category_width, entry.category.size());
  }
  std::string table =
      fmt::format("{:<{}}  {:<{}}  {:<15}  {}\n", "TASK", name_width, "CATEGORY", category_width, "BACKENDS", "SIGNATURE");
  int broken = 0;
  for (const auto& entry : *entries) {
    auto task = registry.Find(entry.directory.string());
    if (!task.ok()) {
      ++broken;
      list.push_back({{"name", entry.name}, {"error", task.error().message}});
      table += fmt::format("{:<{}}  {:<{}}  (invalid: {})\n", entry.name, name_width, entry.category, category_width,
                           task.error().message);
      continue;
    }
    const auto backends = TaskBackends(*task);
    list.push_back({{"name", task->name}, {"category", task->category}, {"level", task->level},
                    {"backends", backends}, {"signature", task->signature.Declaration()}});
    table += fmt::format("{:<{}}  {:<{}}  {:<15}  {}\n", task->name, name_width, task->category, category_width,
                         fmt::format("{}", fmt::join(backends, ",")), task->signature.Declaration());
  }
  std::fputs(flags.json ? (list.dump(2) + "\n").c_str() : table.c_str(), stdout);
  return broken > 0 ? kExitInfra : kExitOk;
}

int ShowTask(const TasksFlags& flags) {
  TaskRegistry registry = TaskRegistry::Default();
  auto task = registry.Find(flags.show_name);
  if (!task.ok()) {
    PrintError(task.error().message);
    return task.error().kind == ErrorKind::kNotFound ? kExitUsage : kExitInfra;
  }
  const nlohmann::json json = TaskJson(*task);
  if (flags.json) {
    std::fputs((json.dump(2) + "\n").c_str(), stdout);
    return kExitOk;
  }
  std::string text = fmt::format("{} ({}, level {})\n\n{}\n\n", task->name, task->category,
                                 task->level, task->description);
  if (!task->pytorch.empty()) text += "PyTorch:\n  " + task->pytorch + "\n\n";
  text += "Signature:\n  " + task->signature.Declaration() + "\n";
  if (task->cuda) text += "CUDA signature:\n  " + task->CudaDeclaration() + "\n";
  text += "\n";
  for (const auto& [title, tensors] : {std::pair{"Inputs", &task->inputs}, {"Outputs", &task->outputs}}) {
    text += std::string(title) + ":\n";
    for (const auto& tensor : *tensors) {
      std::string shape;
      for (const auto& dim : tensor.shape) shape += (shape.empty() ? "" : ", ") + dim;
      text += fmt::format("  {} {}[{}]\n", DTypeName(tensor.dtype), tensor.name, shape);
    }
  }
  text += "Dev shapes:\n";
  for (const auto& shape : task->dev_shapes) text += "  " + task->FormatShape(shape) + "\n";
  text += fmt::format("Hidden eval shapes: {}", task->eval_shapes.size());
  text += task->cuda ? fmt::format(" (CUDA: {})\n", task->cuda->eval_shapes.size()) : "\n";
  text += fmt::format("Cost: flops = {}, minimum bytes = {}\n", task->flops_expression, task->bytes_expression);
  for (const auto& [backend, baseline] : task->baselines) {
    text += fmt::format("Baseline ({}): {}\n", backend, baseline.description);
  }
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

// Every backend's cross-check of a task's own reference on its device (cuda: reference.cu on the
// GPU): "skipped: ..." where this machine cannot run one (a failure with --gpu, which asks for it).
class DeviceCrossChecks {
 public:
  DeviceCrossChecks(bool wanted, bool required, const std::filesystem::path& cache_directory) : required_(required) {
    if (!wanted) {
      why_not_ = "--no-gpu";
      return;
    }
    for (const auto& name : BackendRegistry::Global().Names()) {
      const auto entry = BackendRegistry::Global().Find(name);
      if (entry && entry->cross_check) checks_.emplace_back(name, entry->cross_check(cache_directory));
    }
    if (checks_.empty()) why_not_ = "no backend of this build runs a device reference";
    for (const auto& [name, check] : checks_) {
      if (const std::string why = check->WhyNot(); !why.empty()) why_not_ = why;
    }
  }

  /// Empty when every cross-check can run here (--gpu asks for all of them).
  const std::string& why_not() const { return why_not_; }

  std::string Check(const Task& task, KernelEntry cpu_reference) {
    if (checks_.empty()) return Unavailable();
    std::vector<std::string> results;
    std::string named;
    for (const auto& [name, check] : checks_) {
      std::string result = check->WhyNot().empty() ? check->Check(task, cpu_reference) : "";
      if (result.empty()) result = Unavailable(check->WhyNot());
      named += (named.empty() ? "" : "; ") + name + ": " + result;
      results.push_back(std::move(result));
    }
    // One word where every backend says the same (what TaskCheckReport::ok reads); otherwise
    // each backend's result, named, which is never "agreed" and so flags the task.
    const auto all = [&results](const char* prefix) {
      return std::all_of(results.begin(), results.end(), [prefix](const std::string& result) { return result.starts_with(prefix); });
    };
    if (results.size() == 1 || all("agreed")) return results.front();
    if (all("skipped")) return "skipped: " + named;
    return named;
  }

 private:
  std::string Unavailable(const std::string& why) const { return (required_ ? "failed: " : "skipped: ") + why; }
  std::string Unavailable() const { return Unavailable(why_not_); }

  bool required_;
  std::string why_not_;
  std::vector<std::pair<std::string, std::unique_ptr<ReferenceCrossCheck>>> checks_;
};

std::string RenderCheck(const TaskCheckReport& report, size_t name_width) {
  const char* result = report.ok() ? "OK" : "FLAGGED";
  std::string text = fmt::format("{:<{}} {:<8} {:>6}  {}\n", report.task, name_width, result, report.cases,
                                 report.gpu_crosscheck.substr(0, report.gpu_crosscheck.find('\n')));
  if (!report.error.empty()) text += "    error: " + report.error + "\n";
  for (const auto& finding : report.findings) {
    text += fmt::format("    {}: {} '{}' at {} ({}): {}\n", finding.check, finding.about_input() ? "input" : "output",
                        finding.tensor, finding.shape, finding.distribution, finding.detail);
  }
  return text;
}

int CheckTasks(const TasksFlags& flags) {
  TaskRegistry registry = TaskRegistry::Default();
  std::vector<std::string> names = flags.check_names;
  if (names.empty()) {
    auto entries = registry.List();
    if (!entries.ok()) {
      PrintError(entries.error().message);
      return kExitInfra;
    }
    for (const auto& entry : *entries) names.push_back(entry.directory.string());
  }
  // Every named task is loaded before any is checked, so that a typo fails at once; a task file
  // that does not load is reported as that task's error, and the others are still checked.
  std::vector<Result<Task>> tasks;
  for (const auto& name : names) {
    auto task = registry.Find(name);
    if (!task.ok() && task.error().kind == ErrorKind::kNotFound) {
      PrintError(task.error().message);
      return kExitUsage;
    }
    tasks.push_back(std::move(task));
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) {
    PrintError(cache.error().message);
    return kExitInfra;
  }
  auto compiler = CpuCompiler::Create(*cache);
  if (!compiler.ok()) {
    PrintError(compiler.error().message);
    return kExitInfra;
  }
  DeviceCrossChecks gpu(!flags.no_gpu, flags.gpu, *cache);
  if (flags.gpu && !gpu.why_not().empty()) {
    PrintError("--gpu: cannot cross-check the GPU references here: " + gpu.why_not());
    return kExitInfra;
  }

  const auto start = SteadyClock::now();
  nlohmann::json list = nlohmann::json::array();
  // A task that does not load is named after its folder.
  const auto name_of = [&](size_t i) {
    return tasks[i].ok() ? tasks[i]->name : std::filesystem::path(names[i]).filename().string();
  };
  size_t name_width = 4;
  for (size_t i = 0; i < tasks.size(); ++i) name_width = std::max(name_width, name_of(i).size());
  std::string table = fmt::format("{:<{}} {:<8} {:>6}  {}\n", "TASK", name_width, "RESULT", "CASES", "GPU CROSS-CHECK");
  int flagged = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto task_start = SteadyClock::now();
    if (!flags.quiet) std::fprintf(stderr, "  ... [%zu/%zu] %s\n", i + 1, tasks.size(), name_of(i).c_str());
    TaskCheckReport report;
    report.task = name_of(i);
    if (!tasks[i].ok()) {
      report.error = tasks[i].error().message;
    } else if (auto reference = LoadCpuReference(*tasks[i], *compiler); !reference.ok()) {
      report.error = reference.error().message;
    } else {
      report = CheckTaskReference(*tasks[i], reference->entry, TaskCheckOptions{});
      if (auto baseline = LoadCpuBaseline(*tasks[i], *compiler); !baseline.ok()) {
        report.error = baseline.error().message;
      } else {
        auto wrong = CheckTaskBaseline(*tasks[i], reference->entry, baseline->entry, TaskCheckOptions{}, baseline->finish);
        report.findings.insert(report.findings.end(), wrong.begin(), wrong.end());
      }
      report.gpu_crosscheck = gpu.Check(*tasks[i], reference->entry);
    }
    if (!flags.quiet) {
      std::fprintf(stderr, "      %s: %s in %.1f s\n", report.task.c_str(), report.ok() ? "OK" : "flagged",
                   SecondsSince(task_start));
    }
    flagged += report.ok() ? 0 : 1;
    list.push_back(report.ToJson());
    table += RenderCheck(report, name_width);
  }
  table += fmt::format("{} task{} checked in {:.1f} s: {} OK, {} flagged\n", tasks.size(),
                       tasks.size() == 1 ? "" : "s", SecondsSince(start), tasks.size() - flagged, flagged);
  std::fputs(flags.json ? (list.dump(2) + "\n").c_str() : table.c_str(), stdout);
  return flagged > 0 ? kExitFlagged : kExitOk;
}

}  // namespace

CommandHandler AddTasksCommand(CLI::App& app) {
  auto flags = std::make_shared<TasksFlags>();
  app.add_flag("--json", flags->json, "Print JSON");
  flags->show = app.add_subcommand("show", "Show one task: description, signature, dev shapes, cost model");
  flags->show->add_option("name", flags->show_name, "Task name")->required();
  flags->show->add_flag("--json", flags->json, "Print JSON");
  flags->check = app.add_subcommand(
      "check", "Check that tasks can tell a right kernel from a wrong one: degenerate outputs, ignored inputs, "
               "and the GPU reference against the CPU one");
  flags->check->add_option("names", flags->check_names, "Tasks to check, by name or folder (default: every task)");
  flags->check->add_flag("--json", flags->json, "Print JSON: one object per task");
  auto* gpu = flags->check->add_flag("--gpu", flags->gpu, "Require the GPU cross-check (exit 3 when it cannot run here)");
  flags->check->add_flag("--no-gpu", flags->no_gpu, "Skip the GPU cross-check")->excludes(gpu);
  flags->check->add_flag("--quiet,-q", flags->quiet, "No progress lines on stderr");
  flags->check->footer(kCheckHelp);
  return [flags] {
    if (flags->check->parsed()) return CheckTasks(*flags);
    return flags->show->parsed() ? ShowTask(*flags) : ListTasks(*flags);
  };
}

}  // namespace ksmith
