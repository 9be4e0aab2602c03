#include "kernelbench/compiled_baseline.h"

#include <chrono>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"
#include "core/subprocess.h"
#include "kernelbench/build_sandbox.h"
#include "kernelbench/scripts.h"
#include "kernelbench/shim.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxManifestBytes = size_t{4} << 20;
// Inductor's first compile of a level-1 problem took 8-14 s on an H200; a level-3 network more.
constexpr std::chrono::minutes kWarmTimeout{5};
// Bump when the warm script, its environment or its folder layout changes meaning.
constexpr std::string_view kWarmVersion = "kernelbench-compiled-1";
constexpr std::string_view kRole = "cuda_compiled";

// Held while one evaluation warms a plan: a second evaluation of the task (`kernelbench run` judges
// several samples at once) waits and then finds the cache, and the problem file, which both
// sandboxes admit by its inode, is never replaced under a ruleset already made.
class PlanLock {
 public:
  explicit PlanLock(const fs::path& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~PlanLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  PlanLock(const PlanLock&) = delete;
  PlanLock& operator=(const PlanLock&) = delete;

 private:
  int fd_;
};

}  // namespace

CompiledBaselinePlan PlanCompiledBaseline(const fs::path& cache_directory, const json& analysis, const Task& view) {
  Sha256Builder key;
  // Triton's own keys name the GPU's architecture: a cache filled on another GPU misses, and the
  // worker, which cannot compile, then reports the compiled baseline as unavailable.
  key.Add(kWarmVersion).Add(KernelBenchPackageDigest()).Add(analysis.dump()).Add(ShapesJson({view.bench_shape}).dump());
  CompiledBaselinePlan plan;
  plan.digest = key.HexDigest();
  plan.directory = cache_directory / "kernelbench-compiled" / plan.digest;
  plan.problem_file = plan.directory / "problem.py";
  return plan;
}

Result<CompiledBaselineWarm> WarmCompiledBaseline(const CompiledBaselinePlan& plan, const json& analysis,
                                                  const Task& view) {
  CompiledBaselineWarm warm;
  const fs::path manifest_path = plan.directory / "manifest.json";
  const fs::path log_path = plan.directory.string() + ".log";
  std::error_code error;
  fs::create_directories(plan.directory.parent_path(), error);
  const PlanLock lock(plan.directory.string() + ".lock");
  if (fs::exists(manifest_path)) {
    auto text = ReadFile(manifest_path, kMaxManifestBytes);
    if (!text.ok()) return text.error();
    warm.manifest = json::parse(*text, nullptr, false);
    if (warm.manifest.is_object() && !warm.manifest.value("warmed", json::array()).empty()) {
      warm.cache_hit = true;
      warm.warmed = true;
      if (auto log = ReadFile(log_path, kMaxManifestBytes); log.ok()) warm.log = *log;
      return warm;
    }
  }
  // In place, not in a folder renamed after: inductor's code names its autotuning records by
  // absolute path, and the worker must find them where the warm step left them.
  const fs::path& work = plan.directory;
  fs::remove_all(work, error);  // what an earlier warm step left unfinished
  for (const char* folder : {"home", "tmp", "cache", "torch_extensions", "triton"}) {
    fs::create_directories(work / folder, error);
  }
  if (auto status = WriteFileAtomic(plan.problem_file, analysis.at("source").get<std::string>()); !status.ok()) {
    return status.error();
  }
  auto shim = KernelBenchShimSpec(analysis, kRole);
  if (!shim.ok()) return shim.error();
  json runner = json::parse(shim->spec_json);
  runner["file"] = plan.problem_file.string();
  const json spec = {{"runner", runner},
                     {"role", std::string(kRole)},
                     {"sys_path", analysis.at("python").at("sys_path")},
                     {"directory", work.string()},
                     {"shapes", ShapesJson({view.bench_shape})}};
  const fs::path script_path = work / "warm.py";
  const fs::path spec_path = work / "spec.json";
  if (auto status = WriteKernelBenchScript(work, "warm.py", "compiled"); !status.ok()) return status.error();
  if (auto status = WriteFileAtomic(spec_path, spec.dump()); !status.ok()) return status.error();

  SpawnOptions options;
  options.argv = {KernelBenchPython(analysis), "-I", script_path.string(), spec_path.string()};
  options.environment = BuildSandboxEnvironment(work, /*cuda=*/true);
  options.working_directory = work / "tmp";
  options.isolate = true;
  auto ruleset = BuildSandboxRuleset(analysis, work, /*cuda=*/true);
  if (ruleset.ok()) options.landlock_ruleset_fd = ruleset->fd();
  options.landlock_writable_in_child = {"/proc/self/task"};
  auto run = RunCommand(options, kWarmTimeout);
  if (!run.ok()) return run.error();
  warm.seconds = run->elapsed_s;
  warm.log = run->output;
  auto text = ReadFile(manifest_path, kMaxManifestBytes);
  warm.manifest = text.ok() ? json::parse(*text, nullptr, false) : json();
  warm.warmed = warm.manifest.is_object() && !warm.manifest.value("warmed", json::array()).empty();
  if (!run->succeeded() || !warm.warmed) {
    if (warm.manifest.is_object()) {
      for (const auto& failure : warm.manifest.value("failures", json::array())) {
        warm.log += "\nksmith: the warm step failed " + failure.dump();
      }
    }
    warm.log += fmt::format("\n[the warm step's python {}]\n", run->Describe());
    warm.warmed = false;
    fs::remove_all(work, error);  // not cached: a later run tries again
    return warm;
  }
  for (const char* transient : {"home", "tmp", "cache", "torch_extensions", "python", "warm.py", "spec.json"}) {
    fs::remove_all(work / transient, error);
  }
  (void)WriteFileAtomic(log_path, warm.log);
  return warm;
}

Result<std::string> RenderCompiledBaseline(const json& analysis, const CompiledBaselinePlan& plan, const json& manifest) {
  auto shim = KernelBenchShimSpec(analysis, kRole);
  if (!shim.ok()) return shim.error();
  auto spec = json::parse(shim->spec_json);
  spec["file"] = plan.problem_file.string();
  spec["compiled"] = {{"directory", plan.directory.string()},
                      {"programs", manifest.value("programs", json::array())}};
  shim->spec_json = spec.dump();
  return RenderShim(*shim);
}

}  // namespace ksmith
