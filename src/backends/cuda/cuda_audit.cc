#include "backends/cuda/cuda_audit.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "backends/cuda/cuda_resources.h"
#include "backends/cuda/nvrtc_form.h"
#include "binary/shared_library.h"
#include "core/strings.h"

namespace ksmith {
namespace {

constexpr const char* kLibraryWhy =
    "this task requires the kernel to compute the operation itself, not call a library that "
    "implements it";

/// A library a task may allow by name in `allowed_libraries`.
struct CudaLibrary {
  const char* name;                     // "cublas"
  const char* header;                   // regex over the include target
  std::vector<const char*> needed;      // DT_NEEDED prefixes: "libcublas.so"
  std::vector<const char*> symbols;     // imported symbol prefixes: "cublas"
  const char* why;
};

const std::vector<CudaLibrary>& Libraries() {
  static const std::vector<CudaLibrary> libraries = {
      {"cublas", R"(cublas(_v2|_api|Lt|Xt)?\.h)", {"libcublas.so", "libcublasLt.so"}, {"cublas"}, kLibraryWhy},
      {"cudnn", R"(cudnn[^/]*\.h)", {"libcudnn"}, {"cudnn"}, kLibraryWhy},
      {"cufft", R"(cufft[^/]*\.h)", {"libcufft"}, {"cufft"}, kLibraryWhy},
      {"cusparse", R"(cusparse[^/]*\.h)", {"libcusparse"}, {"cusparse"}, kLibraryWhy},
      {"cusolver", R"(cusolver[^/]*\.h)", {"libcusolver"}, {"cusolver"}, kLibraryWhy},
      // curand_kernel.h (the device-side generators) stays allowed.
      {"curand", R"(curand\.h)", {"libcurand"}, {"curand"}, kLibraryWhy},
      {"nccl", R"(nccl[^/]*\.h)", {"libnccl"}, {"nccl"}, kLibraryWhy},
      {"cutlass", R"((cutlass|cute)/.*)", {}, {}, kLibraryWhy},
      {"blas", R"(cblas\.h|openblas.*|mkl.*)", {"libopenblas", "libblas", "libcblas", "libmkl"},
       {"cblas_", "openblas_", "mkl_", "sgemm_", "dgemm_"}, kLibraryWhy},
      {"thrust", R"(thrust/.*)", {}, {},
       "Thrust's algorithms run on the legacy default stream and synchronize, outside the stream "
       "the candidate is given, and its host paths compute on the CPU; use CUB or write the kernel"},
  };
  return libraries;
}

bool Allowed(const Task& task, const char* library) {
  return std::find(task.allowed_libraries.begin(), task.allowed_libraries.end(), library) !=
         task.allowed_libraries.end();
}

/// The CPU rules that apply to CUDA host code, with CUDA's own additions.
std::vector<SourceRule> SourceRules(const Task& task) {
  std::vector<SourceRule> rules;
  for (SourceRule rule : CpuSourceRules()) {
    const std::string_view name = rule.rule;
    // PTX in device code is honest; host machine code is caught by the instruction scan.
    if (name == "inline_assembly") continue;
    // Quoted includes are rewritten to <...> before scanning (see NormalizeIncludes).
    if (name == "local_include") continue;
    if (name == "thread_creation") {
      rule.why = "candidates may not start host threads: the work belongs on the GPU, on `stream`";
    }
    rules.push_back(rule);
  }
  const std::vector<SourceRule> cuda = {
      {"include_trick", R"(^\s*#\s*include_next\b|^\s*#\s*include\s*[A-Za-z_])",
       "an include must name a header directly (#include <...>); computed includes and "
       "#include_next can read files at build time"},
      {"driver_api", R"(^\s*#\s*include\s*<\s*(cuda\.h|cudaTypedefs\.h)\s*>)",
       "the CUDA driver API is not allowed: candidates share the worker's runtime context; use "
       "the runtime API (cuda_runtime.h)"},
      {"profiling",
       R"(^\s*#\s*include\s*<\s*(cupti[^>]*|nvml\.h|cuda_profiler_api\.h|cudaProfiler\.h)\s*>)",
       "candidates may not drive the profiler or query and control the GPU through CUPTI or NVML"},
      {"dynamic_loading", R"(^\s*#\s*include\s*<\s*(nvrtc\.h|nvJitLink\.h|nvPTXCompiler\.h)\s*>)",
       "candidates may not compile or load code at run time"},
      {"context_control", R"(\b(cudaDeviceReset|cudaThreadExit)\b|\bcudaCtx\w+)",
       "the CUDA context belongs to the worker and the timing: candidates may not reset or "
       "change it"},
      {"device_selection", R"(\b(cudaSetDevice|cudaSetDeviceFlags|cudaSetValidDevices)\b)",
       "the worker chooses the GPU and its flags; candidates run on the current device"},
      {"driver_api", R"(\bcudaGetDriverEntryPoint\w*)",
       "fetching driver API entry points bypasses the audit of what the candidate calls"},
      // cuComplex.h's arithmetic (cuCaddf, cuCrealf, ...) is ordinary math, not the driver.
      {"driver_api", R"(\bcu(?!C(real|imag|add|sub|mul|div|fma|abs|onj|omplex))[A-Z]\w*\s*\()",
       "the CUDA driver API (cu* functions) is not allowed; use the runtime API"},
      {"profiling", R"(\b(cudaProfilerStart|cudaProfilerStop)\b|\b(cupti|nvml)[A-Z]\w*\s*\()",
       "candidates may not drive the profiler or query and control the GPU through CUPTI or NVML"},
      {"ipc", R"(\bcudaIpc\w+)", "candidates may not share GPU memory with other processes"},
      {"dynamic_loading", R"(\bcudaLibraryLoad\w*|\bcudaLibraryGet\w*)",
       "candidates may not load code at run time"},
      {"timers", R"(\bcudaEventElapsedTime\w*)",
       "candidates may not read clocks: a kernel that knows the time can tell warm-up from "
       "measurement"},
  };
  rules.insert(rules.end(), cuda.begin(), cuda.end());
  // One include pattern per library, built once: rules point into these strings.
  static const std::vector<std::string> include_patterns = [] {
    std::vector<std::string> patterns;
    for (const auto& library : Libraries()) {
      patterns.push_back(fmt::format(R"(^\s*#\s*include\s*<\s*({})\s*>)", library.header));
    }
    return patterns;
  }();
  for (size_t i = 0; i < Libraries().size(); ++i) {
    const CudaLibrary& library = Libraries()[i];
    if (Allowed(task, library.name)) continue;
    rules.push_back({library.name == std::string_view("thrust") ? "thrust" : "library_call",
                     include_patterns[i].c_str(), library.why});
  }
  return rules;
}

/// `stripped` (comments and literals blanked) with each quoted include rewritten as <target>,
/// the target read from `text`: the include rules then judge both spellings alike.
std::string NormalizeIncludes(std::string_view text, const std::string& stripped) {
  static const std::regex quoted_directive(R"(^\s*#\s*include\s*")");
  static const std::regex quoted_target(R"re(#\s*include\s*"([^"]*)")re");
  const auto raw_lines = SplitLines(text);
  const auto lines = SplitLines(stripped);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch match;
    if (i < raw_lines.size() && std::regex_search(lines[i], quoted_directive) &&
        std::regex_search(raw_lines[i], match, quoted_target)) {
      out += "#include <" + match[1].str() + ">";
    } else {
      out += lines[i];
    }
    out += '\n';
  }
  return out;
}

int LineOf(const std::string& text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// Names reserved for NVIDIA's APIs: the runtime (cudaX), the driver (cuX), CUPTI and NVML.
// A capital must follow, so that a kernel called cuda_add or cudakernel stays legal.
const std::regex& ApiName() {
  static const std::regex name(R"(^(cuda|cupti|nvml|cu)[A-Z])");
  return name;
}

std::string ApiDefinitionWhy(std::string_view name) {
  return fmt::format("defines {}: a CUDA API symbol (cuda*, cu*, cupti* and nvml* names followed "
                     "by a capital are reserved for NVIDIA's APIs; a definition could stand in for "
                     "the real one); rename it",
                     name);
}

struct CallRule {
  const char* rule;
  const char* why;
  std::vector<const char*> exact;
  std::vector<const char*> prefixes;
};

const std::vector<CallRule>& RuntimeCallRules() {
  static const std::vector<CallRule> rules = {
      {"context_control",
       "the CUDA context belongs to the worker and the timing: candidates may not reset or change it",
       {"cudaDeviceReset", "cudaThreadExit"}, {"cudaCtx"}},
      {"device_selection", "the worker chooses the GPU and its flags; candidates run on the current device",
       {"cudaSetDevice", "cudaSetDeviceFlags", "cudaSetValidDevices"}, {}},
      {"driver_api", "the CUDA driver API is not allowed (nor fetching its entry points); use the runtime API",
       {}, {"cudaGetDriverEntryPoint"}},
      {"profiling", "candidates may not drive the profiler or query and control the GPU through CUPTI or NVML",
       {"cudaProfilerStart", "cudaProfilerStop"}, {"cupti", "nvml"}},
      {"ipc", "candidates may not share GPU memory with other processes", {}, {"cudaIpc"}},
      {"dynamic_loading", "candidates may not load code at run time", {},
       {"cudaLibraryLoad", "cudaLibraryGet", "nvrtc", "nvJitLink", "nvPTXCompiler"}},
      {"timers", "candidates may not read clocks: a kernel that knows the time can tell warm-up from measurement",
       {}, {"cudaEventElapsedTime"}},
  };
  return rules;
}

bool Matches(const CallRule& rule, std::string_view name) {
  for (const char* exact : rule.exact) {
    if (name == exact) return true;
  }
  for (const char* prefix : rule.prefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool IsDriverCall(const std::string& name) {
  return name.size() > 2 && name.starts_with("cu") && std::isupper(static_cast<unsigned char>(name[2]));
}

// Libraries every nvcc-built candidate links (with -cudart shared), and glibc's parts.
bool IsBaseLibrary(std::string_view needed) {
  for (const char* prefix : {"libcudart.so", "libc.so", "libm.so", "libstdc++.so", "libgcc_s.so",
                             "ld-linux", "libpthread.so", "librt.so"}) {
    if (needed.starts_with(prefix)) return true;
  }
  return false;
}

// Template instances of the C++ standard library get default visibility from libstdc++'s own
// pragmas, whatever -fvisibility says: exporting them is the compiler's doing, not the candidate's.
bool IsStandardLibraryInstance(const std::string& mangled) {
  if (!mangled.starts_with("_Z")) return false;
  std::string name = DemangleSymbol(mangled);
  for (const char* prefix : {"typeinfo name for ", "typeinfo for ", "vtable for ", "VTT for ",
                             "guard variable for "}) {
    if (name.starts_with(prefix)) name.erase(0, std::string_view(prefix).size());
  }
  auto in_std = [](std::string_view text) {
    return text.starts_with("std::") || text.starts_with("__gnu_cxx::") || text.starts_with("__cxxabiv1::");
  };
  if (in_std(name)) return true;
  // A function template's demangled name starts with its return type: "void std::sort<...>(...)".
  const size_t space = name.find(' ');
  const size_t open = name.find_first_of("(<");
  return space != std::string::npos && space < open && in_std(std::string_view(name).substr(space + 1));
}

}  // namespace

std::vector<AuditFinding> AuditCudaSource(std::string_view text, const Task& task) {
  const std::string stripped = StripCommentsAndStrings(text);
  std::vector<AuditFinding> findings =
      ScanSource(text, NormalizeIncludes(text, stripped), SourceRules(task));

  // PTX reads the wall clock through %globaltimer, inside an asm string.
  static const std::vector<SourceRule> ptx_rules = {
      {"timers", R"(%globaltimer)",
       "candidates may not read clocks: a kernel that knows the time can tell warm-up from "
       "measurement"}};
  for (auto& finding : ScanSource(text, StripComments(text), ptx_rules)) findings.push_back(std::move(finding));

  // Definitions can span lines, so they are searched in the whole text. No parentheses inside
  // the parameter list: "if (cudaMalloc(&p, n)) {" must not read as a definition.
  static const std::regex definition(R"(\b((cuda|cupti|nvml|cu)[A-Z]\w*)\s*\([^;{}()]*\)\s*(noexcept\s*)?\{)");
  for (auto it = std::sregex_iterator(stripped.begin(), stripped.end(), definition); it != std::sregex_iterator(); ++it) {
    const int line = LineOf(stripped, static_cast<size_t>(it->position(0)));
    findings.push_back({"api_definition", fmt::format("line {}: {}", line, ApiDefinitionWhy((*it)[1].str())), line});
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const AuditFinding& a, const AuditFinding& b) { return a.line < b.line; });
  return findings;
}

std::vector<AuditFinding> AuditCudaBinary(const DynamicSymbols& symbols, const Task& task, bool nvrtc_form) {
  std::vector<AuditFinding> findings;
  auto library_for = [&](auto matches) -> const CudaLibrary* {
    for (const auto& library : Libraries()) {
      if (matches(library)) return &library;
    }
    return nullptr;
  };

  for (const auto& needed : symbols.needed) {
    if (IsBaseLibrary(needed)) continue;
    const CudaLibrary* library = library_for([&](const CudaLibrary& candidate) {
      return std::any_of(candidate.needed.begin(), candidate.needed.end(),
                         [&](const char* prefix) { return needed.starts_with(prefix); });
    });
    if (library != nullptr && Allowed(task, library->name)) continue;
    findings.push_back(
        {library != nullptr ? "library_call" : "linked_library",
         library != nullptr
             ? fmt::format("links {}: {}", needed, library->why)
             : fmt::format("links {}: a CUDA candidate may use only the CUDA runtime and the C and "
                           "C++ standard libraries",
                           needed)});
  }

  for (const auto& name : symbols.imported) {
    // nvcc compiles the host side of every plain __device__ function as a stub that calls
    // ::exit, so honest kernels with helper functions import it. A candidate that really calls
    // it only ends its worker, which the evaluator reports as a crash: it cannot pass that way.
    if (name == "exit") continue;
    for (auto& finding : AuditImportedSymbol(name)) findings.push_back(std::move(finding));
    bool matched = false;
    for (const auto& rule : RuntimeCallRules()) {
      if (Matches(rule, name)) {
        findings.push_back({rule.rule, fmt::format("imports '{}': {}", name, rule.why)});
        matched = true;
      }
    }
    if (!matched && IsDriverCall(name)) {
      findings.push_back({"driver_api", fmt::format("imports '{}': the CUDA driver API is not "
                                                    "allowed; use the runtime API", name)});
    }
    const CudaLibrary* library = library_for([&](const CudaLibrary& candidate) {
      return std::any_of(candidate.symbols.begin(), candidate.symbols.end(),
                         [&](const char* prefix) { return name.starts_with(prefix); });
    });
    if (library != nullptr && !Allowed(task, library->name)) {
      findings.push_back({"library_call", fmt::format("imports '{}': {}", name, library->why)});
    }
  }

  for (const auto& name : symbols.exported) {
    if (name == kKernelEntrySymbol || IsStandardLibraryInstance(name)) continue;
    if (nvrtc_form && name == kNvrtcLauncherSymbol) continue;
    findings.push_back({"exports", fmt::format("exports '{}': a CUDA candidate exports only {} "
                                               "(everything else is built hidden)",
                                               name, kKernelEntrySymbol)});
  }

  for (const auto& name : symbols.defined) {
    if (std::regex_search(name, ApiName())) findings.push_back({"api_definition", ApiDefinitionWhy(name)});
  }
  return findings;
}

}  // namespace ksmith
