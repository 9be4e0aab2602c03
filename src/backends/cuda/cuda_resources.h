// What the CUDA toolchain says about a built kernel, read from its text output: ptxas's resource
// report (`-Xptxas -v`) and the SASS that `cuobjdump -sass` disassembles. Pure parsers, so the
// verdict and the prompts can show registers, spills and tensor-core use without a GPU.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compile/kernel_resources.h"

namespace ksmith {

/// Every kernel in the `ptxas info` lines of an nvcc log (nvcc 12 and 13 layouts), in log order.
/// Lines it does not know are skipped; a log without ptxas output gives an empty list.
std::vector<KernelResources> ParsePtxasInfo(std::string_view log);

/// Reads `cuobjdump -sass` output (with or without the encoding comments, any architecture).
/// Instructions outside a "Function :" block are ignored.
SassSummary SummarizeSass(std::string_view cuobjdump_output);

/// The C++ name behind an Itanium-mangled one; other names come back unchanged.
std::string DemangleSymbol(const std::string& name);

}  // namespace ksmith
