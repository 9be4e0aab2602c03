#include "binary/vector_code.h"

#include <array>
#include <sstream>
#include <string>

#include "binary/disassembly.h"
#include "core/json_fields.h"

namespace ksmith {
namespace {

// The arithmetic of an SSE/AVX floating-point mnemonic, without its precision suffix and the
// AVX `v` prefix. Moves, shuffles, logic (the xor that zeroes a register) and conversions are
// not arithmetic: they say nothing about how wide the kernel computes.
constexpr std::array<std::string_view, 14> kArithmetic = {
    "add", "sub", "mul", "div", "max", "min", "sqrt", "rsqrt", "rcp", "hadd", "fmadd", "fmsub", "fnmadd", "fnmsub"};

bool IsArithmetic(std::string_view stem) {
  // vfmadd231ps -> fmadd231, vrsqrt14ps -> rsqrt14: the digits (an FMA's operand order, an
  // AVX-512 estimate's precision) do not change what it computes.
  while (!stem.empty() && stem.back() >= '0' && stem.back() <= '9') stem.remove_suffix(1);
  if (stem.ends_with("addsub")) return true;
  for (std::string_view name : kArithmetic) {
    if (stem == name) return true;
  }
  return false;
}

}  // namespace

int VectorCode::widest_vector_bits() const {
  if (arithmetic_512_bit > 0) return 512;
  if (arithmetic_256_bit > 0) return 256;
  if (arithmetic_128_bit > 0) return 128;
  return 0;
}

// Field list (core/json_fields.h), found by argument-dependent lookup.
template <class Self, class Io>
void Fields(Self& self, Io& io) requires std::is_same_v<std::remove_const_t<Self>, VectorCode> {
  io("instructions", self.instructions);
  io("packed_single", self.packed_single);
  io("packed_double", self.packed_double);
  io("scalar_float", self.scalar_float);
  io("arithmetic_512_bit", self.arithmetic_512_bit);
  io("arithmetic_256_bit", self.arithmetic_256_bit);
  io("arithmetic_128_bit", self.arithmetic_128_bit);
  io("fma", self.fma);
  io("openmp_parallel", self.openmp_parallel);
}

nlohmann::json VectorCode::ToJson() const { return json_fields::ToObject(*this); }
VectorCode VectorCode::FromJson(const nlohmann::json& json) { return json_fields::FromObject<VectorCode>(json); }

VectorCode SummarizeVectorCode(std::string_view objdump_output) {
  VectorCode code;
  std::istringstream lines{std::string(objdump_output)};
  for (std::string line; std::getline(lines, line);) {
    // "    1139:\tvaddps %zmm1,%zmm1,%zmm0": an address, a colon and a tab open an instruction.
    const size_t tab = line.find('\t');
    if (tab == std::string::npos || line.find(':') > tab) continue;
    const std::string_view text = std::string_view(line).substr(tab + 1);
    const size_t end = text.find_first_of(" \t");
    const std::string_view mnemonic = text.substr(0, end);
    const std::string_view operands = end == std::string_view::npos ? std::string_view() : text.substr(end);
    if (mnemonic.empty() || mnemonic == "(bad)") continue;
    ++code.instructions;
    if (mnemonic.starts_with("call") && operands.find("<GOMP_parallel") != std::string_view::npos) {
      ++code.openmp_parallel;
      continue;
    }
    std::string_view stem = mnemonic;
    if (stem.starts_with('v')) stem.remove_prefix(1);
    if (stem.size() < 3) continue;
    const std::string_view suffix = stem.substr(stem.size() - 2);
    const bool packed = suffix == "ps" || suffix == "pd";
    const bool scalar = suffix == "ss" || suffix == "sd";
    if ((!packed && !scalar) || !IsArithmetic(stem.substr(0, stem.size() - 2))) continue;
    if (stem.starts_with("fm") || stem.starts_with("fnm")) ++code.fma;
    if (scalar) {
      ++code.scalar_float;
      continue;
    }
    (suffix == "ps" ? code.packed_single : code.packed_double) += 1;
    if (operands.find("%zmm") != std::string_view::npos) {
      ++code.arithmetic_512_bit;
    } else if (operands.find("%ymm") != std::string_view::npos) {
      ++code.arithmetic_256_bit;
    } else {
      ++code.arithmetic_128_bit;
    }
  }
  return code;
}

Result<VectorCode> ReadVectorCode(const std::filesystem::path& shared_object) {
  auto text = Disassemble(shared_object);
  if (!text.ok()) return text.error();
  return SummarizeVectorCode(*text);
}

}  // namespace ksmith
