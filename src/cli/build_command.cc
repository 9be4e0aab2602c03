// `ksmith build`: the source audit, the build and the binary audit exactly as `ksmith eval` runs
// them (the same pipeline, stopped after the build: EvalOptions::build_only), and what the build
// says about each kernel. For --backend cuda it needs nvcc, not a GPU: it runs where only the
// toolkit is installed, to read registers, spills and SASS before a GPU is at hand.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/candidate_check.h"
#include "formats/format_registry.h"
#include "cli/build_report.h"
#include "cli/commands.h"
#include "cli/setting_ranges.h"
#include "core/files.h"
#include "eval/backend_registry.h"
#include "eval/compile_pool.h"
#include "eval/pipeline.h"
#include "service/service_setup.h"
#include "task/registry.h"

namespace ksmith {
namespace {

// Exit status of a candidate that did not build (a compile error or a contract finding): the
// command did its work, and the answer is no.
constexpr int kExitNotBuilt = 1;

struct BuildFlags {
  std::string task;
  std::string backend = "cuda";
  std::string candidate;
  std::string arch;
  bool json = false;
  std::optional<double> build_memory_gib, build_cpu_s;
};

int RunBuild(const BuildFlags& flags) {
  TaskRegistry registry = TaskRegistry::Default();
  auto found = registry.Find(flags.task);
  if (!found.ok()) {
    PrintError(found.error().message);
    return found.error().kind == ErrorKind::kParse ? kExitInfra : kExitUsage;
  }
  auto candidate = ReadCandidateFile(flags.candidate);
  if (!candidate.ok()) {
    PrintError(candidate.error().message);
    return kExitUsage;
  }
  if (const std::string mismatch = CandidateMismatch(flags.candidate, flags.backend, *found); !mismatch.empty()) {
    PrintError(mismatch);  // as eval says it: a .cu on the cpu backend is told to add --backend cuda
    return kExitUsage;
  }
  auto cache = CacheDirectory();
  if (!cache.ok()) {
    PrintError(cache.error().message);
    return kExitInfra;
  }
  BackendConfig config;
  config.cache_directory = *cache;
  config.arch = flags.arch;
  config.build_limits = BuildLimitsFrom(flags.build_memory_gib, flags.build_cpu_s);
  config.build_only = true;
  auto backend = BackendRegistry::Global().Create(flags.backend, config);
  if (!backend.ok()) {
    PrintError(backend.error().message);
    return backend.error().kind == ErrorKind::kInvalidArgument ? kExitUsage : kExitInfra;
  }
  if (const Status supported = (*backend)->Supports(*found); !supported.ok()) {
    PrintError(supported.error().message);
    return kExitUsage;
  }
  CompilePool pool(1);
  const Pipeline pipeline(**backend, pool);
  EvalOptions options;
  options.build_only = true;
  options.time = false;
  const Verdict verdict = pipeline.Evaluate(*found, *candidate, options);
  const bool built = Built(verdict);
  if (flags.json) {
    std::printf("%s\n", BuildReportJson(verdict).dump(2).c_str());
  } else {
    std::fputs(built ? RenderBuildReport(verdict).c_str() : verdict.Render().c_str(), stdout);
  }
  std::fflush(stdout);
  if (built) return kExitOk;
  if (verdict.status == VerdictStatus::kInfraError) {
    PrintError(verdict.reason);
    return kExitInfra;
  }
  // As eval says it, with what to do: the log and the compiler's errors are printed above.
  std::fprintf(stderr, "ksmith: error: %s did not build (%s): %s; fix the source and run `ksmith build` again\n",
               flags.candidate.c_str(), VerdictStatusName(verdict.status), verdict.reason.c_str());
  return kExitNotBuilt;
}

}  // namespace

CommandHandler AddBuildCommand(CLI::App& app) {
  auto flags = std::make_shared<BuildFlags>();
  app.add_option("--task,-t", flags->task, "Task name (see `ksmith tasks`) or task folder")->required();
  app.add_option("--backend,-b", flags->backend,
                 "Whose compiler builds it: cuda reports registers, shared, local and constant memory and a SASS "
                 "summary per kernel, and needs nvcc but no GPU; cpu only builds it with g++ (no per-kernel report)")
      ->check(CLI::IsMember(BackendRegistry::Global().Names()))
      ->capture_default_str();
  app.add_option("candidate", flags->candidate, "The candidate's source file, as `ksmith eval` takes it")->required();
  app.add_option("--arch", flags->arch, "cuda: GPU architecture to build for, e.g. sm_90a (default: the GPU found, "
                 "else sm_90a)");
  app.add_flag("--json", flags->json, "Print the report as one JSON object");
  AddBuildLimitOptions(app, flags->build_memory_gib, flags->build_cpu_s);
  return [flags] { return RunBuild(*flags); };
}

}  // namespace ksmith
