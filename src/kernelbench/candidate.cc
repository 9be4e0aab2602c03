#include "kernelbench/candidate.h"

#include <fmt/format.h>

#include "core/files.h"
#include "core/hash.h"
#include "kernelbench/shim.h"

namespace ksmith {

Result<std::string> RenderKernelBenchCandidateShim(const nlohmann::json& analysis, bool cuda) {
  auto shim = KernelBenchShimSpec(analysis, cuda ? "cuda_candidate" : "candidate");
  if (!shim.ok()) return shim.error();
  return RenderShim(*shim);
}

Result<std::string> KernelBenchCandidateSpec(const nlohmann::json& analysis, std::string_view python_source,
                                             std::string_view candidate_name, bool cuda,
                                             const std::filesystem::path& build_directory,
                                             const nlohmann::json& manifest) {
  auto shim = KernelBenchShimSpec(analysis, cuda ? "cuda_candidate" : "candidate");
  if (!shim.ok()) return shim.error();
  auto spec = nlohmann::json::parse(shim->spec_json);
  spec["candidate_source"] = std::string(python_source);
  spec["candidate_file"] = std::string(candidate_name);
  spec["build"] = {{"extensions_directory", (build_directory / "torch_extensions").string()},
                   {"triton_directory", (build_directory / "triton").string()},
                   {"extensions", manifest.value("extensions", nlohmann::json::array())},
                   {"programs", manifest.value("programs", nlohmann::json::array())}};
  return spec.dump();
}

Result<std::filesystem::path> WriteKernelBenchCandidate(const std::filesystem::path& shared_object,
                                                        const std::string& spec_json,
                                                        const std::filesystem::path& build_directory) {
  namespace fs = std::filesystem;
  // A folder of the spec's own (judgements of one source under two names each read theirs), made
  // by ksmith after the build sandbox ended. What the sandbox left under that name, a file or a
  // link, is removed; a folder of its making holds nothing ksmith reads before rewriting it.
  const fs::path folder = build_directory / ("shim-" + Sha256Hex(spec_json).substr(0, 16));
  std::error_code error;
  const fs::file_status found = fs::symlink_status(folder, error);
  if (fs::exists(found) && !fs::is_directory(found)) fs::remove(folder, error);
  fs::create_directory(folder, error);
  // A copy, not a link: the loader keeps one handle per file, and each copy must find its own
  // spec. Each file is written fresh and renamed into place (WriteFileAtomic), so a name left in
  // the folder is replaced, never written through.
  const fs::path copy = folder / ("modelnew_shim" + shared_object.extension().string());
  auto bytes = ReadFile(shared_object);
  if (!bytes.ok()) return bytes.error();
  auto place = [&]() -> Status {
    if (auto status = WriteFileAtomic(folder / kCandidateSpecFile, spec_json); !status.ok()) return status;
    return WriteFileAtomic(copy, *bytes);
  };
  Status placed = place();
  if (!placed.ok()) {  // a folder in the way of a file: start the folder afresh, once
    fs::remove_all(folder, error);
    fs::create_directory(folder, error);
    placed = place();
  }
  if (!placed.ok()) {
    return MakeError(ErrorKind::kIo, "cannot place ksmith's shim {} in the candidate's build folder {}: {}",
                     shared_object.string(), build_directory.string(), placed.error().message);
  }
  return copy;
}

std::string ProblemSizesWhereReduced(const nlohmann::json& analysis, const DimValues& shape) {
  const auto constants = analysis.value("constants", nlohmann::json::object());
  std::string sizes;
  bool reduced = false;
  const auto constant_dims = analysis.value("constant_dims", nlohmann::json::object());
  for (const auto& [constant, dim] : constant_dims.items()) {
    const auto own = constants.find(constant);
    const auto found = dim.is_string() ? shape.find(dim.get<std::string>()) : shape.end();
    if (own == constants.end() || !own->is_number_integer() || found == shape.end()) continue;
    reduced = reduced || found->second != own->get<int64_t>();
    sizes += fmt::format("{}{}={}", sizes.empty() ? "" : ", ", constant, own->get<int64_t>());
  }
  return reduced ? sizes : std::string();
}

}  // namespace ksmith
