#include "kernelbench/candidate_build.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "compile/build_command.h"
#include "core/clock.h"
#include "core/files.h"
#include "core/hash.h"
#include "core/landlock.h"
#include "core/subprocess.h"
#include "kernelbench/build_sandbox.h"
#include "kernelbench/scripts.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxAnalysisBytes = size_t{64} << 20;
constexpr size_t kMaxManifestBytes = size_t{4} << 20;
// A CUDA extension of torch's headers takes about a minute to compile; Triton's JIT a few seconds.
constexpr std::chrono::minutes kBuildTimeout{5};
// Bump when the build's script, environment or folder layout changes meaning.
constexpr std::string_view kBuildVersion = "kernelbench-build-2";
// ksmith_kb/build.py's BUILD_FAILED: the candidate does not import or its extension does not compile.
constexpr int kBuildFailedExitCode = 3;

}  // namespace

Result<json> LoadKernelBenchAnalysis(const Task& task) {
  if (task.category != "kernelbench") {
    return MakeError(ErrorKind::kInvalidArgument,
                     "a KernelBench-format candidate (a .py file defining ModelNew) needs a task imported from "
                     "KernelBench (`ksmith import kernelbench`); {} is a {} task: write its candidate in C++",
                     task.name, task.category);
  }
  const auto path = task.directory / "kernelbench.json";
  auto text = ReadFile(path, kMaxAnalysisBytes);
  if (!text.ok()) return text.error();
  auto analysis = json::parse(*text, nullptr, false);
  if (analysis.is_discarded() || !analysis.is_object()) {
    return MakeError(ErrorKind::kParse, "{} is not JSON; re-import the problem", path.string());
  }
  return analysis;
}

std::vector<DimValues> BuildShapes(const Task& view, bool cuda) {
  std::vector<DimValues> shapes = view.dev_shapes;
  if (!view.bench_shape.empty()) shapes.push_back(view.bench_shape);
  if (cuda) shapes.insert(shapes.end(), view.eval_shapes.begin(), view.eval_shapes.end());
  return shapes;
}

CandidateBuildPlan PlanCandidateBuild(const fs::path& cache_directory, const json& analysis, const Task& view,
                                      std::string_view python_source, bool cuda) {
  Sha256Builder key;
  key.Add(kBuildVersion).Add(KernelBenchPackageDigest()).Add(analysis.dump()).Add(python_source).Add(cuda ? "cuda" : "cpu");
  key.Add(ShapesJson(BuildShapes(view, cuda)).dump());
  CandidateBuildPlan plan;
  plan.digest = key.HexDigest();
  plan.directory = cache_directory / "kernelbench-builds" / plan.digest;
  return plan;
}

Result<CandidateBuild> BuildCandidate(const CandidateBuildPlan& plan, const json& analysis, const Task& view,
                                      std::string_view python_source, std::string_view candidate_name, bool cuda,
                                      const BuildLimits& limits) {
  CandidateBuild build;
  const fs::path manifest_path = plan.directory / "manifest.json";
  const fs::path log_path = plan.directory.string() + ".log";
  if (fs::exists(manifest_path)) {
    auto text = ReadFile(manifest_path, kMaxManifestBytes);
    if (!text.ok()) return text.error();
    build.manifest = json::parse(*text, nullptr, false);
    if (!build.manifest.is_discarded() && build.manifest.is_object()) {
      build.built = build.cache_hit = true;
      build.sandboxed = true;
      build.command = "the build sandbox's cached output";
      if (auto log = ReadFile(log_path, kMaxManifestBytes); log.ok()) build.log = *log;
      return build;
    }
  }
  const fs::path builds = plan.directory.parent_path();
  std::error_code error;
  fs::create_directories(builds / "tmp", error);
  ScopedTempDir work("build", builds / "tmp");
  if (!work.ok()) return MakeError(ErrorKind::kIo, "cannot create a build folder under {}", (builds / "tmp").string());
  for (const char* folder : {"home", "tmp", "cache", "torch_extensions", "triton"}) {
    fs::create_directories(work.path() / folder, error);
  }
  json spec = {{"source", analysis.at("source")},
               {"file", analysis.at("file")},
               {"constant_dims", analysis.at("constant_dims")},
               {"constants", analysis.value("constants", json::object())},
               {"sys_path", analysis.at("python").at("sys_path")},
               {"candidate_source", std::string(python_source)},
               {"candidate_file", std::string(candidate_name)},
               {"directory", work.path().string()},
               {"final_directory", plan.directory.string()},
               {"cuda", cuda},
               {"shapes", ShapesJson(BuildShapes(view, cuda))}};
  const fs::path script_path = work.path() / "build.py";
  const fs::path spec_path = work.path() / "spec.json";
  if (auto status = WriteKernelBenchScript(work.path(), "build.py", "build"); !status.ok()) return status.error();
  if (auto status = WriteFileAtomic(spec_path, spec.dump()); !status.ok()) return status.error();

  SpawnOptions options;
  options.argv = {KernelBenchPython(analysis), "-I", script_path.string(), spec_path.string()};
  options.environment = BuildSandboxEnvironment(work.path(), cuda);
  options.working_directory = work.path() / "tmp";
  options.isolate = true;
  auto ruleset = BuildSandboxRuleset(analysis, work.path(), cuda);
  if (ruleset.ok()) options.landlock_ruleset_fd = ruleset->fd();
  if (cuda) options.landlock_writable_in_child = {"/proc/self/task"};
  build.sandboxed = ruleset.ok();
  build.command = fmt::format("{} -I build.py spec.json (build sandbox{})", options.argv[0],
                              build.sandboxed ? "" : ", without Landlock");
  options.limits = BuildSandboxLimits(limits, cuda);
  auto limited = RunBuildCommand(options, limits, kBuildTimeout, work.path(), "the build sandbox");
  if (!limited.ok()) return limited.error();
  const ProcessExit& run = limited->exit;
  build.seconds = run.elapsed_s;
  build.peak_memory_bytes = run.peak_tree_bytes;
  build.log = run.output;
  build.limit_hit = limited->limit_hit;
  if (run.signal == 0 && run.exit_code == kBuildFailedExitCode) return build;
  auto text = ReadFile(work.path() / "manifest.json", kMaxManifestBytes);
  build.manifest = text.ok() ? json::parse(*text, nullptr, false) : json();
  if (!build.manifest.is_object() || !build.manifest.contains("extensions")) {
    build.log += fmt::format("\n[python {} before the candidate was imported, its extensions built]\n",
                             run.Describe());
    return build;
  }
  if (!run.succeeded()) {  // it imported; a call ended the process, which the worker will see too
    build.manifest["warnings"].push_back(fmt::format("the build's python ended ({}) while calling the model", run.Describe()));
  }
  build.built = true;
  // Kept: the extensions, Triton's cache and the manifest; what the build only needed goes.
  for (const char* transient : {"home", "tmp", "cache", "python", "build.py", "spec.json"}) fs::remove_all(work.path() / transient, error);
  (void)WriteFileAtomic(log_path, build.log);
  fs::rename(work.path(), plan.directory, error);
  if (error && !fs::exists(manifest_path)) {  // a build of the same candidate that finished first is as good
    return MakeError(ErrorKind::kIo, "cannot store the build in {}: {}", plan.directory.string(), error.message());
  }
  return build;
}

}  // namespace ksmith
