#include <algorithm>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "core/files.h"
#include "kernelbench/importer.h"
#include "task/registry.h"

namespace ksmith {
namespace {

struct ImportFlags {
  std::string source;
  std::vector<int> levels;
  std::vector<std::string> problems;
  std::string out;
  std::string python;
  double timeout_s = 120;
  int jobs = 0;
  uint64_t gpu_bench_bytes = 0;
  bool json = false;
  bool quiet = false;
};

std::string ReportText(const nlohmann::json& report) {
  size_t imported = 0;
  std::string skipped;
  for (const auto& result : report.at("problems")) {
    if (result.at("status") == "imported") {
      ++imported;
    } else {
      skipped += fmt::format("  {}: {}\n", std::filesystem::path(result.at("file").get<std::string>()).filename().string(),
                             result.value("reason", std::string("?")));
    }
  }
  const size_t total = report.at("problems").size();
  std::string text = fmt::format("imported {} of {} problems into {}/kernelbench in {:.0f} s (python {}, torch {})\n",
                                 imported, total, report.at("out").get<std::string>(),
                                 report.at("seconds").get<double>(), report.at("python").get<std::string>(),
                                 report.at("torch").get<std::string>());
  if (!skipped.empty()) text += fmt::format("skipped {}:\n{}", total - imported, skipped);
  return text;
}

int RunImportKernelBench(const ImportFlags& flags) {
  KernelBenchImportOptions options;
  options.source = flags.source;
  options.levels = flags.levels;
  options.problems = flags.problems;
  options.out = flags.out.empty() ? TaskRegistry::ImportedRoot() : std::filesystem::path(flags.out);
  options.python = flags.python;
  options.problem_timeout_s = flags.timeout_s;
  options.jobs = flags.jobs;
  options.gpu_bench_bytes = flags.gpu_bench_bytes;
  auto cache = CacheDirectory();
  if (!cache.ok()) {
    PrintError(cache.error().message);
    return kExitInfra;
  }
  options.cache_directory = *cache;
  if (!flags.quiet) {
    options.progress = [](const nlohmann::json& result, size_t done, size_t total) {
      const std::string file = std::filesystem::path(result.value("file", std::string())).filename().string();
      if (result.value("status", std::string()) == "imported") {
        std::fprintf(stderr, "  [%zu/%zu] %s: imported as %s (%.1f s)\n", done, total, file.c_str(),
                     result.value("name", std::string()).c_str(), result.value("seconds", 0.0));
      } else {
        std::fprintf(stderr, "  [%zu/%zu] %s: skipped: %s\n", done, total, file.c_str(),
                     result.value("reason", std::string()).c_str());
      }
    };
  }
  auto report = ImportKernelBench(options);
  if (!report.ok()) {
    PrintError(report.error().message);
    return report.error().kind == ErrorKind::kNotFound ? kExitUsage : kExitInfra;
  }
  if (flags.json) {
    std::printf("%s\n", report->dump(2).c_str());
  } else {
    std::printf("%s", ReportText(*report).c_str());
  }
  const auto roots = TaskRegistry::Default().roots();
  if (std::find(roots.begin(), roots.end(), options.out) == roots.end()) {
    std::fprintf(stderr, "note: %s is not on the task search path; add it: export KSMITH_TASKS_PATH=%s\n",
                 options.out.string().c_str(), options.out.string().c_str());
  }
  return kExitOk;
}

}  // namespace

CommandHandler AddImportCommand(CLI::App& app) {
  auto flags = std::make_shared<ImportFlags>();
  app.require_subcommand(1);
  CLI::App* kernelbench = app.add_subcommand(
      "kernelbench",
      "Turn KernelBench problems (a Model with get_inputs and get_init_inputs) into ksmith tasks: a float64 "
      "PyTorch reference, a torch-eager baseline and hidden shapes that vary the problem's sizes. Needs a "
      "python3 with torch (Debian: apt-get install python3-torch).");
  kernelbench->add_option("source", flags->source,
                          "A KernelBench checkout (with level1/, level2/, ...), a levelN folder, or one problem file")
      ->required();
  kernelbench->add_option("--level", flags->levels, "Only these levels, e.g. --level 1,2")->delimiter(',');
  kernelbench->add_option("--problems", flags->problems, "Only these problems: ids, ranges or file names, "
                          "e.g. --problems 1,19-23,40_LayerNorm")->delimiter(',');
  kernelbench->add_option("--out", flags->out, "The tasks folder to write into (<out>/kernelbench/<task>); default: "
                          "$XDG_DATA_HOME/ksmith/tasks, which ksmith searches (others: add to KSMITH_TASKS_PATH)");
  kernelbench->add_option("--python", flags->python, "The python3 with torch to analyse with (default: the first of "
                          "python3 and /usr/bin/python3 that imports torch)");
  kernelbench->add_option("--timeout-s", flags->timeout_s, "Seconds one problem's analysis may take")
      ->check(CLI::PositiveNumber);
  kernelbench->add_option("--jobs", flags->jobs, "Problems analysed at once (default: this machine's cores)")
      ->check(CLI::NonNegativeNumber);
  kernelbench->add_option("--gpu-bench-bytes", flags->gpu_bench_bytes,
                          "Where torch has CUDA: the most bytes the GPU timing shape's tensors may take together; "
                          "the problem's own sizes where they fit, else halved together (default 0: a tenth of "
                          "the importing GPU's memory, which an evaluation's several sets of them need)")
      ->check(CLI::NonNegativeNumber);
  kernelbench->add_flag("--json", flags->json, "Print the per-problem report as JSON");
  kernelbench->add_flag("-q,--quiet", flags->quiet, "No progress lines on stderr");
  return [flags, kernelbench] { return kernelbench->parsed() ? RunImportKernelBench(*flags) : kExitUsage; };
}

}  // namespace ksmith
