// What every backend's compiler takes and gives: a kernel source to build in a role, and the
// shared object it became (or the log of why not). One type for every backend, so that the
// pipeline driver records a build the same way whatever compiled it.
#pragma once

#include <filesystem>
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
  /// The machine code's summary (cuobjdump); empty where there is none.
  SassSummary sass;

  nlohmann::json ToJson() const;
};

struct CompilerInfo {
  std::string executable;  // "g++"
  std::string version;     // first line of --version
  std::vector<std::string> flags;
};

}  // namespace ksmith
