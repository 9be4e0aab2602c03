// What the KernelBench integration tests share: finding a python3 with torch, and importing
// problems once per build for every test process that asks with the same key.
#pragma once

#include <fcntl.h>
#include <sys/file.h>

#include <map>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace ksmith::it {

using json = nlohmann::json;

// What `ksmith import` would find: the first of python3 and /usr/bin/python3 that imports torch.
inline const std::string& TorchPython() {
  static const std::string python = [] {
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      const std::string command = std::string(candidate) + " -c 'import torch' >/dev/null 2>&1";
      if (std::system(command.c_str()) == 0) return std::string(candidate);
    }
    return std::string();
  }();
  return python;
}

#define SKIP_WITHOUT_TORCH()                                                                          \
  if (TorchPython().empty()) GTEST_SKIP() << "no python3 with torch here (Debian: apt-get install " \
                                             "python3-torch); the KernelBench import needs one"

inline fs::path ProblemsDir() { return SourceDir() / "tests" / "kernelbench"; }
// KernelBench's own problems: the few the tests use ship in the repository (tests/data/kernelbench,
// with KernelBench's license); the full levels, which only the full import reads, lie beside it.
inline fs::path KernelBenchCopy() { return SourceDir() / "tests" / "data" / "kernelbench"; }
inline fs::path SharedKernelBench() { return SourceDir().parent_path() / "shared" / "kernelbench"; }
inline fs::path CandidatesDir() { return SourceDir() / "tests" / "kernels" / "kernelbench"; }

struct Imported {
  fs::path out;
  json report;
};

// Imports once per build for every test process that asks with the same key (tests run as
// separate processes under ctest): a lock serializes them, and the report is kept beside the tasks.
inline Imported ImportOnce(const std::string& key, const std::vector<std::string>& arguments, int timeout_s = 1800) {
  Imported imported;
  imported.out = CacheDir() / "kernelbench-import" / key;
  fs::create_directories(imported.out.parent_path());
  const std::string stamp = std::to_string(fs::last_write_time(CliPath()).time_since_epoch().count());
  const int lock = ::open((imported.out.string() + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  const fs::path report_path = imported.out / "report.json";
  const fs::path stamp_path = imported.out / "stamp";
  if (fs::exists(report_path) && fs::exists(stamp_path) && Slurp(stamp_path) == stamp) {
    imported.report = json::parse(Slurp(report_path), nullptr, false);
  } else {
    fs::remove_all(imported.out);
    std::vector<std::string> args = {"import", "kernelbench"};
    args.insert(args.end(), arguments.begin(), arguments.end());
    args.insert(args.end(), {"--out", imported.out.string(), "--json", "--quiet"});
    const CliResult run = RunKsmith(args, {}, timeout_s);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    imported.report = run.Json();
    if (run.exit_code == 0 && imported.report.is_object()) {
      std::ofstream(report_path) << imported.report.dump();
      std::ofstream(stamp_path) << stamp;
    }
  }
  if (lock >= 0) ::close(lock);
  return imported;
}

// The per-problem results of a report, by file name.
inline std::map<std::string, json> ByFile(const json& report) {
  std::map<std::string, json> results;
  if (!report.is_object()) return results;
  for (const auto& result : report.at("problems")) {
    results[fs::path(result.at("file").get<std::string>()).filename().string()] = result;
  }
  return results;
}

}  // namespace ksmith::it
