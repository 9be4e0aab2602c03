#include "backends/cuda/nvrtc_form.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "backends/cuda/nvcc_compiler.h"
#include "core/source_text.h"
#include "core/strings.h"
#include "tensor/dtype.h"

namespace ksmith {
namespace {

// Bump when the wrapper's text or the module's layout changes (part of every build's key).
constexpr const char* kWrapperVersion = "ksmith-nvrtc-wrapper-2";

size_t LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// As `#__VA_ARGS__` spells it: whitespace runs as one space, none at either end.
std::string Stringized(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::filesystem::path NvrtcDeviceCodeOf(const std::filesystem::path& shared_object,
                                        const std::filesystem::path& cache_directory) {
  namespace fs = std::filesystem;
  // Lexically, and no link followed: a link elsewhere to a compiled object names nothing.
  std::error_code error;
  const fs::path objects = fs::absolute(cache_directory / "cuda-objects", error).lexically_normal();
  const fs::path library = fs::absolute(shared_object, error).lexically_normal();
  if (error || library.extension() != ".so" || library.parent_path() != objects) return {};
  auto regular = [](const fs::path& path) {
    std::error_code status_error;
    return fs::symlink_status(path, status_error).type() == fs::file_type::regular;
  };
  const fs::path cubin = fs::path(library).replace_extension(kNvrtcCubinExtension);
  if (!regular(library) || !regular(cubin) || !regular(fs::path(library).replace_extension(kNvrtcKernelsExtension))) {
    return {};
  }
  return cubin;
}

std::string ParameterKinds(const std::string& demangled) {
  // The parameter list is the last top-level parenthesized group.
  const size_t close = demangled.rfind(')');
  if (close == std::string::npos) return "";
  size_t open = close;
  for (int depth = 0; open-- > 0;) {
    if (demangled[open] == ')') ++depth;
    if (demangled[open] == '(' && depth-- == 0) break;
  }
  if (open == std::string::npos) return "";
  const std::string list = demangled.substr(open + 1, close - open - 1);
  if (Trim(list).empty() || Trim(list) == "void") return "";
  static const std::regex integer(
      R"(^(const )?(bool|char|signed char|unsigned char|short|unsigned short|int|unsigned int|long|unsigned long|long long|unsigned long long|__int128|unsigned __int128)( const)?$)");
  static const std::regex floating(R"(^(const )?(float|double)( const)?$)");
  std::string kinds;
  int depth = 0;
  std::string parameter;
  auto finish = [&] {
    const std::string text(Trim(parameter));
    if (text.ends_with('*') || text.ends_with("* const") || text.find("(*)") != std::string::npos) {
      kinds += 'p';
    } else if (std::regex_match(text, integer)) {
      kinds += 'i';
    } else if (std::regex_match(text, floating)) {
      kinds += 'f';
    } else {
      kinds += 'o';
    }
    parameter.clear();
  };
  for (char c : list) {
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      finish();
    } else {
      parameter += c;
    }
  }
  finish();
  return kinds;
}

bool IsNvrtcForm(std::string_view source) {
  static const std::regex include(R"(#\s*include\s*[<"]ksmith/launch\.h[>"])");
  // Comments out; the quoted include's target is a literal, kept.
  return std::regex_search(StripComments(source), include);
}

Result<std::vector<std::string>> LaunchedKernels(std::string_view source) {
  // Literals blanked: a KSMITH_LAUNCH( in a message is no launch.
  const std::string text = StripCommentsAndStrings(source);
  constexpr std::string_view kMacro = "KSMITH_LAUNCH";
  std::vector<std::string> kernels;
  std::set<std::string> seen;
  for (size_t at = text.find(kMacro); at != std::string::npos; at = text.find(kMacro, at + kMacro.size())) {
    if (at > 0 && IsIdentifierChar(text[at - 1])) continue;
    size_t i = at + kMacro.size();
    if (i < text.size() && IsIdentifierChar(text[i])) continue;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != '(') continue;  // the name alone (in a comment's place, a #ifdef)
    // The arguments, split at the commas outside any bracket: the kernel is all after the fourth.
    int depth = 0;
    size_t commas = 0, kernel_start = std::string::npos, end = std::string::npos;
    for (size_t j = i + 1; j < text.size(); ++j) {
      const char c = text[j];  // literals are blank: their brackets and commas are gone
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) {
          end = j;
          break;
        }
        --depth;
      } else if (c == ',' && depth == 0) {
        if (++commas == 4) kernel_start = j + 1;
      }
    }
    if (end == std::string::npos) {
      return MakeError(ErrorKind::kInvalidArgument, "line {}: KSMITH_LAUNCH( is never closed", LineOf(text, at));
    }
    const std::string kernel = kernel_start == std::string::npos ? "" : Stringized(text.substr(kernel_start, end - kernel_start));
    if (kernel.empty()) {
      return MakeError(ErrorKind::kInvalidArgument,
                       "line {}: KSMITH_LAUNCH takes (grid, block, shared_bytes, stream, kernel), then the "
                       "kernel's arguments: the kernel is missing",
                       LineOf(text, at));
    }
    if (seen.insert(kernel).second) kernels.push_back(kernel);
  }
  return kernels;
}

std::string NvrtcHostWrapper(const Task& task, const std::string& kernel_path) {
  const CudaEntryBinding entry = BindCudaEntry(task, KernelRole::kCandidate);
  // The half-precision headers cost the host compiler about 0.2 s: only where the task has them.
  bool half = false, bfloat = false;
  for (const auto* tensors : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *tensors) {
      half = half || tensor.dtype == DType::kFloat16;
      bfloat = bfloat || tensor.dtype == DType::kBFloat16;
    }
  }
  return fmt::format(
      "// Generated by ksmith ({}): the candidate's host code, bound to the CUDA worker's entry point.\n"
      "#include <cstddef>\n#include <cstdint>\n{}{}"
      "#include <ksmith/launch.h>\n"
      "#include \"{}\"\n"
      "#line 1 \"ksmith-expected-signature\"\n"
      "{};\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void ksmith_entry("
      "void* const* pointers, const int64_t* scalars, void* stream) {{\n"
      "  (void)pointers; (void)scalars;\n  {};\n}}\n",
      kWrapperVersion, half ? "#include <cuda_fp16.h>\n" : "", bfloat ? "#include <cuda_bf16.h>\n" : "", kernel_path,
      entry.declaration, entry.call);
}

}  // namespace ksmith
