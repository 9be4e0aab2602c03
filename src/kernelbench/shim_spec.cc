#include <fmt/format.h>

#include "core/hash.h"
#include "kernelbench/scripts.h"
#include "kernelbench/shim.h"
#include "tensor/dtype.h"

namespace ksmith {
namespace {

using nlohmann::json;

std::string CType(const std::string& dtype_name) {
  auto dtype = ParseDType(dtype_name);
  return dtype.ok() ? DTypeCType(*dtype) : "float";
}

// The CUDA spelling of a tensor's element type (docs/task_format.md, Element types).
std::string CudaType(const std::string& dtype_name) {
  if (dtype_name == "fp16") return "__half";
  if (dtype_name == "bf16") return "__nv_bfloat16";
  return CType(dtype_name);
}

}  // namespace

Result<ShimSpec> KernelBenchShimSpec(const json& analysis, std::string_view role) {
  const bool cuda = role.starts_with("cuda_");
  const std::string_view kind = cuda ? role.substr(5) : role;
  if (kind != "reference" && kind != "baseline" && kind != "candidate" && kind != "compiled") {
    return MakeError(ErrorKind::kInvalidArgument, "no shim role '{}'", role);
  }
  const bool reference = kind == "reference";
  const std::string name = analysis.at("name").get<std::string>();
  ShimSpec shim;
  shim.task_name = name;
  shim.role = std::string(role);
  shim.cuda = cuda;
  const auto element = [&](const json& tensor) {
    const std::string dtype = tensor.at("dtype").get<std::string>();
    return cuda ? CudaType(dtype) : CType(dtype);
  };
  std::vector<std::string> parameters;
  for (const auto& tensor : analysis.at("inputs")) {
    shim.input_names.push_back(tensor.at("name").get<std::string>());
    parameters.push_back(fmt::format("const {}* {}", element(tensor), shim.input_names.back()));
  }
  for (const auto& tensor : analysis.at("outputs")) {
    shim.output_names.push_back(tensor.at("name").get<std::string>());
    parameters.push_back(fmt::format("{}* {}", reference ? "double" : element(tensor), shim.output_names.back()));
  }
  for (const auto& dim : analysis.at("dims")) {
    shim.dim_names.push_back(dim.get<std::string>());
    parameters.push_back("int64_t " + shim.dim_names.back());
  }
  if (cuda) parameters.emplace_back("cudaStream_t stream");
  shim.parameters = fmt::format("{}", fmt::join(parameters, ", "));
  shim.function = name + (reference ? "_reference" : "") + (reference && cuda ? "_cuda" : "");

  const std::string reference_dtype = analysis.at("reference_dtype").get<std::string>();
  if (reference) {
    shim.how = cuda ? fmt::format("in {} on the GPU, into double outputs, in the reference worker", reference_dtype)
                    : fmt::format("in {}, into double outputs, in the evaluator's process", reference_dtype);
  } else if (kind == "baseline") {
    shim.how = cuda ? "in float32 on the GPU, torch eager, in the worker"
                    : "in float32, torch eager as KernelBench times it, in the worker";
  } else if (kind == "compiled") {
    shim.how = "in float32, torch.compile (inductor) from caches a trusted warm step filled, in the worker";
  } else {
    shim.how = "in the sandboxed worker, as KernelBench would call it";
  }
  // What the runner reads: the analysis minus what only the importer needed.
  json runner_spec = {{"source", analysis.at("source")},        {"file", analysis.at("file")},
                      {"dims", analysis.at("dims")},            {"constant_dims", analysis.at("constant_dims")},
                      {"inputs", analysis.at("inputs")},        {"outputs", analysis.at("outputs")},
                      {"scalars", analysis.value("scalars", json::array())},
                      {"reference_dtype", reference_dtype},
                      {"sys_path", analysis.at("python").at("sys_path")}};
  shim.spec_json = runner_spec.dump();
  shim.source_file = analysis.at("file").get<std::string>();
  shim.libpython = analysis.at("python").at("libpython").get<std::string>();
  shim.python_home = analysis.at("python").at("home").get<std::string>();
  // Only what the role runs (shim.py imports candidate.py and compiled.py for their roles alone):
  // a reference's or a baseline's shim stays as it was when another role's module changes.
  shim.package_modules = {"__init__", "runner", "shim"};
  if (kind == "candidate") {
    shim.package_modules.insert(shim.package_modules.end(), {"extensions", "candidate"});
  } else if (kind == "compiled") {
    shim.package_modules.insert(shim.package_modules.end(), {"extensions", "compiled"});
  }
  Sha256Builder package_hash;
  package_hash.Add(KernelBenchModuleText("embedded"));
  for (const auto& module : shim.package_modules) package_hash.Add(module).Add(KernelBenchModuleText(module));
  shim.package_hash = package_hash.HexDigest().substr(0, 16);
  if (shim.libpython.empty()) {
    return MakeError(ErrorKind::kNotFound, "the python3 that analysed {} has no shared libpython to embed; use a "
                     "python3 built with --enable-shared (Debian's is)", name);
  }
  return shim;
}

}  // namespace ksmith
