#include "agent/feedback.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "agent/prompt.h"
#include "agent/verdict_facts.h"
#include "core/strings.h"
#include "eval/backend_registry.h"

namespace ksmith {
namespace {

using Json = nlohmann::json;

// Every section is capped, and the whole message too: a verdict can hold a 4 kB log, a long
// program output and many findings, and feedback is resent with every later request.
constexpr size_t kMaxFeedbackBytes = 6000;
constexpr size_t kMaxReasonChars = 700;
constexpr size_t kMaxCompilerErrors = 3;
constexpr size_t kMaxSourceLineChars = 160;
constexpr size_t kMaxLogExcerptBytes = 1500;
constexpr size_t kMaxFindings = 5;
constexpr size_t kMaxProgramOutputBytes = 600;
constexpr size_t kMaxKernelsShown = 4;
constexpr size_t kMaxProfileFacts = 6;
constexpr size_t kMaxSummaryChars = 220;   // SummarizeVerdict's whole line
constexpr double kRegistersPerSm = 65536;  // every GPU from Kepler to Blackwell

// At most `max_bytes`, cut at a line boundary when one is near, with a note that it was cut.
std::string Capped(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string_view kept = text.substr(0, max_bytes);
  if (const size_t newline = kept.rfind('\n'); newline != std::string_view::npos && newline > max_bytes / 2) {
    kept = kept.substr(0, newline + 1);
  }
  std::string result(kept);
  if (!result.empty() && result.back() != '\n') result += '\n';
  return result + "[... cut]\n";
}

std::string SourceLine(std::string_view source, int line) {
  if (line <= 0) return {};
  const auto lines = SplitLines(source);
  if (static_cast<size_t>(line) > lines.size()) return {};
  std::string text = lines[line - 1];
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text.size() > kMaxSourceLineChars ? text.substr(0, kMaxSourceLineChars) + " ..." : text;
}

// --- Compiler logs ---------------------------------------------------------------------------

std::string DescribeDiagnostic(const Diagnostic& diagnostic, std::string_view source, bool with_source) {
  std::string text;
  if (diagnostic.file == "ksmith-expected-signature") {
    text = "against the declaration ksmith requires: " + diagnostic.message;
  } else if (InCandidate(diagnostic.file)) {
    text = fmt::format("line {}: {}", diagnostic.line, diagnostic.message);
    if (const std::string quoted = SourceLine(source, diagnostic.line); with_source && !quoted.empty()) {
      text += fmt::format("\n   {:>5} | {}", diagnostic.line, quoted);
    }
  } else if (!diagnostic.file.empty()) {
    text = fmt::format("in {}:{}: {}", diagnostic.file, diagnostic.line, diagnostic.message);
  } else {
    text = diagnostic.message;
  }
  return text;
}

std::string CompileErrorBody(const Json& verdict, std::string_view source) {
  const Json& details = Details(Stage(verdict, "build"));
  std::string log = JsonString(details, "log");
  // ksmith appends the required declaration to the log; it is restated below when it matters.
  if (const size_t appended = log.find("\nThe candidate must define, with C linkage:"); appended != std::string::npos) {
    log.resize(appended);
  }
  const std::string expected = JsonString(details, "expected_signature");
  const auto errors = ParseDiagnostics(log);
  std::string text;
  bool about_signature = false;
  if (errors.empty()) {
    if (!Trim(log).empty()) text += "Compiler output:\n```\n" + Capped(Trim(log), kMaxLogExcerptBytes) + "```\n";
  } else {
    text += errors.size() == 1 ? "The compiler's error:\n" : "The compiler's first errors:\n";
    for (size_t i = 0; i < errors.size() && i < kMaxCompilerErrors; ++i) {
      text += fmt::format("{}. {}\n", i + 1, DescribeDiagnostic(errors[i], source, true));
      for (const auto& note : errors[i].notes) text += "   note, " + DescribeDiagnostic(note, source, true) + "\n";
      about_signature = about_signature || errors[i].file == "ksmith-expected-signature" ||
                        errors[i].message.starts_with("undefined reference");
    }
    if (errors.size() > kMaxCompilerErrors) {
      text += fmt::format("({} more error{} not shown: fix these first, later ones often follow from them.)\n",
                          errors.size() - kMaxCompilerErrors, errors.size() - kMaxCompilerErrors == 1 ? "" : "s");
    }
  }
  if (!expected.empty() && (about_signature || errors.empty())) {
    text += fmt::format("The source must define, with C linkage and exactly these parameter types:\n  {}\n", expected);
  }
  return text;
}

// --- Failing cases ---------------------------------------------------------------------------

std::string FailingCaseLine(const CaseLabel& label) {
  std::string text = fmt::format("Failing case: shape {}", label.shape.empty() ? "?" : label.shape);
  if (!label.distribution.empty()) text += ", inputs " + DescribeDistribution(label.distribution);
  if (!label.rest.empty()) text += ", " + label.rest;
  return text + ".\n";
}

std::string WrongOutputBody(const Json& verdict) {
  const Json& details = Details(FailedStage(verdict));
  const std::string label_text = JsonString(details, "failed_case");
  const CaseLabel label = ParseCaseLabel(label_text);
  const std::string found = WhatWasFound(JsonString(verdict, "reason"), label_text);
  const Mismatch mismatch = ParseMismatch(found);
  std::string text = "The kernel ran, but its output does not match the reference.\n";
  if (!label_text.empty()) text += FailingCaseLine(label);
  size_t start = 0;
  while (start < found.size()) {
    size_t end = found.find("; ", start);
    if (end == std::string::npos) end = found.size();
    const std::string part = found.substr(start, end - start);
    // Unwritten and NaN elements are left out of the norm, which then reads 0: misleading.
    const bool empty_norm =
        part.starts_with("norm-wise relative error 0 (") && (mismatch.unwritten > 0 || mismatch.nonfinite > 0);
    if (!empty_norm) text += "- " + part + "\n";
    start = end + 2;
  }
  if (!mismatch.worst_index.empty()) text += "(Element indices are row-major flat indices into the output.)\n";
  std::vector<std::string> hints;
  if (mismatch.unwritten > 0) {
    hints.push_back(
        mismatch.unwritten == mismatch.count
            ? "Nothing was written: check that the output pointer is the one written and that the work runs at all."
            : "Some elements were never written: every output element must be written on every call; check loop "
              "bounds, the grid or thread count, and the remainder after blocking or vectorizing.");
  }
  if (mismatch.nonfinite > 0) {
    hints.push_back(
        "NaN or Inf where the reference is finite: an overflow (exp of a large value without subtracting "
        "the maximum), a division by zero, or reading memory that was never written.");
  }
  if (mismatch.unwritten == 0 && mismatch.nonfinite == 0 && mismatch.norm_bound > 0) {
    hints.push_back(
        mismatch.norm_error > 100 * mismatch.norm_bound || mismatch.norm_error > 1e-2
            ? "The error is far beyond rounding: a logic error (formula, index, operand or reduction), not precision."
            : "The error is close to the tolerance: a precision problem; accumulate in double or with "
              "compensated sums, avoid approximate math functions and lower-precision types.");
  }
  if (label.smallest_dim > 0 && label.smallest_dim < 8) {
    hints.push_back("It fails on a tiny shape: sizes smaller than your block, tile or vector width must work too.");
  }
  if (label.distribution == "large") {
    hints.push_back("It fails on large-magnitude inputs: check for overflow and cancellation.");
  } else if (label.distribution == "ties") {
    hints.push_back("It fails when many inputs are equal: check comparisons and how ties are handled.");
  }
  for (const auto& hint : hints) text += "Hint: " + hint + "\n";
  return text;
}

// --- Contract violations, crashes and hangs -------------------------------------------------

std::string RuleAdvice(const std::string& rule) {
  static const std::set<std::string> kLibraries = {"library_call", "blas",   "cublas", "cudnn",   "cufft", "cusparse",
                                                   "cusolver",     "curand", "nccl",   "cutlass", "thrust"};
  if (rule == "thread_creation") return "parallelize with OpenMP pragmas (cpu) or kernels launched on `stream` (cuda).";
  if (kLibraries.count(rule)) return "write the computation yourself: this task allows no library that implements it.";
  if (rule == "timers") return "remove every clock read: the kernel must behave the same whenever it is called.";
  if (rule == "inline_assembly") return "use compiler intrinsics or plain C++ instead of inline assembly.";
  if (rule == "local_include" || rule == "include_path" || rule == "include_trick") {
    return "put everything in the one source file and include only system headers with <...>.";
  }
  if (rule == "load_time_code") return "do all work inside the function; nothing may run when the library loads.";
  if (rule == "driver_api" || rule == "context_control" || rule == "device_selection") {
    return "use only the CUDA runtime API, on the current device and the given stream.";
  }
  if (rule == "exports" || rule == "api_definition" || rule == "interposition") {
    return "define only the task's function plus helpers with names of your own (static or in a namespace).";
  }
  return "remove it: a kernel only reads its inputs and writes its outputs, nothing else.";
}

std::string IntegrityAdvice(const std::string& reason) {
  auto has = [&](const char* part) { return reason.find(part) != std::string::npos; };
  if (has("modified its input")) {
    return "Inputs are read-only: keep intermediates in registers, in the output or in scratch memory you allocate.";
  }
  if (has("out of bounds"))
    return "Guard every index against the sizes, including the tail after blocking or vectorizing.";
  if (has("outside the given stream") || has("still being written")) {
    return "Enqueue every kernel and copy on the given `stream`: no other streams, no default stream, no host threads.";
  }
  if (has("background") || has("after the kernel") || has("launched after")) {
    return "All work must be finished when the function returns (cpu) or when `stream` completes (cuda); nothing may "
           "keep running.";
  }
  if (has("not real"))
    return "The time is below what the hardware allows: the kernel must do its whole work on every call.";
  if (has("differently") || has("skips, caches")) {
    return "Compute from the current inputs on every call: no caching, and no skipping work on repeated calls.";
  }
  if (has("forged") || has("corrupted"))
    return "Do not write anywhere but the output arrays, and do not touch file descriptors.";
  return "Follow the candidate contract in the system prompt.";
}

std::string IntegrityBody(const Json& verdict) {
  const Json& details = Details(FailedStage(verdict));
  std::string text = "The kernel breaks the candidate contract, so it was not " +
                     std::string(JsonString(FailedStage(verdict), "name") == "physical_limit" ? "credited" : "run further") +
                     ".\n";
  const auto findings = details.find("findings");
  if (findings == details.end() || !findings->is_array() || findings->empty()) {
    // The physical-limit reason counts the timed shape's bytes and flops, which would give the
    // hidden shape away: only the times are told.
    const Json& timing = JsonObject(verdict, "timing");
    const bool physical = JsonString(FailedStage(verdict), "name") == "physical_limit" && !timing.empty();
    text += "What happened: " +
            (physical ? fmt::format("it measured {:.4g} us, but this machine needs at least {:.4g} us for the "
                                    "work at the timed shape: the time is not real",
                                    JsonNumber(JsonObject(timing, "candidate_us"), "median"), JsonNumber(timing, "floor_us"))
                      : FirstLine(JsonString(verdict, "reason"), kMaxReasonChars)) +
            "\n";
    return text + "Instead: " + IntegrityAdvice(JsonString(verdict, "reason")) + "\n";
  }
  std::vector<std::string> advice;
  text += "Findings:\n";
  for (size_t i = 0; i < findings->size() && i < kMaxFindings; ++i) {
    const Json& finding = (*findings)[i];
    const int line = static_cast<int>(JsonNumber(finding, "line"));
    text += fmt::format("- {}{} [{}]\n", line > 0 ? fmt::format("line {}: ", line) : "",
                        FirstLine(JsonString(finding, "message"), 300), JsonString(finding, "rule"));
    const std::string rule_advice = RuleAdvice(JsonString(finding, "rule"));
    if (std::find(advice.begin(), advice.end(), rule_advice) == advice.end()) advice.push_back(rule_advice);
  }
  if (findings->size() > kMaxFindings)
    text += fmt::format("({} more findings not shown)\n", findings->size() - kMaxFindings);
  for (const auto& line : advice) text += "Instead: " + line + "\n";
  return text;
}

std::string CrashBody(const Json& verdict, bool timed_out) {
  const Json& details = Details(FailedStage(verdict));
  const std::string reason = JsonString(verdict, "reason");
  std::string text = "What happened: " + FirstLine(reason, kMaxReasonChars) + "\n";
  // A worker that died says which case it was running only in the reason.
  std::string label = JsonString(details, "failed_case");
  if (label.empty()) label = RunningCase(reason);
  const CaseLabel parsed = ParseCaseLabel(label);
  if (!label.empty()) text += FailingCaseLine(parsed);
  if (const std::string output = JsonString(details, "candidate_output"); !Trim(output).empty()) {
    text += "The kernel's output (last lines):\n```\n" +
            Capped(Tail(Trim(output), kMaxProgramOutputBytes), kMaxProgramOutputBytes) + "```\n";
  }
  auto has = [&](const char* part) { return reason.find(part) != std::string::npos; };
  if (timed_out) {
    text +=
        "Hint: A call took longer than the limit: an endless loop, a barrier or __syncthreads() that not every "
        "thread reaches, a spin on a flag, or an algorithm far too slow for large sizes.\n";
  } else if (has("SIGSEGV") || has("SIGBUS") || has("illegal memory access") || has("misaligned")) {
    text +=
        "Hint: An invalid memory access: an index outside the arrays (check the tail and tiny sizes), a "
        "misaligned vector load (sizes are not multiples of 4), or a pointer used on the wrong device.\n";
  } else if (has("SIGFPE")) {
    text += "Hint: An arithmetic fault: integer division or modulo by zero (e.g. by a size computed as 0).\n";
  } else if (has("SIGABRT")) {
    text += "Hint: The process aborted: a failed assertion, an uncaught exception or a failed allocation.\n";
  } else if (has("SIGKILL") || has("memory")) {
    text +=
        "Hint: The process was killed, most likely for using too much memory: allocate scratch proportional to the "
        "sizes.\n";
  } else if (has("CUDA error") || has("launch")) {
    text +=
        "Hint: Check the launch configuration for every size (at most 1024 threads per block, grid dimensions, "
        "shared memory within the limit, opted in above the default) and any out-of-bounds access.\n";
  } else if (has("could not be loaded")) {
    text += "Hint: The library did not load: an undefined symbol or a static initializer that fails.\n";
  }
  if (parsed.smallest_dim > 0 && parsed.smallest_dim < 8) {
    text += "Hint: It happened on a tiny shape: sizes smaller than your block, tile or vector width must work too.\n";
  }
  return text;
}

// --- Time, roofline and resources ------------------------------------------------------------

// "1170 us [1134, 1191]": the median and its 95% interval, to `digits` significant digits.
std::string Interval(const Json& estimate, const char* unit, int digits) {
  auto number = [digits](double value) { return fmt::format("{:.{}g}", value, digits); };
  std::string text = number(JsonNumber(estimate, "median")) + unit;
  if (const auto ci = Interval95(estimate)) text += fmt::format(" [{}, {}]", number(ci->first), number(ci->second));
  return text;
}

std::string RooflineAdvice(double fraction, const std::string& bound, bool cuda) {
  const bool memory = bound == "memory";
  const char* units = cuda ? "SMs" : "cores";
  const int pct = static_cast<int>(std::lround(100 * fraction));
  if (fraction >= 0.8) {
    return fmt::format(
        "at {}% of the {} roofline little is left: only a different algorithm that needs fewer {} "
        "would gain much.",
        pct, bound, memory ? "bytes" : "flops");
  }
  if (fraction >= 0.5) {
    return memory ? fmt::format(
                        "some headroom: check that every load and store is contiguous and vectorized, that "
                        "all {} are busy, and that each element is read once.",
                        units)
                  : "some headroom: keep the FMA units busy with register tiling and vectorized inner loops.";
  }
  return memory ? fmt::format(
                      "far from the memory roofline: the time goes to something other than moving bytes; "
                      "use all {}, make accesses contiguous and vectorized, and fuse passes so each element "
                      "is read once.",
                      units)
                : fmt::format(
                      "far from the compute roofline: tile for {} reuse, block in registers, vectorize the "
                      "FMAs and use all {}.",
                      cuda ? "shared-memory" : "cache", units);
}

int ThreadsPerSmAt(int registers) {
  const int per_warp = ((registers * 32 + 255) / 256) * 256;  // allocated per warp in 256-register units
  return std::min(2048, static_cast<int>(kRegistersPerSm / per_warp) * 32);
}

std::string ResourcesSection(const Json& build) {
  std::string text;
  const auto resources = build.find("resources");
  if (resources != build.end() && resources->is_array() && !resources->empty()) {
    text += "Resources (ptxas):\n";
    bool spills = false;
    int most_registers = 0;
    for (size_t i = 0; i < resources->size() && i < kMaxKernelsShown; ++i) {
      const Json& kernel = (*resources)[i];
      const int registers = static_cast<int>(JsonNumber(kernel, "registers"));
      most_registers = std::max(most_registers, registers);
      text += fmt::format("- {} ({}): {} registers/thread, {} bytes static shared memory",
                          FirstLine(JsonString(kernel, "name"), 100), JsonString(kernel, "arch"), registers,
                          JsonNumber(kernel, "shared_memory_bytes"));
      const double stored = JsonNumber(kernel, "spill_store_bytes"), loaded = JsonNumber(kernel, "spill_load_bytes");
      if (stored > 0 || loaded > 0) text += fmt::format(", spills {} bytes stored / {} loaded", stored, loaded);
      if (const double frame = JsonNumber(kernel, "stack_frame_bytes"); frame > 0)
        text += fmt::format(", {}-byte stack frame", frame);
      text += "\n";
      spills = spills || stored > 0 || loaded > 0;
    }
    if (resources->size() > kMaxKernelsShown)
      text += fmt::format("({} more functions)\n", resources->size() - kMaxKernelsShown);
    if (spills) {
      text +=
          "Hint: Register spills go to slow local memory: keep fewer values live per thread, shrink per-thread "
          "arrays, or bound the block size with __launch_bounds__.\n";
    }
    if (most_registers >= 128) {
      text += fmt::format("Hint: At {} registers per thread at most {} threads fit on an SM, which limits occupancy.\n",
                          most_registers, ThreadsPerSmAt(most_registers));
    }
  }
  if (const Json& total = JsonObject(JsonObject(build, "sass"), "total"); !total.empty()) {
    text += fmt::format(
        "SASS: {} instructions, {} FMA, {} loads ({} of 64 bits or more, {} of 128), {} tensor-core, "
        "{} local-memory loads and {} stores\n",
        JsonNumber(total, "instructions"), JsonNumber(total, "fma"), JsonNumber(total, "loads"), JsonNumber(total, "wide_loads"),
        JsonNumber(total, "loads_128_bit"), JsonNumber(total, "tensor_core"), JsonNumber(total, "local_loads"), JsonNumber(total, "local_stores"));
    if (JsonNumber(total, "loads") > 0 && JsonNumber(total, "wide_loads") == 0) {
      text +=
          "Hint: No vectorized loads: float2/float4 loads move more bytes per instruction where alignment allows.\n";
    }
  }
  return text;
}

std::string PassedBody(const Json& verdict) {
  std::string text;
  const Json& correctness = Details(Stage(verdict, "correctness"));
  text += fmt::format("Correct on all {} verification cases (worst norm-wise error {:.2g}).\n",
                      JsonNumber(correctness, "cases"), JsonNumber(correctness, "worst_norm_error"));
  const auto timing = verdict.find("timing");
  if (timing == verdict.end() || !timing->is_object()) return text + "It was not timed.\n";
  const Json& candidate = JsonObject(*timing, "candidate_us");
  text += fmt::format("Time at the timed shape: {} vs the baseline's {}, medians of {} rounds with 95% intervals.\n",
                      Interval(candidate, " us", 4), Interval(JsonObject(*timing, "baseline_us"), " us", 4),
                      JsonNumber(candidate, "samples"));
  const Json& gpu_side = JsonObject(Details(Stage(verdict, "timing")), "candidate");
  if (const double warm = JsonNumber(gpu_side, "warm_us"); warm > 0) {
    text += fmt::format("With a warm L2 cache (back-to-back calls) it takes {:.4g} us.\n", warm);
  }
  const std::string comparison = JsonString(*timing, "comparison");
  text += fmt::format("Speedup: {}: ", Interval(JsonObject(*timing, "speedup"), "x", 3));
  text += comparison == "faster"   ? "faster than the baseline.\n"
          : comparison == "slower" ? "slower than the baseline.\n"
                                   : "a tie: the interval contains 1, so it cannot be told apart from the baseline.\n";
  if (const std::string note = JsonString(Details(Stage(verdict, "timing")), "note"); !note.empty()) {
    text += "Warning: " + FirstLine(note, 300) + "\n";
  }
  const double fraction = JsonNumber(verdict, "roofline_fraction");
  const std::string bound = JsonString(*timing, "bound_by");
  if (fraction > 0 && !bound.empty()) {
    text +=
        fmt::format("Roofline: {:.0f}% of the {} limit (nothing can take less than {:.4g} us at the timed shape); {}\n",
                    100 * fraction, bound, JsonNumber(*timing, "floor_us"),
                    RooflineAdvice(fraction, bound, TraitsOf(JsonString(verdict, "backend")).gpu));
  }
  text += ResourcesSection(Details(Stage(verdict, "build")));
  const Json& profile = Details(Stage(verdict, "profile"));
  if (const Json& facts = JsonArray(profile, "facts"); !facts.empty()) {
    text += "Profiler (ncu, one call at the timed shape):\n";
    for (size_t i = 0; i < facts.size() && i < kMaxProfileFacts; ++i) {
      if (facts[i].is_string()) text += "- " + FirstLine(facts[i].get<std::string>(), 240) + "\n";
    }
  }
  return text;
}

const char* Headline(const std::string& status) {
  if (status == "passed") return "passed";
  if (status == "compile_error") return "compile_error: the source did not build";
  if (status == "wrong_output") return "wrong_output";
  if (status == "integrity_violation") return "integrity_violation";
  if (status == "runtime_error") return "runtime_error: the kernel crashed";
  if (status == "timeout") return "timeout: a call did not finish in time";
  if (status == "infra_error") return "infra_error: the evaluator failed, not your kernel";
  return "unknown";
}

std::string RenderVerdict(const Json& verdict, std::string_view source) {
  const std::string status = JsonString(verdict, "status");
  std::string text = fmt::format("Verdict: {}.\n", Headline(status));
  if (status == "passed") {
    text += PassedBody(verdict);
  } else if (status == "compile_error") {
    text += CompileErrorBody(verdict, source);
    if (text.find('\n') == text.size() - 1)
      text += "What happened: " + FirstLine(JsonString(verdict, "reason"), kMaxReasonChars) + "\n";
  } else if (status == "wrong_output") {
    text += WrongOutputBody(verdict);
  } else if (status == "integrity_violation") {
    text += IntegrityBody(verdict);
  } else if (status == "runtime_error" || status == "timeout") {
    text += CrashBody(verdict, status == "timeout");
  } else {
    text += "What happened: " + FirstLine(JsonString(verdict, "reason"), kMaxReasonChars) + "\n";
    if (status == "infra_error")
      text += "Nothing is known about this kernel yet; it may be submitted again as it is.\n";
  }
  return Capped(text, kMaxFeedbackBytes);
}

// SummarizeVerdict without its guard.
std::string SummaryLine(const Json& verdict) {
  const std::string status = JsonString(verdict, "status");
  const std::string reason = JsonString(verdict, "reason");
  std::string line;
  if (status == "passed") {
    const auto timing = verdict.find("timing");
    if (timing == verdict.end() || !timing->is_object()) return "passed (not timed)";
    const Json& speedup = JsonObject(*timing, "speedup");
    line = fmt::format("passed, {:.2f}x", JsonNumber(speedup, "median"));
    if (const auto ci = Interval95(speedup)) line += fmt::format(" [{:.2f}, {:.2f}]", ci->first, ci->second);
    line += fmt::format(" ({})", JsonString(*timing, "comparison"));
    if (const double fraction = JsonNumber(verdict, "roofline_fraction"); fraction > 0) {
      line += fmt::format(", {:.0f}% of the {} roofline", 100 * fraction, JsonString(*timing, "bound_by"));
    }
  } else if (status == "wrong_output") {
    const std::string label_text = JsonString(Details(FailedStage(verdict)), "failed_case");
    const CaseLabel label = ParseCaseLabel(label_text);
    const Mismatch mismatch = ParseMismatch(WhatWasFound(reason, label_text));
    line = fmt::format("wrong_output: {} {}", label.shape, label.distribution);
    if (mismatch.unwritten > 0)
      line += fmt::format(", {} of {} elements never written", mismatch.unwritten, mismatch.count);
    if (mismatch.nonfinite > 0) line += fmt::format(", {} NaN/Inf", mismatch.nonfinite);
    if (mismatch.over_bound > 0) line += fmt::format(", {} of {} elements off", mismatch.over_bound, mismatch.count);
    if (!mismatch.worst_index.empty())
      line += fmt::format(", max error {} at [{}]", mismatch.worst_error, mismatch.worst_index);
    if (label_text.empty()) line = reason.empty() ? "wrong_output" : "wrong_output: " + reason;
  } else if (status == "compile_error") {
    std::string log = JsonString(Details(Stage(verdict, "build")), "log");
    const auto errors = ParseDiagnostics(log.substr(0, log.find("\nThe candidate must define")));
    line = "compile_error: " + (errors.empty() ? reason : DescribeDiagnostic(errors.front(), {}, false));
  } else if (status == "integrity_violation" && JsonString(FailedStage(verdict), "name") == "physical_limit") {
    line = "integrity_violation: timed faster than this machine's physical limit allows";  // bytes would tell the shape
  } else {
    line = (status.empty() ? "unknown" : status) + (reason.empty() ? "" : ": " + reason);
  }
  return FirstLine(line, kMaxSummaryChars - 3);  // FirstLine adds "..." when it cuts
}

}  // namespace

std::string RenderFeedback(const Json& verdict, std::string_view source) {
  if (!verdict.is_object()) return "Verdict: none (the evaluator returned nothing readable).\n";
  try {
    return RenderVerdict(verdict, source);
  } catch (const std::exception&) {
    // A bug of ours, or a verdict of a shape never seen: the model still gets the gist.
    return Capped(fmt::format("Verdict: {}.\nWhat happened: {}\n", JsonString(verdict, "status"),
                              FirstLine(JsonString(verdict, "reason"), kMaxReasonChars)),
                  kMaxFeedbackBytes);
  }
}

std::string RenderExtractionFeedback(const std::string& extraction_error) {
  std::string text = "Verdict: no kernel: " + FirstLine(extraction_error, kMaxReasonChars) + ".\n";
  if (extraction_error.find("cut off") != std::string::npos) {
    text +=
        "Your answer ran out of output tokens inside the code: keep the explanation to a few sentences and the "
        "kernel compact, then close the code block.\n";
  } else {
    text +=
        "Answer with a short explanation, then exactly one fenced code block (```cpp or ```cuda, as the system "
        "prompt says) holding the complete source file that defines the task's function with extern \"C\".\n";
  }
  return text;
}

std::string SummarizeVerdict(const Json& verdict) {
  if (!verdict.is_object()) return "no verdict";
  try {
    return SummaryLine(verdict);
  } catch (const std::exception&) {
    return FirstLine(JsonString(verdict, "status") + ": " + JsonString(verdict, "reason"), kMaxSummaryChars - 3);
  }
}

}  // namespace ksmith
