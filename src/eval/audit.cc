#include "eval/audit.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "binary/shared_library.h"
#include "core/json_fields.h"
#include "core/source_text.h"
#include "core/strings.h"

namespace ksmith {
namespace {

struct SymbolRule {
  const char* rule;
  const char* why;
  std::vector<const char*> exact;
  std::vector<const char*> prefixes;
};

// What an imported symbol may not be. Each rule says why, in words a model can act on.
const std::vector<SymbolRule>& SymbolRules() {
  static const std::vector<SymbolRule> rules = {
      {"process_creation", "candidates may not start processes or programs",
       {"fork", "vfork", "clone", "clone3", "execve", "execv", "execvp", "execvpe", "execl",
        "execlp", "execle", "fexecve", "system", "popen", "posix_spawn", "posix_spawnp", "daemon",
        "wait", "waitpid", "wait4"},
       {}},
      {"thread_creation", "candidates may use threads only through OpenMP pragmas",
       {"pthread_create", "thrd_create", "pthread_detach"},
       // Starting or detaching a std::thread; asking std::thread::hardware_concurrency() is fine.
       {"_ZNSt6thread15_M_start_thread", "_ZNSt6thread6detach", "_ZNSt7jthread"}},
      {"network", "candidates may not use the network",
       {"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "send", "sendto",
        "sendmsg", "recv", "recvfrom", "recvmsg", "getaddrinfo", "gethostbyname", "shutdown"},
       {}},
      {"file_access", "candidates may not touch files or file descriptors",
       {"open", "open64", "openat", "openat64", "creat", "creat64", "fopen", "fopen64", "freopen",
        "fdopen", "remove", "unlink", "unlinkat", "rename", "renameat", "mkdir", "rmdir",
        "opendir", "truncate", "ftruncate", "write", "pwrite", "pwrite64", "writev", "read",
        "pread", "pread64", "readv", "dup", "dup2", "dup3", "close", "ioctl", "fcntl", "memfd_create",
        "mkstemp", "tmpfile", "dprintf", "vdprintf", "pwritev", "pwritev2", "preadv", "sendfile",
        "splice", "tee", "vmsplice", "copy_file_range", "fileno", "setvbuf"},
       {"_ZNSt14basic_ofstream", "_ZNSt14basic_ifstream", "_ZNSt13basic_fstream",
        "_ZNSt12__basic_file", "_ZNSt10filesystem", "_ZNKSt10filesystem"}},
      {"dynamic_loading", "candidates may not load code at run time",
       {"dlopen", "dlmopen", "dlsym", "dlvsym"}, {}},
      {"raw_syscall", "raw system calls bypass every other rule", {"syscall"}, {}},
      {"exit", "candidates may not end the process", {"exit", "_exit", "_Exit", "quick_exit",
       "atexit", "at_quick_exit"}, {}},
      {"environment", "candidates may not read or change the environment",
       {"getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ",
        "__environ"}, {}},
      {"signals", "candidates may not send or handle signals",
       {"signal", "sigaction", "raise", "kill", "killpg", "sigprocmask", "pthread_kill", "alarm",
        "setitimer", "pthread_sigmask"}, {}},
      {"timers", "candidates may not read clocks: a kernel that knows the time can tell warm-up "
       "from measurement",
       {"clock_gettime", "gettimeofday", "time", "clock", "times", "getrusage", "timespec_get",
        "omp_get_wtime", "omp_get_wtick", "_ZNSt6chrono3_V212steady_clock3nowEv",
        "_ZNSt6chrono3_V212system_clock3nowEv", "__rdtsc"}, {}},
      {"memory_protection", "candidates may not change page protections (code patching)",
       {"mprotect", "pkey_mprotect"}, {}},
      {"process_control", "candidates may not inspect or control processes",
       {"ptrace", "process_vm_readv", "process_vm_writev", "prctl", "setrlimit", "prlimit",
        "unshare", "setns", "sched_setaffinity"}, {}},
  };
  return rules;
}

const SymbolRule& BlasRule() {
  static const SymbolRule rule = {
      "library_call", "this task requires the kernel to compute the operation itself, not call a "
      "library that implements it",
      {"sgemm_", "dgemm_", "sgemv_", "dgemv_", "saxpy_", "sdot_"},
      {"cblas_", "openblas_", "mkl_", "dnnl_", "cublas", "cudnn", "LAPACKE_"}};
  return rule;
}

bool Matches(const SymbolRule& rule, std::string_view name) {
  // Versioned imports look like "open@GLIBC_2.2.5" in some tools; ours are bare names.
  for (const char* exact : rule.exact) {
    if (name == exact) return true;
  }
  for (const char* prefix : rule.prefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool AllowsLibraries(const Task& task) {
  return std::find(task.allowed_libraries.begin(), task.allowed_libraries.end(), "blas") !=
         task.allowed_libraries.end();
}

}  // namespace

const std::vector<SourceRule>& CpuSourceRules() {
  static const std::vector<SourceRule> rules = {
      {"local_include", R"(^\s*#\s*include\s*")",
       "only system headers (#include <...>) are allowed; a quoted include can read files at build time"},
      {"include_path", R"(^\s*#\s*include\s*<\s*[/.])",
       "includes by path can read arbitrary files at build time"},
      // Headers alone are not flagged (<thread> also gives hardware_concurrency()); using them is.
      {"thread_creation",
       R"(\bstd\s*::\s*(thread|jthread|async)\b(?!\s*::\s*hardware_concurrency)|\bpthread_create\b)",
       "threads are allowed only through OpenMP pragmas"},
      {"network", R"(^\s*#\s*include\s*<\s*(sys/socket\.h|netinet/[^>]*|arpa/inet\.h|netdb\.h)\s*>)",
       "candidates may not use the network"},
      {"file_access", R"(^\s*#\s*include\s*<\s*(fstream|filesystem|fcntl\.h|sys/stat\.h)\s*>)",
       "candidates may not touch files"},
      {"dynamic_loading", R"(^\s*#\s*include\s*<\s*dlfcn\.h\s*>)",
       "candidates may not load code at run time"},
      {"process_creation", R"(^\s*#\s*include\s*<\s*(spawn\.h|sys/wait\.h)\s*>|\b(fork|vfork|popen|system|execv[pe]*|execl[pe]?)\s*\()",
       "candidates may not start processes or programs"},
      {"signals", R"(^\s*#\s*include\s*<\s*(csignal|signal\.h)\s*>)",
       "candidates may not send or handle signals"},
      {"inline_assembly", R"(\b(asm|__asm__|__asm)\b)",
       "inline assembly can make system calls that no other check sees"},
      {"raw_syscall", R"(\bsyscall\s*\()", "raw system calls bypass every other rule"},
      {"file_access", R"(\b_fileno\b|\b_IO_\w+)",
       "rewiring stdio streams reaches descriptors the candidate may not touch"},
      {"load_time_code", R"(__attribute__\s*\(\s*\(\s*(constructor|destructor)\b)",
       "code that runs when the library loads or unloads is not allowed"},
      {"timers", R"(\b_{1,2}rdtscp?\b|\b__builtin_ia32_rdtscp?\b|\b_{1,2}rdpmc\b|\b__builtin_ia32_rdpmc\b|\bomp_get_wtime\b|\bclock_gettime\b)",
       "candidates may not read clocks: a kernel that knows the time can tell warm-up from measurement"},
  };
  return rules;
}

nlohmann::json AuditFinding::ToJson() const {
  nlohmann::json json = {{"rule", rule}, {"message", message}};
  if (line > 0) json["line"] = line;
  return json;
}

AuditFinding AuditFinding::FromJson(const nlohmann::json& json) {
  AuditFinding finding;
  json_fields::Reader reader(json);
  reader("rule", finding.rule);
  reader("message", finding.message);
  reader("line", finding.line);
  return finding;
}


std::vector<AuditFinding> AuditSource(std::string_view source, const Task& task) {
  // Blanking keeps the quote characters and <...> include targets, so include rules still see them.
  std::vector<SourceRule> rules = CpuSourceRules();
  if (!AllowsLibraries(task)) {
    rules.push_back({"library_call",
                     R"(^\s*#\s*include\s*<\s*(cblas\.h|openblas[^>]*|mkl[^>]*|cublas[^>]*|cudnn[^>]*)\s*>)",
                     BlasRule().why});
  }
  return ScanSource(source, StripCommentsAndStrings(source), rules);
}

std::vector<AuditFinding> ScanSource(std::string_view source, std::string_view scanned,
                                     const std::vector<SourceRule>& rules) {
  std::vector<AuditFinding> findings;
  const std::string stripped(scanned);
  std::vector<std::pair<std::regex, const SourceRule*>> compiled;
  for (const auto& rule : rules) {
    compiled.emplace_back(std::regex(rule.pattern, std::regex::ECMAScript), &rule);
  }
  // Lines are matched by number, not offset: a scanned line may differ in length from its source.
  size_t start = 0;
  size_t source_start = 0;
  for (int line = 1; start <= stripped.size(); ++line) {
    size_t end = stripped.find('\n', start);
    if (end == std::string::npos) end = stripped.size();
    const std::string code = stripped.substr(start, end - start);
    const size_t source_end = std::min(source.find('\n', source_start), source.size());
    const std::string raw(source_start < source.size() ? source.substr(source_start, source_end - source_start)
                                                       : std::string_view{});
    for (const auto& [pattern, rule] : compiled) {
      if (std::regex_search(code, pattern)) {
        findings.push_back({rule->rule, fmt::format("line {}: {}: {}", line, std::string(Trim(raw)), rule->why), line});
      }
    }
    start = end + 1;
    source_start = source_end + 1;
  }
  return findings;
}

const std::vector<std::string>& ForbiddenInstructions() {
  static const std::vector<std::string> instructions = {"syscall", "sysenter", "int $0x80",
                                                        "rdtsc", "rdtscp", "rdpmc"};
  return instructions;
}

std::vector<AuditFinding> AuditInstructions(const std::vector<InstructionUse>& uses) {
  std::vector<AuditFinding> findings;
  for (const auto& use : uses) {
    const bool timer = use.mnemonic.starts_with("rd");
    findings.push_back(
        {timer ? "timers" : "raw_syscall",
         fmt::format("the machine code of '{}' executes '{}': {}", use.function, use.mnemonic,
                     timer ? "candidates may not read clocks" : "raw system calls bypass every other rule")});
  }
  return findings;
}

std::vector<AuditFinding> AuditBuildLog(std::string_view log, const Task& task) {
  std::vector<AuditFinding> findings;
  // The compiler runs under Landlock: a denied read is an include of a file it may not see.
  static const std::regex denied(R"(error: ([^\n:]+): Permission denied)");
  const std::string log_text(log);
  for (auto it = std::sregex_iterator(log_text.begin(), log_text.end(), denied); it != std::sregex_iterator(); ++it) {
    findings.push_back({"file_access", fmt::format("tried to read {} at build time: candidates may "
                                                   "include only system headers", (*it)[1].str())});
  }
  DynamicSymbols missing;
  static const std::regex undefined(R"(undefined reference to `([^'`]+)')");
  const std::string text(log);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), undefined); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    if (const auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
    missing.imported.push_back(name);
  }
  for (auto& finding : AuditBinary(missing, task)) findings.push_back(std::move(finding));
  return findings;
}

std::vector<AuditFinding> AuditImportedSymbol(std::string_view name) {
  std::vector<AuditFinding> findings;
  for (const auto& rule : SymbolRules()) {
    if (Matches(rule, name)) {
      findings.push_back({rule.rule, fmt::format("imports '{}': {}", name, rule.why)});
    }
  }
  return findings;
}

std::vector<AuditFinding> AuditBinary(const DynamicSymbols& symbols, const Task& task) {
  std::vector<AuditFinding> findings;
  for (const auto& name : symbols.imported) {
    for (auto& finding : AuditImportedSymbol(name)) findings.push_back(std::move(finding));
    if (!AllowsLibraries(task) && Matches(BlasRule(), name)) {
      findings.push_back({"library_call", fmt::format("imports '{}': {}", name, BlasRule().why)});
    }
  }
  for (const auto& name : symbols.exported) {
    // C++ names are skipped (template instantiations legitimately duplicate the standard
    // library's), except the clocks.
    const bool cxx = name.starts_with("_Z") && !name.starts_with("_ZNSt6chrono");
    if (name == kKernelEntrySymbol || name == task.signature.function || cxx) continue;
    // A C symbol that the running program already has would interpose on it (a fake clock,
    // a fake memcpy) for every library loaded after the candidate.
    if (::dlsym(RTLD_DEFAULT, name.c_str()) != nullptr) {
      findings.push_back({"interposition",
                          fmt::format("exports '{}', which would replace the system function of "
                                      "that name",
                                      name)});
    }
  }
  return findings;
}

}  // namespace ksmith
