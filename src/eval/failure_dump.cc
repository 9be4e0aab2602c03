#include "eval/failure_dump.h"

#include <sys/stat.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/files.h"
#include "tensor/npy.h"

namespace ksmith {
namespace {

struct TensorFile {
  std::string name;
  bool output = false;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;  // row-major; flat when the task's dims do not evaluate
};

// Each slot's name, dtype and shape at the case's dims, in slot order.
std::vector<TensorFile> TensorFiles(const FailedCase& failed) {
  const Task& task = failed.task;
  auto dims = task.WithDerivedDims(failed.dims);
  std::vector<TensorFile> files;
  for (const TensorSlot& slot : failed.layout.tensors) {
    TensorFile file{task.signature.parameters[slot.parameter].name, slot.output, slot.dtype, {}};
    const ParameterBinding& binding = task.bindings[slot.parameter];
    const TensorSpec& spec = slot.output ? task.outputs[binding.index] : task.inputs[binding.index];
    int64_t elements = 1;
    for (const auto& dim : spec.shape) {
      if (!dims.ok() || !dims->contains(dim)) break;
      const int64_t value = dims->at(dim);
      file.shape.push_back(value);
      elements *= value;
    }
    // A shape that does not account for every element is no shape: written flat instead.
    if (file.shape.size() != spec.shape.size() || elements != static_cast<int64_t>(slot.Elements())) {
      file.shape = {static_cast<int64_t>(slot.Elements())};
    }
    files.push_back(std::move(file));
  }
  return files;
}

// `value` as an element of `dtype` holds it: what an exact kernel would have written.
float RoundedTo(DType dtype, double value) {
  const auto single = static_cast<float>(value);
  switch (dtype) {
    case DType::kFloat16: return HalfBitsToFloat(FloatToHalfBits(single));
    case DType::kBFloat16: return Bf16BitsToFloat(FloatToBf16Bits(single));
    default: return single;
  }
}

nlohmann::json JsonNumber(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(fmt::format("{}", value));
}

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./=:,+@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string Readme(const nlohmann::json& described) {
  std::string text = fmt::format(
      "# A failing case of `{}` on {}\n\n"
      "{}\n\n"
      "The candidate `{}` got this case wrong: {}, {} (the evaluation's case `{}`).\n\n"
      "- `inputs/*.npy`: what the candidate was given, in each tensor's dtype (bf16 as its raw uint16\n"
      "  bits: `np.load(f).astype(np.uint32) << 16` viewed as float32).\n"
      "- `expected/*.npy`: the task's reference on those inputs, in double precision.\n"
      "- `actual/*.npy`: what the candidate wrote, in the output's dtype.\n"
      "- `case.json`: the shape, distribution, seeds, tolerance, the verdict's mismatch numbers and the\n"
      "  first element that differs from the reference.\n\n"
      "The verdict's tolerance decides, not equality: see docs/verdict.md (`failure.mismatch`).\n\n"
      "To replay the evaluation, which plans the same cases from the same seed and fails on this one\n"
      "(it prints the same `failed_case`), run `rerun.sh` or:\n\n    {}\n\n"
      "Add `--dump-failure DIR` to it to write the case again after a change to the kernel.\n",
      described["task"].get<std::string>(), described["backend"].get<std::string>(),
      described["reason"].get<std::string>(), described["candidate"].get<std::string>(),
      described["shape_text"].get<std::string>(), described["distribution"].get<std::string>(),
      described["label"].get<std::string>(), described["rerun_command"].get<std::string>());
  return text;
}

}  // namespace

std::vector<std::string> RerunCommand(const std::vector<std::string>& prefix, const FailedCase& failed,
                                      const std::filesystem::path& candidate) {
  std::vector<std::string> argv = prefix;
  for (std::string word : {std::string("--seed"), std::to_string(failed.evaluation_seed), std::string("--seeds"),
                           std::to_string(failed.seeds), std::string("--no-time"),
                           std::filesystem::absolute(candidate).lexically_normal().string()}) {
    argv.push_back(std::move(word));
  }
  return argv;
}

std::string ShellCommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + ShellQuote(word);
  return line;
}

nlohmann::json FirstDifference(const FailedCase& failed) {
  size_t offset = 0;
  size_t output = 0;
  for (const TensorSlot& slot : failed.layout.tensors) {
    if (!slot.output) continue;
    const size_t elements = slot.Elements();
    std::vector<float> got(elements);
    LoadAsFloat(slot.dtype, failed.outputs.data() + offset, elements, got.data());
    offset += slot.bytes;
    const auto& expected = failed.expected.at(output);
    for (size_t i = 0; i < elements && i < expected.size(); ++i) {
      const float want = RoundedTo(slot.dtype, expected[i]);
      const bool same = std::isnan(got[i]) ? std::isnan(want) : got[i] == want;
      if (same) continue;
      return {{"output", failed.task.signature.parameters[slot.parameter].name},
              {"index", i},
              {"actual", JsonNumber(got[i])},
              {"expected", JsonNumber(expected[i])}};
    }
    ++output;
  }
  return nullptr;
}

nlohmann::json DescribeFailedCase(const FailedCase& failed, const Verdict& verdict,
                                  const std::vector<std::string>& rerun) {
  nlohmann::json tolerance = nlohmann::json::object();
  for (const auto& output : failed.task.outputs) {
    const Tolerance bound = failed.task.ToleranceFor(output.dtype);
    tolerance[DTypeName(output.dtype)] = {{"norm", bound.norm}, {"elem", bound.elem}, {"noise", bound.noise}};
  }
  nlohmann::json mismatch = nullptr;
  if (const StageRecord* stage = verdict.FailedStage();
      stage != nullptr && stage->details.failure && stage->details.failure->mismatch) {
    mismatch = stage->details.failure->mismatch->ToJson();
  }
  return {{"task", verdict.task},
          {"backend", verdict.backend},
          {"candidate", verdict.candidate},
          {"status", VerdictStatusName(verdict.status)},
          {"reason", verdict.reason},
          {"label", failed.spec.label},
          {"shape", failed.dims},
          {"shape_text", failed.task.FormatShape(failed.dims)},
          {"distribution", DistributionName(failed.spec.distribution)},
          {"case_seed", failed.spec.seed},
          {"evaluation_seed", failed.evaluation_seed},
          {"seeds", failed.seeds},
          {"tolerance", tolerance},
          {"mismatch", mismatch},
          {"first_difference", FirstDifference(failed)},
          {"rerun", rerun},
          {"rerun_command", ShellCommandLine(rerun)}};
}

Status WriteFailureDump(const std::filesystem::path& directory, const FailedCase& failed, const Verdict& verdict,
                        const std::vector<std::string>& rerun) {
  std::error_code error;
  for (const char* part : {"inputs", "expected", "actual"}) {
    std::filesystem::create_directories(directory / part, error);
    if (error) {
      return MakeError(ErrorKind::kIo, "cannot make {}: {}", (directory / part).string(), error.message());
    }
  }
  nlohmann::json described = DescribeFailedCase(failed, verdict, rerun);
  nlohmann::json& tensors = described["tensors"] = nlohmann::json::array();
  size_t input_offset = 0;
  size_t output_offset = 0;
  size_t output = 0;
  for (const TensorFile& tensor : TensorFiles(failed)) {
    const size_t bytes = DTypeBytes(tensor.dtype);
    int64_t elements = 1;
    for (const int64_t dim : tensor.shape) elements *= dim;
    const size_t size = static_cast<size_t>(elements) * bytes;
    nlohmann::json entry = {{"name", tensor.name}, {"role", tensor.output ? "output" : "input"},
                            {"dtype", DTypeName(tensor.dtype)}, {"shape", tensor.shape}};
    if (!tensor.output) {
      const std::string file = "inputs/" + tensor.name + ".npy";
      const std::string_view data(failed.inputs.data() + input_offset, size);
      input_offset += size;
      if (Status written = WriteNpy(directory / file, NpyDescr(tensor.dtype), bytes, tensor.shape, data);
          !written.ok()) {
        return written;
      }
      entry["file"] = file;
      entry["npy_dtype"] = NpyDescr(tensor.dtype);
    } else {
      const std::string actual = "actual/" + tensor.name + ".npy";
      const std::string expected = "expected/" + tensor.name + ".npy";
      const std::string_view data(failed.outputs.data() + output_offset, size);
      output_offset += size;
      const auto& reference = failed.expected.at(output++);
      const std::string_view reference_bytes(reinterpret_cast<const char*>(reference.data()),
                                             reference.size() * sizeof(double));
      if (Status written = WriteNpy(directory / actual, NpyDescr(tensor.dtype), bytes, tensor.shape, data);
          !written.ok()) {
        return written;
      }
      if (Status written = WriteNpy(directory / expected, "<f8", sizeof(double), tensor.shape, reference_bytes);
          !written.ok()) {
        return written;
      }
      entry["actual_file"] = actual;
      entry["expected_file"] = expected;
      entry["npy_dtype"] = NpyDescr(tensor.dtype);
    }
    tensors.push_back(std::move(entry));
  }
  if (Status written = WriteFileAtomic(directory / "case.json", described.dump(2) + "\n"); !written.ok()) {
    return written;
  }
  if (Status written = WriteFileAtomic(directory / "README.md", Readme(described)); !written.ok()) return written;
  const auto script = directory / "rerun.sh";
  if (Status written = WriteFileAtomic(script, "#!/bin/sh\n# Replays the evaluation that failed on this case.\nexec " +
                                                   described["rerun_command"].get<std::string>() + " \"$@\"\n");
      !written.ok()) {
    return written;
  }
  ::chmod(script.c_str(), 0755);
  return {};
}

}  // namespace ksmith
