#include "kernelbench/candidate.h"

#include <fmt/format.h>

#include "kernelbench/shim.h"

namespace ksmith {

Result<std::string> RenderKernelBenchCandidate(const nlohmann::json& analysis, std::string_view python_source,
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
  shim->spec_json = spec.dump();
  return RenderShim(*shim);
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
