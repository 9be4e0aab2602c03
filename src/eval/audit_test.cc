// The audit: source rules (positive examples fire, the same words in comments and strings do
// not) and binary rules over a built candidate's imported and exported symbols.
#include "eval/audit.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "task/task_loader.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

Task VectorAdd() {
  auto task = LoadTask(fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add");
  EXPECT_TRUE(task.ok()) << task.error().message;
  return task.ok() ? std::move(task.value()) : Task{};
}

std::vector<std::string> Rules(const std::vector<AuditFinding>& findings) {
  std::vector<std::string> rules;
  for (const auto& finding : findings) rules.push_back(finding.rule);
  return rules;
}

bool Has(const std::vector<AuditFinding>& findings, const std::string& rule) {
  for (const auto& finding : findings) {
    if (finding.rule == rule) return true;
  }
  return false;
}

TEST(StripCommentsAndStrings, BlanksCommentsAndLiteralsButKeepsNewlinesAndLength) {
  const std::string source =
      "int a = 1; // fork()\n"
      "/* system(\"x\")\n   spans lines */ int b;\n"
      "const char* s = \"asm \\\" quoted\";\n"
      "char c = '\\'';\n";
  const std::string stripped = StripCommentsAndStrings(source);
  ASSERT_EQ(stripped.size(), source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') {
      EXPECT_EQ(stripped[i], '\n') << i;
    }
  }
  EXPECT_EQ(stripped.find("fork"), std::string::npos);
  EXPECT_EQ(stripped.find("system"), std::string::npos);
  EXPECT_EQ(stripped.find("spans"), std::string::npos);
  EXPECT_EQ(stripped.find("asm"), std::string::npos);
  EXPECT_EQ(stripped.find("quoted"), std::string::npos);
  EXPECT_NE(stripped.find("int a = 1;"), std::string::npos);
  EXPECT_NE(stripped.find("int b;"), std::string::npos);
  EXPECT_NE(stripped.find("const char* s = \""), std::string::npos) << stripped;
  EXPECT_NE(stripped.find("char c = '"), std::string::npos) << stripped;
}

TEST(StripCommentsAndStrings, KeepsIncludeTargetsInAngleBrackets) {
  EXPECT_EQ(StripCommentsAndStrings("#include <thread>\n"), "#include <thread>\n");
}

struct RuleExample {
  std::string rule;
  std::string line;
  std::string word;  // the offending word, to be put in a comment and in a string
};

const std::vector<RuleExample> kExamples = {
    {"local_include", "#include \"helpers.h\"", "#include"},
    {"include_path", "#include </etc/passwd>", "#include </etc/passwd>"},
    {"thread_creation", "std::thread worker(run);", "std::thread"},
    {"thread_creation", "pthread_create(&id, nullptr, run, nullptr);", "pthread_create"},
    {"network", "#include <sys/socket.h>", "#include <sys/socket.h>"},
    {"file_access", "#include <fstream>", "#include <fstream>"},
    {"file_access", "int fd = _fileno(stdout);", "_fileno"},
    {"dynamic_loading", "#include <dlfcn.h>", "#include <dlfcn.h>"},
    {"process_creation", "#include <spawn.h>", "#include <spawn.h>"},
    {"process_creation", "pid_t pid = fork();", "fork()"},
    {"process_creation", "std::system(\"ls\");", "system("},
    {"process_creation", "FILE* pipe = popen(cmd, mode);", "popen("},
    {"process_creation", "execvp(argv[0], argv);", "execvp("},
    {"signals", "#include <csignal>", "#include <csignal>"},
    {"inline_assembly", "asm volatile(\"nop\");", "asm volatile"},
    {"inline_assembly", "__asm__(\"nop\");", "__asm__"},
    {"raw_syscall", "long r = syscall(1, 1, buf, 3);", "syscall("},
    {"load_time_code", "__attribute__((constructor)) void init() {}", "__attribute__((constructor))"},
    {"timers", "unsigned long long t = __rdtsc();", "__rdtsc"},
    {"timers", "double t = omp_get_wtime();", "omp_get_wtime"},
    {"timers", "clock_gettime(CLOCK_MONOTONIC, &ts);", "clock_gettime"},
};

TEST(AuditSource, EveryRuleFiresOnItsExampleAndNamesTheLine) {
  const Task task = VectorAdd();
  for (const auto& example : kExamples) {
    const std::string source = "#include <cstdint>\n\n" + example.line + "\n";
    const auto findings = AuditSource(source, task);
    ASSERT_TRUE(Has(findings, example.rule)) << example.line << " gave " << ::testing::PrintToString(Rules(findings));
    for (const auto& finding : findings) {
      if (finding.rule != example.rule) continue;
      EXPECT_EQ(finding.line, 3) << example.line;
      EXPECT_NE(finding.message.find("line 3"), std::string::npos) << finding.message;
    }
  }
}

TEST(AuditSource, TheSameWordsInCommentsOrStringsAreClean) {
  const Task task = VectorAdd();
  for (const auto& example : kExamples) {
    std::string quoted;
    for (char c : example.word) quoted += c == '"' ? std::string("\\\"") : std::string(1, c);
    const std::string source = "// " + example.word + "\n/* " + example.word + " */\n" +
                                "const char* note = \"" + quoted + "\";\n";
    const auto findings = AuditSource(source, task);
    EXPECT_TRUE(findings.empty()) << example.word << " gave " << ::testing::PrintToString(Rules(findings));
  }
}

TEST(AuditSource, OrdinaryKernelCodeIsClean) {
  const std::string source = R"(#include <cmath>
#include <cstdint>
#include <immintrin.h>
#include <omp.h>
// Uses OpenMP; never forks or reads the clock.
extern "C" void vector_add(const float* a, const float* b, float* c, int64_t n) {
  const int64_t chunk = 1024;
  #pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) c[i] = std::fma(a[i], 1.0f, b[i]) + 0 * chunk;
  int filesystem_blocks = omp_get_num_threads();  // a name containing "system" is fine
  (void)filesystem_blocks;
}
)";
  const auto findings = AuditSource(source, VectorAdd());
  EXPECT_TRUE(findings.empty()) << ::testing::PrintToString(Rules(findings));
}

TEST(AuditSource, BlasIncludeIsFlaggedOnlyWhenTheTaskDoesNotAllowIt) {
  Task task = VectorAdd();
  const std::string source = "#include <cblas.h>\n";
  EXPECT_TRUE(Has(AuditSource(source, task), "library_call"));
  task.allowed_libraries = {"blas"};
  EXPECT_FALSE(Has(AuditSource(source, task), "library_call"));
}

TEST(AuditSource, AskingForTheCoreCountIsNotStartingAThread) {
  const std::string source =
      "#include <thread>\nconst unsigned cores = std::thread::hardware_concurrency();\n";
  EXPECT_TRUE(AuditSource(source, VectorAdd()).empty());
  DynamicSymbols symbols;
  symbols.imported = {"_ZNSt6thread20hardware_concurrencyEv"};
  EXPECT_TRUE(AuditBinary(symbols, VectorAdd()).empty());
}

TEST(AuditSource, LineNumbersCountLinesInsideBlockComments) {
  const std::string source = "/* one\n two\n three */\n#include <fstream>\n";
  const auto findings = AuditSource(source, VectorAdd());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].line, 4);
}

TEST(AuditSource, DigitSeparatorsDoNotHideCodeFromTheAudit) {
  const std::string source = "const long n = 1'000;\nasm volatile(\"nop\");\nchar c = 'x';\n";
  EXPECT_TRUE(Has(AuditSource(source, VectorAdd()), "inline_assembly"));
}

TEST(AuditSource, RawStringsDoNotHideCodeFromTheAudit) {
  const std::string source = "const char* s = R\"( \" )\";\nasm volatile(\"nop\");\nconst char* t = \"\";\n";
  EXPECT_TRUE(Has(AuditSource(source, VectorAdd()), "inline_assembly"));
}

TEST(AuditInstructions, NamesTheRuleAndTheFunction) {
  // Token-pasted inline assembly hides from the source rules; the machine code does not.
  const auto findings = AuditInstructions({{"syscall", "vector_add"}, {"rdtsc", "helper"}});
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].rule, "raw_syscall");
  EXPECT_NE(findings[0].message.find("vector_add"), std::string::npos);
  EXPECT_EQ(findings[1].rule, "timers");
}

TEST(AuditBinary, FlagsForbiddenImports) {
  const Task task = VectorAdd();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pthread_create", "thread_creation"},
      {"_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", "thread_creation"},
      {"fopen", "file_access"},
      {"write", "file_access"},
      {"fork", "process_creation"},
      {"socket", "network"},
      {"dlopen", "dynamic_loading"},
      {"syscall", "raw_syscall"},
      {"exit", "exit"},
      {"getenv", "environment"},
      {"sigaction", "signals"},
      {"clock_gettime", "timers"},
      {"omp_get_wtime", "timers"},
      {"mprotect", "memory_protection"},
      {"ptrace", "process_control"},
  };
  for (const auto& [symbol, rule] : cases) {
    DynamicSymbols symbols;
    symbols.imported = {"memcpy", symbol};
    const auto findings = AuditBinary(symbols, task);
    ASSERT_EQ(findings.size(), 1u) << symbol << ": " << ::testing::PrintToString(Rules(findings));
    EXPECT_EQ(findings[0].rule, rule) << symbol;
    EXPECT_NE(findings[0].message.find("imports '" + symbol + "'"), std::string::npos);
    EXPECT_EQ(findings[0].line, 0);
  }
}

TEST(AuditBinary, AllowsWhatAnOpenMPKernelImports) {
  DynamicSymbols symbols;
  symbols.imported = {"GOMP_parallel", "omp_get_num_threads", "omp_get_thread_num", "memcpy",
                      "memset", "expf", "sqrtf", "__cxa_finalize", "_ZdlPv", "_Znwm", "malloc", "free"};
  symbols.exported = {"ksmith_entry", "vector_add", "_ZN6helper4stepEv"};
  const auto findings = AuditBinary(symbols, VectorAdd());
  EXPECT_TRUE(findings.empty()) << ::testing::PrintToString(Rules(findings));
}

TEST(AuditBinary, FlagsBlasOnlyWhenTheTaskDoesNotAllowIt) {
  Task task = VectorAdd();
  DynamicSymbols symbols;
  symbols.imported = {"cblas_sgemm", "sgemm_"};
  const auto findings = AuditBinary(symbols, task);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].rule, "library_call");
  EXPECT_EQ(findings[1].rule, "library_call");
  task.allowed_libraries = {"blas"};
  EXPECT_TRUE(AuditBinary(symbols, task).empty());
}

TEST(AuditBinary, FlagsAnExportThatWouldInterposeOnTheSystem) {
  DynamicSymbols symbols;
  symbols.exported = {"ksmith_entry", "clock_gettime", "ksmith_private_helper_without_libc_twin"};
  const auto findings = AuditBinary(symbols, VectorAdd());
  ASSERT_EQ(findings.size(), 1u) << ::testing::PrintToString(Rules(findings));
  EXPECT_EQ(findings[0].rule, "interposition");
  EXPECT_NE(findings[0].message.find("'clock_gettime'"), std::string::npos);
}

TEST(AuditFinding, ToJsonHasTheLineOnlyForSourceFindings) {
  const AuditFinding source{"timers", "line 3: uses the clock", 3};
  const AuditFinding binary{"timers", "imports 'clock_gettime'", 0};
  EXPECT_EQ(source.ToJson().at("line"), 3);
  EXPECT_EQ(source.ToJson().at("rule"), "timers");
  EXPECT_FALSE(binary.ToJson().contains("line"));
  EXPECT_EQ(binary.ToJson().at("message"), "imports 'clock_gettime'");
}

}  // namespace
}  // namespace ksmith
