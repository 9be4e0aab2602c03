// The C++ of an imported KernelBench task's reference and baseline: a function with the task's
// signature that embeds CPython and calls the problem's Model through the ksmith_kb package
// (src/kernelbench/ksmith_kb/), whose modules it carries.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

struct ShimSpec {
  std::string task_name;
  std::string role;            // "reference" (float64 outputs), "baseline" or "candidate" (the task's
                               // dtypes: Model or a KernelBench-format ModelNew), or "cuda_" and one
                               // of them: device pointers and a trailing cudaStream_t stream
  bool cuda = false;
  std::string how;             // one line for the header comment
  std::string function;        // the extern "C" name
  std::string parameters;      // the C parameter list, in signature order
  std::vector<std::string> input_names;   // in the spec's input order
  std::vector<std::string> output_names;
  std::vector<std::string> dim_names;     // in the spec's dims order
  std::string source_file;     // the problem file it was imported from
  std::string libpython;       // the shared libpython of the python3 that imported it
  std::string python_home;     // that python3's sys.prefix
  std::vector<std::string> package_modules;  // the ksmith_kb modules it embeds (scripts.h), by name
  std::string package_hash;    // of those modules' texts and the loader's: names the package in Python
  std::string spec_json;       // what runner.Runner reads; a candidate's is not in the shim
};

/// A candidate's spec (the task's, with its source and its build) lives in this file beside the
/// candidate's copy of the shim, which reads it when first called: the shim's text is then the
/// task's alone, so that it is compiled once per task rather than once per candidate.
inline constexpr const char* kCandidateSpecFile = "ksmith_candidate.json";

/// The shim of `role` ("reference", "baseline", "candidate", or "cuda_" and one of them) for a
/// problem as ksmith_kb/importer.py analysed it (the task folder's kernelbench.json). A candidate's
/// adds candidate.py to the modules; its spec_json still lacks the candidate's source.
Result<ShimSpec> KernelBenchShimSpec(const nlohmann::json& analysis, std::string_view role);

/// The shim's C++ source. Fails only where a text would break the generated quoting. A reference
/// has no ksmith_finish; a baseline's and a candidate's copy their outputs there, after the timed
/// call (the worker calls a candidate's only where ksmith generated the candidate's shim). A
/// candidate's embeds no spec: it reads kCandidateSpecFile beside the file it was loaded from.
Result<std::string> RenderShim(const ShimSpec& spec);

}  // namespace ksmith
