// What every backend's compiler takes and gives: a kernel source to build in a role, and the
// shared object it became (or the log of why not). One type for every backend, so that the
// pipeline driver records a build the same way whatever compiled it.
#pragma once

#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cuda/cuda_resources.h"

namespace ksmith {

enum class KernelRole { kCandidate, kBaseline, kReference };

struct BuildRequest {
  std::string source;             // the kernel's text
  std::string display_name;       // file name shown in compiler messages, e.g. "candidate.cpp"
  KernelRole role = KernelRole::kCandidate;
  std::vector<std::string> libraries;  // -l<name>
};

struct BuildOutput {
  bool compiled = false;
  bool cache_hit = false;
  std::filesystem::path shared_object;
  std::string log;            // the compiler's output, untrimmed
  std::string command;        // what was run, for provenance
  double compile_s = 0;       // [seconds], 0 on a cache hit
  bool sandboxed = false;     // the compiler ran under Landlock (reads only system files)
  /// What the device compiler reported per kernel (ptxas); empty where it reports nothing.
  std::vector<KernelResources> resources;
  /// The machine code's summary (cuobjdump); empty where there is none. Reading it takes about
  /// a second (cuobjdump on an H200's host, for a one-kernel object) and decides nothing, so a
  /// fresh build computes it beside verification: `pending_sass` is then valid and `sass` empty
  /// until FinalSass() is asked.
  SassSummary sass;
  std::shared_future<SassSummary> pending_sass;
  /// A KernelBench-format candidate's build sandbox (kernelbench/candidate_build.h); null otherwise.
  nlohmann::json build_sandbox;

  /// The summary, waiting for it if it is still being read.
  SassSummary FinalSass() const { return pending_sass.valid() ? pending_sass.get() : sass; }

  nlohmann::json ToJson() const;
};

struct CompilerInfo {
  std::string executable;  // "g++"
  std::string version;     // first line of --version
  std::vector<std::string> flags;
};

}  // namespace ksmith
