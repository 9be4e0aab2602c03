#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace ksmith {

/// Where the CUDA toolkit keeps its headers and libraries, as nvcc itself uses them. A toolkit's
/// layout varies (include/ beside bin/, only under targets/<arch>/, Debian's /usr/include, nvcc
/// behind a wrapper script), so ksmith asks nvcc (`nvcc --dryrun`) rather than guessing from the
/// path of its executable; a compiler that does not say falls back to <root>/include and <root>/lib64.
struct ToolkitPaths {
  std::filesystem::path root;                              // nvcc's TOP: bin/, nvvm/ (cicc, ptxas)
  std::vector<std::filesystem::path> include_dirs;         // nvcc's -I: cuda_runtime.h, crt/
  std::vector<std::filesystem::path> system_include_dirs;  // nvcc's -isystem: CCCL (cuda/std/...)
  std::vector<std::filesystem::path> library_dirs;         // nvcc's -L: libcudart
};

/// The paths in the `#$ TOP=`, `#$ INCLUDES=`, `#$ SYSTEM_INCLUDES=` and `#$ LIBRARIES=` lines of
/// `nvcc --dryrun`'s output (an option's path joined to it or as the next word), symlinks
/// resolved (Landlock grants what they name) and existing folders only; empty where a line is
/// missing.
ToolkitPaths ParseNvccDryRun(std::string_view dry_run_output);

/// ParseNvccDryRun where it found them, else the folders a toolkit at `toolkit_root` has.
ToolkitPaths ToolkitPathsOr(ToolkitPaths from_nvcc, const std::filesystem::path& toolkit_root);

}  // namespace ksmith
