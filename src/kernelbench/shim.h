// The C++ of an imported KernelBench task's reference and baseline: a function with the task's
// signature that embeds CPython and calls the problem's Model through kb_runner.py.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace ksmith {

struct ShimSpec {
  std::string task_name;
  std::string role;            // "reference" (float64 outputs) or "baseline" (the task's dtypes), or
                               // "cuda_" and either: device pointers and a trailing cudaStream_t stream
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
  std::string runner_hash;     // of kb_runner.py: names the runner's module
  std::string spec_json;       // what kb_runner.Runner reads
};

/// The shim's C++ source. Fails only where a text would break the generated quoting.
Result<std::string> RenderShim(const ShimSpec& spec);

}  // namespace ksmith
