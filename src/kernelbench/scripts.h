// The trusted Python that `ksmith import kernelbench`, the build sandbox, the warm step and the
// generated shims run: the ksmith_kb package (src/kernelbench/ksmith_kb/), compiled into ksmith
// one string per module, so that no install path has to be found at run time.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"

namespace ksmith {

/// One module of the package: ksmith_kb/<name>.py, "__init__" being the package itself.
struct KernelBenchModule {
  std::string_view name;
  std::string_view text;
};

/// Every module of the package, in name order (generated from ksmith_kb/*.py).
std::span<const KernelBenchModule> KernelBenchPackage();

/// The text of ksmith_kb/<name>.py; empty if the package has no such module.
std::string_view KernelBenchModuleText(std::string_view name);

/// Writes the package into `folder`/python/ksmith_kb/ and `folder`/`script`, which runs
/// ksmith_kb.<module>'s main(sys.argv[1:]) from there: `python3 [-I] folder/script ARGS`.
Status WriteKernelBenchScript(const std::filesystem::path& folder, std::string_view script, std::string_view module);

/// A digest of every module's name and text: in the key of each cache whose content the package
/// decides (the build sandbox's, the warm step's), so that editing any module misses them.
std::string KernelBenchPackageDigest();

}  // namespace ksmith
