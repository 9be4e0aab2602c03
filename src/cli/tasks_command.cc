#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct TasksFlags {
  bool json = false;
  std::string show_name;
  CLI::App* show = nullptr;
};

nlohmann::json TensorsJson(const std::vector<TensorSpec>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& tensor : tensors) {
    list.push_back({{"name", tensor.name}, {"dtype", DTypeName(tensor.dtype)}, {"shape", tensor.shape}});
  }
  return list;
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
                         {"directory", task.directory.string()}};
  // The CUDA form of the contract, for candidates (and prompts) that target the GPU.
  if (task.cuda) {
    json["cuda_signature"] = task.CudaDeclaration();
    json["cuda_eval_shape_count"] = task.cuda->eval_shapes.size();
  }
  return json;
}

int ListTasks(const TasksFlags& flags) {
  TaskRegistry registry(TaskRegistry::DefaultRoot());
  auto entries = registry.List();
  if (!entries.ok()) {
    PrintError(entries.error().message);
    return kExitInfra;
  }
  nlohmann::json list = nlohmann::json::array();
  std::string table = fmt::format("{:<14} {:<15} {}\n", "TASK", "CATEGORY", "SIGNATURE");
  int broken = 0;
  for (const auto& entry : *entries) {
    auto task = registry.Find(entry.directory.string());
    if (!task.ok()) {
      ++broken;
      list.push_back({{"name", entry.name}, {"error", task.error().message}});
      table += fmt::format("{:<14} {:<15} (invalid: {})\n", entry.name, entry.category, task.error().message);
      continue;
    }
    list.push_back({{"name", task->name}, {"category", task->category}, {"level", task->level},
                    {"signature", task->signature.Declaration()}});
    table += fmt::format("{:<14} {:<15} {}\n", task->name, task->category, task->signature.Declaration());
  }
  std::fputs(flags.json ? (list.dump(2) + "\n").c_str() : table.c_str(), stdout);
  return broken > 0 ? kExitInfra : kExitOk;
}

int ShowTask(const TasksFlags& flags) {
  TaskRegistry registry(TaskRegistry::DefaultRoot());
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

}  // namespace

CommandHandler AddTasksCommand(CLI::App& app) {
  auto flags = std::make_shared<TasksFlags>();
  app.add_flag("--json", flags->json, "Print JSON");
  flags->show = app.add_subcommand("show", "Show one task: description, signature, dev shapes, cost model");
  flags->show->add_option("name", flags->show_name, "Task name")->required();
  flags->show->add_flag("--json", flags->json, "Print JSON");
  return [flags] { return flags->show->parsed() ? ShowTask(*flags) : ListTasks(*flags); };
}

}  // namespace ksmith
