#include "kernelbench/task_writer.h"

#include <fmt/format.h>

#include <sstream>
#include <toml++/toml.h>

#include "core/files.h"
#include "kernelbench/shim.h"
#include "tensor/dtype.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// fp32 tolerance where the reference itself runs in float32 (no float64 kernel): the reference
// then errs as much as an honest candidate, and the defaults (1e-5, 1e-4) would reject honest work.
constexpr double kFloat32ReferenceNorm = 1e-4;
constexpr double kFloat32ReferenceElem = 1e-3;

toml::array Strings(const json& list) {
  toml::array array;
  for (const auto& item : list) array.push_back(item.get<std::string>());
  return array;
}

toml::table Shape(const json& values) {
  toml::table table;
  for (const auto& [dim, value] : values.items()) table.insert(dim, value.get<int64_t>());
  return table;
}

toml::array Shapes(const json& list) {
  toml::array array;
  for (const auto& values : list) array.push_back(Shape(values));
  return array;
}

std::string SizeExpression(const json& tensor) {
  auto dtype = ParseDType(tensor.at("dtype").get<std::string>());
  std::string expression = std::to_string(dtype.ok() ? DTypeBytes(*dtype) : 4);
  for (const auto& dim : tensor.at("shape")) expression += "*" + dim.get<std::string>();
  return expression;
}

std::string VaryingSizes(const json& varying) {
  std::string names;
  for (const auto& name : varying) names += (names.empty() ? "" : ", ") + name.get<std::string>();
  return names.empty() ? std::string("(none: this problem's sizes are fixed)") : names;
}

std::string Describe(const json& spec) {
  std::string text = fmt::format(
      "KernelBench level {} problem {} ({}), imported by ksmith: compute exactly what the PyTorch module `Model` "
      "(shown in full below) computes in its forward pass, as KernelBench runs it: a fresh module in training "
      "mode (it never calls .eval(), so batch norm uses the batch's statistics), in float32, without autograd. ",
      spec.at("level").get<int>(), spec.at("problem_id").get<int>(), spec.at("title").get<std::string>());
  text += "The kernel receives forward()'s inputs in order";
  bool any_parameter = false;
  for (const auto& tensor : spec.at("inputs")) any_parameter |= tensor.at("kind") == "parameter";
  if (any_parameter) {
    text += ", then the module's parameters (named after their attribute path, '.' as '_'): values of the "
            "evaluator's own, not the initial ones, and the same in every call at a shape, as a module's weights "
            "are; read them, and derive from them at a call rather than in __init__";
  }
  text += fmt::format(". Inputs and outputs are contiguous, row-major; every tensor axis is an int64_t dim of the "
                      "signature (a module-level size of the problem where the axis follows it, else "
                      "<tensor>_d<axis>). The sizes in the problem file are one instance: the hidden shapes "
                      "vary the sizes {} and keep the other constants.",
                      VaryingSizes(spec.at("varying")));
  for (const auto& tensor : spec.at("inputs")) {
    if (!tensor.contains("integers")) continue;
    const auto& integers = tensor.at("integers");
    const auto bound = [](const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); };
    text += fmt::format(" Input {} is torch.{} in the problem and reaches the kernel as int32 values in [{}, {}).",
                        tensor.at("name").get<std::string>(), integers.at("torch_dtype").get<std::string>(),
                        bound(integers.at("low")), bound(integers.at("high")));
  }
  for (const auto& scalar : spec.value("scalars", json::array())) {
    text += fmt::format(" forward()'s argument {} is the number {} in every case, not an input of the kernel.",
                        scalar.at("index").get<int>(), scalar.at("value").dump());
  }
  if (!spec.value("reference_note", std::string()).empty()) text += " Note: " + spec.at("reference_note").get<std::string>() + ".";
  return text;
}

}  // namespace

Result<fs::path> WriteKernelBenchTask(const json& spec, const fs::path& root) {
  const std::string name = spec.at("name").get<std::string>();
  const fs::path directory = root / "kernelbench" / name;
  std::error_code error;
  fs::create_directories(directory, error);
  if (error) return MakeError(ErrorKind::kIo, "cannot create {}: {}", directory.string(), error.message());

  auto baseline = KernelBenchShimSpec(spec, "baseline");
  if (!baseline.ok()) return baseline.error();
  toml::table task;
  task.insert("name", name);
  task.insert("category", "kernelbench");
  task.insert("level", spec.at("level").get<int64_t>());
  task.insert("description", Describe(spec));
  task.insert("pytorch", spec.at("source").get<std::string>());
  task.insert("signature", fmt::format("void {}({})", name, baseline->parameters));
  // The reference's matrix products and convolutions (ksmith_kb/flops.py), "0" where none count or
  // they follow no dim: reported as GFLOP/s, never a physical limit (the reference's operators may
  // do more than a kernel needs), so the limit rests on bytes alone and never rejects an honest kernel.
  task.insert("flops", spec.value("flops", std::string("0")));
  task.insert("flops_counted", "reference");
  std::string bytes;
  for (const auto* list : {&spec.at("inputs"), &spec.at("outputs")}) {
    for (const auto& tensor : *list) bytes += (bytes.empty() ? "" : " + ") + SizeExpression(tensor);
  }
  task.insert("bytes", bytes);
  task.insert("accumulation", std::to_string(spec.at("accumulation").get<int64_t>()));
  task.insert("distributions", Strings(spec.at("distributions")));
  task.insert("allowed_libraries", toml::array{});
  toml::array inputs, outputs;
  for (const auto& tensor : spec.at("inputs")) {
    toml::table entry{{"name", tensor.at("name").get<std::string>()}, {"dtype", tensor.at("dtype").get<std::string>()},
                      {"shape", Strings(tensor.at("shape"))}};
    if (tensor.value("nonnegative", false)) entry.insert("nonnegative", true);
    // A model's parameters and buffers are its state, the same in every forward call: a ModelNew
    // may derive from them once (a transposed or folded weight) and reuse it.
    if (tensor.value("kind", std::string()) != "input") entry.insert("held", true);
    if (tensor.contains("integers")) {
      toml::array range;
      for (const auto& bound : {tensor.at("integers").at("low"), tensor.at("integers").at("high")}) {
        if (bound.is_string()) {
          range.push_back(bound.get<std::string>());
        } else {
          range.push_back(bound.get<int64_t>());
        }
      }
      entry.insert("range", std::move(range));
    }
    if (tensor.contains("draw")) {
      const auto& draw = tensor.at("draw");
      entry.insert("distribution", draw.at("distribution").get<std::string>());
      entry.insert("scale", draw.at("scale").get<double>());
      entry.insert("offset", draw.at("offset").get<double>());
    }
    inputs.push_back(std::move(entry));
  }
  for (const auto& tensor : spec.at("outputs")) {
    outputs.push_back(toml::table{{"name", tensor.at("name").get<std::string>()},
                                  {"dtype", tensor.at("dtype").get<std::string>()},
                                  {"shape", Strings(tensor.at("shape"))}});
  }
  task.insert("inputs", std::move(inputs));
  task.insert("outputs", std::move(outputs));
  const auto& shapes = spec.at("shapes");
  task.insert("shapes", toml::table{{"random", false}, {"dev", Shapes(shapes.at("dev"))},
                                    {"eval", Shapes(shapes.at("eval"))}, {"bench", Shape(shapes.at("bench"))}});
  task.insert("reference", toml::table{{"source", "reference.cc"}, {"function", name + "_reference"}});
  const auto& torch = spec.at("torch");
  // Disclosed, not hidden: torch needs its own integer type, and the conversion is timed with it.
  std::string conversion;
  for (const auto& tensor : spec.at("inputs")) {
    if (!tensor.contains("integers")) continue;
    conversion += fmt::format("{}{} to torch.{}", conversion.empty() ? "; the timed call includes converting int32 " : ", ",
                              tensor.at("name").get<std::string>(),
                              tensor.at("integers").at("torch_dtype").get<std::string>());
  }
  const std::string baseline_description = fmt::format(
      "torch eager (torch {}, float32, {} intra-op threads, no_grad): the problem's Model called from Python, as "
      "KernelBench times it{}", torch.at("version").get<std::string>(), torch.at("threads").get<int>(), conversion);
  task.insert("baseline", toml::table{{"cpu", toml::table{{"source", "baseline_cpu.cc"},
                                                          {"libraries", toml::array{}},
                                                          {"description", baseline_description},
                                                          {"readable", Strings(spec.at("python").value(
                                                                           "readable", json::array()))}}}});
  const bool cuda = spec.contains("cuda");
  if (cuda) {
    const auto& gpu = spec.at("cuda");
    task.insert("cuda", toml::table{{"reference", "reference.cu"},
                                    {"reference_function", name + "_reference_cuda"},
                                    {"eval", Shapes(gpu.at("eval"))},
                                    {"bench", Shape(gpu.at("bench"))}});
    auto* baselines = task["baseline"].as_table();
    baselines->insert("cuda", toml::table{{"source", "baseline_cuda.cu"},
                                          {"libraries", toml::array{}},
                                          {"description", fmt::format("torch eager on the GPU (torch {}, float32 with TF32 "
                                                                      "off, no_grad, on the caller's stream): the "
                                                                      "problem's Model called from Python{}",
                                                                      torch.at("version").get<std::string>(), conversion)},
                                          {"readable", Strings(spec.at("python").value("readable", json::array()))}});
  }
  if (spec.at("reference_dtype") == "float32") {
    task.insert("tolerance", toml::table{{"fp32", toml::table{{"norm", kFloat32ReferenceNorm},
                                                              {"elem", kFloat32ReferenceElem}}}});
  }
  std::ostringstream toml_text;
  toml_text << "# Generated by `ksmith import kernelbench` from " << spec.at("file").get<std::string>()
            << ".\n# Re-import rather than edit: the shims embed what this file says.\n"
            << task << "\n";

  std::vector<std::pair<std::string, std::string>> files = {
      {"task.toml", toml_text.str()}, {"problem.py", spec.at("source").get<std::string>()},
      {"kernelbench.json", spec.dump(2)}};
  std::vector<std::pair<std::string, std::string>> shims = {{"reference.cc", "reference"}, {"baseline_cpu.cc", "baseline"}};
  if (cuda) shims.insert(shims.end(), {{"reference.cu", "cuda_reference"}, {"baseline_cuda.cu", "cuda_baseline"}});
  for (const auto& [file, role] : shims) {
    auto shim = KernelBenchShimSpec(spec, role);
    if (!shim.ok()) return shim.error();
    auto source = RenderShim(*shim);
    if (!source.ok()) return source.error();
    files.emplace_back(file, *source);
  }

  for (const auto& [file, text] : files) {
    if (auto status = WriteFileAtomic(directory / file, text); !status.ok()) return status.error();
  }
  return directory;
}

}  // namespace ksmith
