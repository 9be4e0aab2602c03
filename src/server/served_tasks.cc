#include "server/served_tasks.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/hash.h"
#include "core/subprocess.h"

namespace ksmith {

ServedTasks::ServedTasks(TaskRegistry registry, std::filesystem::path cache_directory,
                         std::filesystem::path ksmith_executable)
    : registry_(std::move(registry)),
      imported_root_(std::move(cache_directory) / "served-tasks"),
      ksmith_(std::move(ksmith_executable)) {}

Result<std::shared_ptr<const Task>> ServedTasks::Find(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (const auto found = loaded_.find(name); found != loaded_.end()) return found->second;
  auto task = registry_.Find(name);
  if (!task.ok()) return task.error();
  auto shared = std::make_shared<const Task>(std::move(task.value()));
  loaded_[name] = shared;
  return shared;
}

Result<std::shared_ptr<const Task>> ServedTasks::FromReference(const std::string& reference_code) {
  // The hash names the folder and the problem file: 16 hex digits, nothing the client chose.
  const std::string hash = Sha256Hex(reference_code).substr(0, 16);
  const std::string key = "reference:" + hash;
  std::promise<Loaded> promise;
  std::unique_lock lock(mutex_);
  if (const auto found = loaded_.find(key); found != loaded_.end()) return found->second;
  if (const auto running = importing_.find(key); running != importing_.end()) {
    std::shared_future<Loaded> pending = running->second;
    lock.unlock();
    return pending.get();
  }
  importing_[key] = promise.get_future().share();
  lock.unlock();
  Loaded result = Import(hash, reference_code);
  lock.lock();
  if (result.ok()) loaded_[key] = *result;
  importing_.erase(key);  // a failed import is tried again by the next request
  lock.unlock();
  promise.set_value(result);
  return result;
}

ServedTasks::Loaded ServedTasks::Import(const std::string& hash, const std::string& reference_code) {
  const std::filesystem::path folder = imported_root_ / hash;
  const std::filesystem::path tasks = folder / "tasks";
  const std::string task_name = fmt::format("kb_l0_001_{}", hash);
  const std::filesystem::path task_folder = tasks / "kernelbench" / task_name;
  std::error_code error;
  if (!std::filesystem::exists(task_folder / "task.toml", error)) {
    // A folder left by an import that failed or was killed is imported again from scratch.
    std::filesystem::remove_all(folder, error);
    std::filesystem::create_directories(folder / "src", error);
    if (error) {
      return MakeError(ErrorKind::kIo, "cannot create {} for the reference's task: {}", folder.string(), error.message());
    }
    const std::filesystem::path problem = folder / "src" / fmt::format("1_{}.py", hash);
    if (Status written = WriteFileAtomic(problem, reference_code); !written.ok()) return written.error();
    SpawnOptions spawn;
    spawn.argv = {ksmith_.string(), "import", "kernelbench", problem.string(), "--out", tasks.string(), "--json", "--quiet"};
    spawn.inherit_environment = true;
    spawn.output_path = folder / "import.log";
    auto exit = RunCommand(spawn, std::chrono::seconds(kImportTimeoutS));
    if (!exit.ok()) return exit.error();
    auto log = ReadFile(folder / "import.log", size_t{1} << 20);
    // The report is stdout's JSON; a note on stderr may follow it in the same file.
    const std::string text = log.ok() ? *log : std::string();
    const size_t end = text.rfind('}');
    const nlohmann::json report =
        nlohmann::json::parse(end == std::string::npos ? std::string() : text.substr(0, end + 1), nullptr, false);
    std::string reason;
    if (report.is_object() && report.contains("problems") && report["problems"].is_array() &&
        !report["problems"].empty()) {
      const auto& first = report["problems"][0];
      if (first.value("status", std::string()) != "imported") {
        reason = first.value("reason", first.value("status", std::string("not imported")));
      }
    } else if (!exit->succeeded()) {
      reason = fmt::format("the importer ended with {}", exit->Describe());
    }
    if (!reason.empty() || !std::filesystem::exists(task_folder / "task.toml", error)) {
      std::filesystem::remove_all(folder, error);
      return MakeError(ErrorKind::kInvalidArgument, "reference_code could not be imported as a KernelBench problem: {}",
                       reason.empty() ? "the importer wrote no task" : reason);
    }
  }
  auto task = registry_.Find(task_folder.string());
  if (!task.ok()) return task.error();
  return std::shared_ptr<const Task>(std::make_shared<const Task>(std::move(task.value())));
}

}  // namespace ksmith
