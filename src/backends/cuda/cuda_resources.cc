#include "backends/cuda/cuda_resources.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <regex>

#include "core/strings.h"

namespace ksmith {
namespace {

int64_t ToInt(const std::string& digits) { return std::strtoll(digits.c_str(), nullptr, 10); }

// The part of `line` after "ptxas info    :" (any spacing), or nullopt for other lines.
std::optional<std::string_view> PtxasInfoBody(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with("ptxas info")) return std::nullopt;
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return Trim(line.substr(colon + 1));
}

void ReadUsedLine(const std::string& body, KernelResources& kernel) {
  static const std::regex registers(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex shared(R"((\d+) bytes smem)");
  static const std::regex cumulative(R"((\d+) bytes cumulative stack size)");
  static const std::regex constant(R"((\d+) bytes cmem\[\d+\])");
  std::smatch match;
  if (std::regex_search(body, match, registers)) kernel.registers = static_cast<int>(ToInt(match[1]));
  if (std::regex_search(body, match, barriers)) kernel.barriers = static_cast<int>(ToInt(match[1]));
  if (std::regex_search(body, match, shared)) kernel.shared_memory_bytes = ToInt(match[1]);
  if (std::regex_search(body, match, cumulative)) kernel.cumulative_stack_bytes = ToInt(match[1]);
  kernel.constant_memory_bytes = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), constant); it != std::sregex_iterator(); ++it) {
    kernel.constant_memory_bytes += ToInt((*it)[1]);
  }
}

bool Worth(const KernelResources& function) {
  return function.is_kernel || function.stack_frame_bytes > 0 || function.spill_store_bytes > 0 ||
         function.spill_load_bytes > 0;
}

}  // namespace

std::string DemangleSymbol(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

std::vector<KernelResources> ParsePtxasInfo(std::string_view log) {
  // ptxas reports each function in up to three lines:
  //   ptxas info    : Compiling entry function '_Z3addPKfPfl' for 'sm_90a'   (kernels only)
  //   ptxas info    : Function properties for _Z3addPKfPfl
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 12 registers, used 0 barriers, 1024 bytes smem[, 360 bytes cmem[0]]
  // A device function that was not inlined has the middle two only.
  static const std::regex entry(R"(^Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex properties(R"(^Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  std::vector<KernelResources> functions;
  std::optional<size_t> current;
  std::string arch;
  for (const auto& line : SplitLines(log)) {
    std::smatch match;
    if (const auto body_view = PtxasInfoBody(line)) {
      const std::string body(*body_view);
      if (std::regex_search(body, match, entry)) {
        KernelResources kernel;
        kernel.mangled_name = match[1];
        arch = kernel.arch = match[2];
        functions.push_back(std::move(kernel));
        current = functions.size() - 1;
      } else if (std::regex_search(body, match, properties)) {
        if (!current || functions[*current].mangled_name != match[1].str()) {
          KernelResources function;
          function.mangled_name = match[1];
          function.arch = arch;
          function.is_kernel = false;
          functions.push_back(std::move(function));
          current = functions.size() - 1;
        }
      } else if (body.starts_with("Used ") && current) {
        ReadUsedLine(body, functions[*current]);
      }
      continue;
    }
    if (current && std::regex_search(line, match, frame)) {
      functions[*current].stack_frame_bytes = ToInt(match[1]);
      functions[*current].spill_store_bytes = ToInt(match[2]);
      functions[*current].spill_load_bytes = ToInt(match[3]);
    }
  }
  std::vector<KernelResources> kept;
  for (auto& function : functions) {
    if (!Worth(function)) continue;
    function.name = DemangleSymbol(function.mangled_name);
    kept.push_back(std::move(function));
  }
  return kept;
}

// ---------------------------------------------------------------------------------------- SASS

namespace {

std::vector<std::string_view> SplitDots(std::string_view opcode) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t dot = opcode.find('.');
    parts.push_back(opcode.substr(0, dot));
    if (dot == std::string_view::npos) break;
    opcode.remove_prefix(dot + 1);
  }
  return parts;
}

// The instruction in a cuobjdump line "  /*0010*/  @!P0 LDG.E.128 R4, [R2.64] ;  /* 0x... */":
// the text between the address comment and the ';', predicate removed. Empty for other lines
// (including the encoding-only continuation lines, whose comment has spaces inside).
std::string_view InstructionText(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with("/*")) return {};
  const size_t close = line.find("*/");
  if (close == std::string_view::npos || close < 3) return {};
  for (size_t i = 2; i < close; ++i) {
    if (!std::isxdigit(static_cast<unsigned char>(line[i]))) return {};
  }
  std::string_view text = line.substr(close + 2);
  text = text.substr(0, text.find(';'));
  text = Trim(text);
  // Maxwell-era dual-issue groups: "{ FADD ... ;" and "}"
  while (!text.empty() && (text.front() == '{' || text.front() == '}')) text = Trim(text.substr(1));
  if (text.starts_with('@')) {
    const size_t space = text.find_first_of(" \t");
    text = space == std::string_view::npos ? std::string_view{} : Trim(text.substr(space));
  }
  return text;
}

int LoadBits(const std::vector<std::string_view>& parts) {
  int bits = 32;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "64") bits = 64;
    if (parts[i] == "128") bits = 128;
    if (parts[i] == "256") bits = 256;
  }
  return bits;
}

void Count(std::string_view text, SassCounts& counts) {
  const size_t space = text.find_first_of(" \t");
  const std::string_view opcode = text.substr(0, space);
  const std::string_view operands = space == std::string_view::npos ? std::string_view{} : Trim(text.substr(space));
  if (opcode.empty()) return;
  const auto parts = SplitDots(opcode);
  const std::string_view base = parts[0];
  if (base == "NOP") return;
  ++counts.instructions;
  if (base.ends_with("MMA")) {
    ++counts.tensor_core;
    ++counts.tensor_opcodes[std::string(opcode)];
  } else if (base == "WARPGROUP") {
    ++counts.warpgroup;
  } else if (base.starts_with("UTMA") || base.starts_with("UBLK")) {
    ++counts.tma;
  } else if (base == "FFMA" || base == "FFMA2" || base == "DFMA" || base == "HFMA" || base == "HFMA2") {
    // ptxas zeroes registers with "HFMA2.MMA Rx, -RZ, RZ, 0, 0": a move, not arithmetic.
    const bool zeroing = opcode == "HFMA2.MMA" && operands.find("-RZ, RZ, 0, 0") != std::string_view::npos;
    if (!zeroing) ++counts.fma;
  } else if (base == "LDG" || base == "LDS" || base == "LD") {
    ++counts.loads;
    const int bits = LoadBits(parts);
    if (bits >= 64) ++counts.wide_loads;
    if (bits >= 128) ++counts.loads_128_bit;
  } else if (base == "LDL") {
    ++counts.local_loads;
  } else if (base == "STL") {
    ++counts.local_stores;
  }
}

}  // namespace

SassSummary SummarizeSass(std::string_view cuobjdump_output) {
  SassSummary summary;
  std::string arch;
  KernelSass* current = nullptr;
  for (const auto& raw : SplitLines(cuobjdump_output)) {
    const std::string_view line = Trim(raw);
    if (line.starts_with("code for ")) {
      arch = std::string(Trim(line.substr(9)));
      continue;
    }
    if (line.starts_with("arch = ")) {
      arch = std::string(Trim(line.substr(7)));
      continue;
    }
    if (line.starts_with("Function")) {
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      KernelSass kernel;
      kernel.mangled_name = std::string(Trim(line.substr(colon + 1)));
      kernel.name = DemangleSymbol(kernel.mangled_name);
      kernel.arch = arch;
      summary.kernels.push_back(std::move(kernel));
      current = &summary.kernels.back();
      continue;
    }
    if (current == nullptr) continue;
    const std::string_view text = InstructionText(line);
    if (!text.empty()) Count(text, current->counts);
  }
  for (const auto& kernel : summary.kernels) summary.total.Add(kernel.counts);
  return summary;
}

}  // namespace ksmith
