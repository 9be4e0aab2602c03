#include "kernelbench/importer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "core/files.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "eval/task_check.h"
#include "kernelbench/calibrate.h"
#include "kernelbench/scripts.h"
#include "kernelbench/task_writer.h"
#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr auto kTorchProbeTimeout = std::chrono::seconds(90);

int LevelOfFolder(const fs::path& folder) {
  std::smatch match;
  const std::string name = folder.filename().string();
  static const std::regex pattern("^level(\\d+)$");
  return std::regex_match(name, match, pattern) ? std::stoi(match[1]) : 0;
}

int ProblemId(const fs::path& file) {
  const std::string stem = file.stem().string();
  size_t digits = 0;
  while (digits < stem.size() && std::isdigit(static_cast<unsigned char>(stem[digits]))) ++digits;
  return digits > 0 && digits < 9 ? std::stoi(stem.substr(0, digits)) : -1;
}

// "23", "40-45" or a file stem ("23_Softmax").
bool Wanted(const fs::path& file, const std::vector<std::string>& problems) {
  if (problems.empty()) return true;
  const int id = ProblemId(file);
  for (const auto& item : problems) {
    if (item == file.stem().string() || item == file.filename().string()) return true;
    const size_t dash = item.find('-');
    try {
      const int low = std::stoi(item.substr(0, dash));
      const int high = dash == std::string::npos ? low : std::stoi(item.substr(dash + 1));
      if (id >= low && id <= high) return true;
    } catch (const std::exception&) {
    }
  }
  return false;
}

std::vector<fs::path> PythonFiles(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) {
    return std::pair{ProblemId(a), a.filename()} < std::pair{ProblemId(b), b.filename()};
  });
  return files;
}

void Skip(json& result, const std::string& reason, const fs::path& folder) {
  result["status"] = "skipped";
  result["reason"] = reason;
  result.erase("folder");
  std::error_code error;
  if (!folder.empty()) fs::remove_all(folder, error);
}

// Writes the imported problem's task, checks that ksmith loads and builds it, and sets its
// accumulation from torch's own float32 error (CalibrateAccumulation). A problem that fails any
// of these is skipped with the reason, its folder removed.
void WriteCheckedTask(json& result, const fs::path& out, const CpuCompiler& compiler) {
  if (result.value("status", std::string()) != "imported") return;
  json spec = std::move(result["spec"]);
  result.erase("spec");
  result["name"] = spec.at("name");
  result["analysis_s"] = spec.value("analysis_s", 0.0);
  auto folder = WriteKernelBenchTask(spec, out);
  if (!folder.ok()) return Skip(result, "writing its task failed: " + folder.error().message, {});
  result["folder"] = folder->string();
  auto task = LoadTask(*folder);
  if (!task.ok()) return Skip(result, "its generated task does not load: " + task.error().message, *folder);
  auto reference = LoadCpuReference(*task, compiler);
  if (!reference.ok()) return Skip(result, "its reference does not build: " + reference.error().message, *folder);
  auto baseline = LoadCpuBaseline(*task, compiler);
  if (!baseline.ok()) return Skip(result, "its baseline does not build: " + baseline.error().message, *folder);
  const auto started = std::chrono::steady_clock::now();
  auto calibration = CalibrateAccumulation(*task, reference->entry, baseline->entry, baseline->finish);
  if (!calibration.ok()) return Skip(result, calibration.error().message, *folder);
  result["accumulation"] = calibration->accumulation;
  result["calibration_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  spec["accumulation"] = calibration->accumulation;
  if (!calibration->dropped_shapes.empty()) {
    json dropped = json::array();
    for (const std::string list : {"eval", "dev", "cuda"}) {
      if (list == "cuda" && !spec.contains("cuda")) continue;  // operator[] would add it
      json& shapes = list == "cuda" ? spec["cuda"]["eval"] : spec["shapes"][list];
      json kept = json::array();
      for (const auto& shape : shapes) {
        const bool drop = std::find(calibration->dropped_shapes.begin(), calibration->dropped_shapes.end(),
                                    shape.get<DimValues>()) != calibration->dropped_shapes.end();
        if (!drop) kept.push_back(shape);
        if (drop && list == "eval") dropped.push_back(shape);
      }
      shapes = kept.empty() ? json::array({spec["shapes"]["eval"].front()}) : kept;
    }
    result["dropped_shapes"] = dropped;
    spec["dropped_shapes"] = dropped;  // kept in kernelbench.json: why the task lacks them
  }
  if (auto rewritten = WriteKernelBenchTask(spec, out); !rewritten.ok()) {
    return Skip(result, "writing its task failed: " + rewritten.error().message, *folder);
  }
}

}  // namespace

Result<std::vector<KernelBenchProblem>> FindKernelBenchProblems(const KernelBenchImportOptions& options) {
  std::error_code error;
  if (!fs::exists(options.source, error)) {
    return MakeError(ErrorKind::kNotFound, "{} does not exist; give a KernelBench checkout, a levelN folder or a "
                     "problem file", options.source.string());
  }
  const std::set<int> levels(options.levels.begin(), options.levels.end());
  const int only_level = levels.size() == 1 ? *levels.begin() : 0;
  std::vector<KernelBenchProblem> problems;
  auto add_folder = [&](const fs::path& folder, int level) {
    if (!levels.empty() && level != 0 && !levels.contains(level)) return;
    for (const auto& file : PythonFiles(folder)) {
      if (Wanted(file, options.problems)) problems.push_back({file, level != 0 ? level : only_level});
    }
  };
  if (fs::is_regular_file(options.source, error)) {
    const int level = LevelOfFolder(options.source.parent_path());
    problems.push_back({options.source, level != 0 ? level : only_level});
    return problems;
  }
  if (LevelOfFolder(options.source) != 0) {
    add_folder(options.source, LevelOfFolder(options.source));
  } else {
    std::vector<std::pair<int, fs::path>> level_folders;
    for (const auto& entry : fs::directory_iterator(options.source, error)) {
      if (entry.is_directory() && LevelOfFolder(entry.path()) != 0) {
        level_folders.emplace_back(LevelOfFolder(entry.path()), entry.path());
      }
    }
    std::sort(level_folders.begin(), level_folders.end());
    for (const auto& [level, folder] : level_folders) add_folder(folder, level);
    if (level_folders.empty()) add_folder(options.source, 0);
  }
  if (problems.empty()) {
    return MakeError(ErrorKind::kNotFound, "no problem files (*.py) under {}{}; give a KernelBench checkout (with "
                     "level1/, level2/, ...), a levelN folder or a problem file", options.source.string(),
                     levels.empty() && options.problems.empty() ? "" : " for the levels and problems asked");
  }
  return problems;
}

Result<std::pair<std::string, std::string>> FindTorchPython(const std::string& configured) {
  std::vector<std::string> candidates;
  if (!configured.empty()) {
    candidates.push_back(configured);
  } else {
    candidates = {"python3", "/usr/bin/python3"};
  }
  std::string tried;
  for (const auto& python : candidates) {
    SpawnOptions options;
    options.argv = {python, "-c", "import torch, sys; print(torch.__version__)"};
    options.inherit_environment = true;
    auto run = RunCommand(options, kTorchProbeTimeout);
    if (run.ok() && run->succeeded()) {
      const auto lines = SplitLines(run->output);
      return std::pair{python, lines.empty() ? std::string("?") : std::string(Trim(lines.back()))};
    }
    tried += (tried.empty() ? "" : ", ") + python + (run.ok() ? " (" + run->Describe() + ")" : " (not found)");
  }
  return MakeError(ErrorKind::kNotFound, "no python3 that imports torch (tried {}); install Debian's python3-torch "
                   "(apt-get install python3-torch) or pass --python", tried);
}

Result<json> ImportKernelBench(const KernelBenchImportOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  auto problems = FindKernelBenchProblems(options);
  if (!problems.ok()) return problems.error();
  auto python = FindTorchPython(options.python);
  if (!python.ok()) return python.error();
  auto compiler = CpuCompiler::Create(options.cache_directory);
  if (!compiler.ok()) return compiler.error();
  std::error_code error;
  fs::create_directories(options.out / "kernelbench", error);
  if (error) {
    return MakeError(ErrorKind::kIo, "cannot create {}: {}; pass --out with a folder you can write",
                     (options.out / "kernelbench").string(), error.message());
  }
  ScopedTempDir work("kernelbench-import");
  if (!work.ok()) return MakeError(ErrorKind::kIo, "cannot create a temporary folder for the importer");
  if (auto status = WriteKernelBenchScript(work.path(), "import.py", "importer"); !status.ok()) return status.error();
  const fs::path results_path = work.path() / "results.jsonl";
  const int jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  SpawnOptions spawn;
  spawn.argv = {python->first, (work.path() / "import.py").string(), "--results", results_path.string(),
                "--timeout-s", fmt::format("{:g}", options.problem_timeout_s), "--jobs", std::to_string(jobs),
                "--gpu-bench-bytes", std::to_string(options.gpu_bench_bytes)};
  for (const auto& problem : *problems) {
    spawn.argv.push_back(fmt::format("--problem={}:{}", problem.level, problem.file.string()));
  }
  spawn.inherit_environment = true;
  spawn.output_path = work.path() / "importer.log";
  auto pid = SpawnProcess(spawn);
  if (!pid.ok()) return pid.error();
  // Every problem has its own limit inside; this one only catches the driver itself hanging.
  const double rounds = std::ceil(static_cast<double>(problems->size()) / jobs);
  const auto limit = std::chrono::milliseconds(static_cast<int64_t>((rounds * options.problem_timeout_s + 120) * 1000));
  std::atomic<bool> finished = false;
  ProcessExit exit;
  std::thread waiter([&] {
    exit = WaitForProcess(*pid, limit);
    finished = true;
  });

  json results = json::array();
  size_t consumed_bytes = 0;
  std::set<std::string> reported;
  auto consume = [&] {
    auto text = ReadFile(results_path);
    if (!text.ok() || text->size() <= consumed_bytes) return;
    const size_t end = text->rfind('\n');
    if (end == std::string::npos || end < consumed_bytes) return;
    for (const auto& line : SplitLines(std::string_view(*text).substr(consumed_bytes, end + 1 - consumed_bytes))) {
      if (Trim(line).empty()) continue;
      json result = json::parse(line, nullptr, false);
      if (result.is_discarded()) continue;
      WriteCheckedTask(result, options.out, *compiler);
      reported.insert(result.value("file", std::string()));
      results.push_back(result);
      if (options.progress) options.progress(result, results.size(), problems->size());
    }
    consumed_bytes = end + 1;
  };
  while (!finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    consume();
  }
  waiter.join();
  consume();
  auto log_text = ReadFile(spawn.output_path);
  const std::string log = log_text.ok() ? *log_text : "";
  for (const auto& problem : *problems) {
    if (reported.contains(problem.file.string())) continue;
    json result = {{"file", problem.file.string()}, {"level", problem.level}, {"status", "skipped"},
                   {"reason", fmt::format("the importer stopped before this problem ({}){}", exit.Describe(),
                                          log.empty() ? "" : ": " + log.substr(log.size() > 2000 ? log.size() - 2000 : 0))}};
    results.push_back(result);
    if (options.progress) options.progress(result, results.size(), problems->size());
  }
  return json{{"python", python->first},
              {"torch", python->second},
              {"out", options.out.string()},
              {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()},
              {"problems", results}};
}

}  // namespace ksmith
