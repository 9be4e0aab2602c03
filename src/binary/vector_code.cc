#include "binary/vector_code.h"

#include <array>
#include <sstream>
#include <string>

#include "core/strings.h"
#include "core/subprocess.h"

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

nlohmann::json VectorCode::ToJson() const {
  return {{"instructions", instructions},
          {"packed_single", packed_single},
          {"packed_double", packed_double},
          {"scalar_float", scalar_float},
          {"arithmetic_512_bit", arithmetic_512_bit},
          {"arithmetic_256_bit", arithmetic_256_bit},
          {"arithmetic_128_bit", arithmetic_128_bit},
          {"fma", fma},
          {"openmp_parallel", openmp_parallel}};
}

VectorCode VectorCode::FromJson(const nlohmann::json& json) {
  VectorCode code;
  if (!json.is_object()) return code;
  auto read = [&json](const char* key, int64_t& field) {
    if (const auto found = json.find(key); found != json.end() && found->is_number_integer()) field = found->get<int64_t>();
  };
  read("instructions", code.instructions);
  read("packed_single", code.packed_single);
  read("packed_double", code.packed_double);
  read("scalar_float", code.scalar_float);
  read("arithmetic_512_bit", code.arithmetic_512_bit);
  read("arithmetic_256_bit", code.arithmetic_256_bit);
  read("arithmetic_128_bit", code.arithmetic_128_bit);
  read("fma", code.fma);
  read("openmp_parallel", code.openmp_parallel);
  return code;
}

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
  SpawnOptions options;
  options.argv = {"objdump", "-d", "--no-show-raw-insn", "-M", "att", shared_object.string()};
  options.environment = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
  auto run = RunCommand(options, std::chrono::seconds(60), size_t{256} << 20);
  if (!run.ok()) return run.error();
  if (!run->succeeded()) {
    return MakeError(ErrorKind::kIo, "objdump failed on {} ({}): {}", shared_object.string(), run->Describe(),
                     Tail(run->output, 500));
  }
  return SummarizeVectorCode(run->output);
}

}  // namespace ksmith
