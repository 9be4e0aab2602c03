#include "agent/feedback.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "agent/failing_cases.h"
#include "agent/prompt.h"
#include "compile/diagnostics.h"
#include "core/strings.h"
#include "eval/backend_registry.h"
#include "eval/verdict.h"

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

const StageDetails& DetailsOf(const StageRecord* stage) {
  static const StageDetails empty;
  return stage != nullptr ? stage->details : empty;
}

std::string CompileErrorBody(const Verdict& verdict, std::string_view source) {
  const StageDetails& details = DetailsOf(verdict.FindStage(StageId::kBuild));
  const auto& errors = details.diagnostics;
  std::string text;
  bool about_signature = false;
  if (errors.empty()) {
    if (!Trim(details.log).empty()) {
      text += "Compiler output:\n```\n" + Capped(Trim(details.log), kMaxLogExcerptBytes) + "```\n";
    }
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
  if (!details.expected_signature.empty() && (about_signature || errors.empty())) {
    text += fmt::format("The source must define, with exactly these parameter types:\n  {}\n",
                        details.expected_signature);
  }
  return text;
}

// --- Failing cases ---------------------------------------------------------------------------

const Failure& FailureOf(const Verdict& verdict) {
  static const Failure none;
  const StageRecord* failed = verdict.FailedStage();
  return failed != nullptr && failed->details.failure ? *failed->details.failure : none;
}

std::string FailingCaseLine(const CaseRef& at, std::string_view heading = "Failing case") {
  std::string text = fmt::format("{}: shape {}", heading, at.shape.empty() ? "?" : at.shape);
  if (!at.distribution.empty()) text += ", inputs " + DescribeDistribution(at.distribution);
  // The label's remainder: "seed #2 (random shape)".
  if (const size_t seed = at.label.find("seed #"); seed != std::string::npos) text += ", " + at.label.substr(seed);
  return text + ".\n";
}

// What the comparison found, one finding a line (Comparison::Describe's parts).
std::vector<std::string> MismatchLines(const OutputMismatch& mismatch) {
  std::vector<std::string> lines;
  if (mismatch.unwritten > 0) {
    lines.push_back(fmt::format("{} of {} output elements were never written", mismatch.unwritten, mismatch.count));
  }
  if (mismatch.nonfinite > 0) {
    lines.push_back(fmt::format("{} elements are NaN or Inf where the reference is finite", mismatch.nonfinite));
  }
  if (mismatch.over_bound > 0) {
    lines.push_back(fmt::format("{} of {} elements exceed the elementwise bound", mismatch.over_bound, mismatch.count));
  }
  // Unwritten and NaN elements are left out of the norm, which then reads 0: misleading.
  if (mismatch.norm_error > 0 || (mismatch.unwritten == 0 && mismatch.nonfinite == 0)) {
    lines.push_back(
        fmt::format("norm-wise relative error {:.3g} (bound {:.3g})", mismatch.norm_error, mismatch.norm_bound));
  }
  if (mismatch.worst_index >= 0) {
    lines.push_back(fmt::format("worst element [{}]: got {:.9g}, expected {:.9g} (|error| {:.3g})", mismatch.worst_index,
                                mismatch.worst_got, mismatch.worst_ref, mismatch.worst_abs_error));
  }
  if (!lines.empty() && !mismatch.output.empty()) lines.front() = fmt::format("output '{}': {}", mismatch.output, lines.front());
  return lines;
}

// The correctness stage's count of its cases, when a wrong output made it count them.
std::optional<CaseTally> TallyOf(const Verdict& verdict) {
  const StageRecord* stage = verdict.FindStage(StageId::kCorrectness);
  if (stage == nullptr || !stage->details.check) return std::nullopt;
  return stage->details.check->tally;
}

std::string WrongOutputBody(const Verdict& verdict) {
  const Failure& failure = FailureOf(verdict);
  std::string text = "The kernel ran, but its output does not match the reference.\n";
  // How widely it fails, and hints only where the failures single something out. Without a count
  // (verdicts written before it was kept) one case singles nothing out: no hint from the case.
  const std::optional<CaseTally> tally = TallyOf(verdict);
  const FailingCasesText cases = tally ? DescribeFailingCases(*tally) : FailingCasesText{};
  text += cases.coverage;
  if (failure.at) text += FailingCaseLine(*failure.at, cases.coverage.empty() ? "Failing case" : "First failing case");
  const bool compared = failure.mismatch.has_value();
  if (compared) {
    for (const auto& line : MismatchLines(*failure.mismatch)) text += "- " + line + "\n";
    if (failure.mismatch->worst_index >= 0) text += "(Element indices are row-major flat indices into the output.)\n";
  } else {
    text += "What was found: " + FirstLine(verdict.reason, kMaxReasonChars) + "\n";
  }
  std::vector<std::string> hints;
  if (compared) {
    const OutputMismatch& mismatch = *failure.mismatch;
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
  }
  hints.insert(hints.begin(), cases.hints.begin(), cases.hints.end());
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

std::string IntegrityAdvice(FailureKind kind) {
  switch (kind) {
    case FailureKind::kInputModified:
      return "Inputs are read-only: keep intermediates in registers, in the output or in scratch memory you allocate.";
    case FailureKind::kOutOfBounds:
      return "Guard every index against the sizes, including the tail after blocking or vectorizing.";
    case FailureKind::kOtherStream:
    case FailureKind::kLateWrite:
      return "Enqueue every kernel and copy on the given `stream`: no other streams, no default stream, no host "
             "threads.";
    case FailureKind::kWorkAfterReturn:
      return "All work must be finished when the function returns (cpu) or when `stream` completes (cuda); nothing "
             "may keep running.";
    case FailureKind::kTimeNotReal:
      return "The time is below what the hardware allows: the kernel must do its whole work on every call.";
    case FailureKind::kTimedOutputDiffers:
    case FailureKind::kWrongAfterTiming:
      return "Compute from the current inputs on every call: no caching, and no skipping work on repeated calls.";
    case FailureKind::kForgedReply:
    case FailureKind::kMalformedReply:
      return "Do not write anywhere but the output arrays, and do not touch file descriptors.";
    case FailureKind::kForbiddenCall:
      return "Compute in the kernel itself: no processes, programs, signals or system calls of any kind, however "
             "reached; trying one fails the kernel even though the sandbox refuses it.";
    default:
      return "Follow the candidate contract in the system prompt.";
  }
}

std::string IntegrityBody(const Verdict& verdict) {
  const StageRecord* failed = verdict.FailedStage();
  const StageDetails& details = DetailsOf(failed);
  const FailureKind kind = FailureOf(verdict).kind;
  std::string text = "The kernel breaks the candidate contract, so it was not " +
                     std::string(kind == FailureKind::kTimeNotReal && failed != nullptr && failed->Is(StageId::kPhysicalLimit)
                                     ? "credited"
                                     : "run further") +
                     ".\n";
  if (details.findings.empty()) {
    // The physical-limit reason counts the timed shape's bytes and flops, which would give the
    // hidden shape away: only the times are told.
    const bool physical = failed != nullptr && failed->Is(StageId::kPhysicalLimit) && verdict.timing;
    text += "What happened: " +
            (physical ? fmt::format("it measured {:.4g} us, but this machine needs at least {:.4g} us for the "
                                    "work at the timed shape: the time is not real",
                                    verdict.timing->candidate_us.median, verdict.timing->floor_us)
                      : FirstLine(verdict.reason, kMaxReasonChars)) +
            "\n";
    return text + "Instead: " + IntegrityAdvice(physical ? FailureKind::kTimeNotReal : kind) + "\n";
  }
  std::vector<std::string> advice;
  text += "Findings:\n";
  for (size_t i = 0; i < details.findings.size() && i < kMaxFindings; ++i) {
    const AuditFinding& finding = details.findings[i];
    text += fmt::format("- {}{} [{}]\n", finding.line > 0 ? fmt::format("line {}: ", finding.line) : "",
                        FirstLine(finding.message, 300), finding.rule);
    const std::string rule_advice = RuleAdvice(finding.rule);
    if (std::find(advice.begin(), advice.end(), rule_advice) == advice.end()) advice.push_back(rule_advice);
  }
  if (details.findings.size() > kMaxFindings)
    text += fmt::format("({} more findings not shown)\n", details.findings.size() - kMaxFindings);
  for (const auto& line : advice) text += "Instead: " + line + "\n";
  return text;
}

// The likely cause of a crash, from the signal or the CUDA error's name.
std::string CrashHint(const Failure& failure) {
  const std::string& cuda = failure.cuda_error_name;
  if (failure.kind == FailureKind::kWorkerTimedOut) {
    return "A call took longer than the limit: an endless loop, a barrier or __syncthreads() that not every "
           "thread reaches, a spin on a flag, or an algorithm far too slow for large sizes.";
  }
  if (failure.signal == SIGSEGV || failure.signal == SIGBUS || cuda == "cudaErrorIllegalAddress" ||
      cuda == "cudaErrorMisalignedAddress") {
    return "An invalid memory access: an index outside the arrays (check the tail and tiny sizes), a "
           "misaligned vector load (sizes are not multiples of 4), or a pointer used on the wrong device.";
  }
  if (failure.signal == SIGFPE) {
    return "An arithmetic fault: integer division or modulo by zero (e.g. by a size computed as 0).";
  }
  if (failure.signal == SIGABRT) {
    return "The process aborted: a failed assertion, an uncaught exception or a failed allocation.";
  }
  if (failure.signal == SIGKILL || cuda == "cudaErrorMemoryAllocation") {
    return "The process was killed, most likely for using too much memory: allocate scratch proportional to the "
           "sizes.";
  }
  if (failure.kind == FailureKind::kCudaError) {
    return "Check the launch configuration for every size (at most 1024 threads per block, grid dimensions, "
           "shared memory within the limit, opted in above the default) and any out-of-bounds access.";
  }
  if (failure.kind == FailureKind::kNotLoadable) {
    return "The library did not load: an undefined symbol or a static initializer that fails.";
  }
  return {};
}

std::string CrashBody(const Verdict& verdict) {
  const Failure& failure = FailureOf(verdict);
  std::string text = "What happened: " + FirstLine(verdict.reason, kMaxReasonChars) + "\n";
  if (failure.at) text += FailingCaseLine(*failure.at);
  if (const std::string& output = DetailsOf(verdict.FailedStage()).candidate_output; !Trim(output).empty()) {
    text += "The kernel's output (last lines):\n```\n" +
            Capped(Tail(Trim(output), kMaxProgramOutputBytes), kMaxProgramOutputBytes) + "```\n";
  }
  // What passed before it, when it ended the correctness stage; without that (a verdict written
  // before it was kept, a later stage) its case alone singles nothing out.
  const std::optional<CaseTally> tally = TallyOf(verdict);
  const bool in_correctness = verdict.FailedStage() != nullptr && verdict.FailedStage()->Is(StageId::kCorrectness);
  const FailingCasesText before =
      tally && in_correctness && failure.at ? DescribeCasesBeforeFailure(*tally, *failure.at) : FailingCasesText{};
  text += before.coverage;
  if (const std::string hint = CrashHint(failure); !hint.empty()) text += "Hint: " + hint + "\n";
  for (const auto& hint : before.hints) text += "Hint: " + hint + "\n";
  return text;
}

// --- Time, roofline and resources ------------------------------------------------------------

// "1170 us [1134, 1191]": the median and its 95% interval, to `digits` significant digits. The
// interval is left out when it was not recorded (it reads [0, 0]).
std::string Interval(const Estimate& estimate, const char* unit, int digits) {
  auto number = [digits](double value) { return fmt::format("{:.{}g}", value, digits); };
  std::string text = number(estimate.median) + unit;
  if (estimate.high > 0) text += fmt::format(" [{}, {}]", number(estimate.low), number(estimate.high));
  return text;
}

// In the backend's words (BackendPrompt): its parallel units and the memory a tile is kept in.
std::string RooflineAdvice(double fraction, const std::string& bound, const BackendPrompt& backend) {
  const bool memory = bound == "memory";
  const std::string& units = backend.parallel_units;
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
                      backend.tile_memory, units);
}

int ThreadsPerSmAt(int registers) {
  const int per_warp = ((registers * 32 + 255) / 256) * 256;  // allocated per warp in 256-register units
  return std::min(2048, static_cast<int>(kRegistersPerSm / per_warp) * 32);
}

std::string ResourcesSection(const BuildFacts& build) {
  std::string text;
  const std::vector<KernelResources> resources = build.resources.value_or(std::vector<KernelResources>{});
  if (!resources.empty()) {
    text += "Resources (ptxas):\n";
    bool spills = false;
    int most_registers = 0;
    for (size_t i = 0; i < resources.size() && i < kMaxKernelsShown; ++i) {
      const KernelResources& kernel = resources[i];
      most_registers = std::max(most_registers, kernel.registers);
      text += fmt::format("- {} ({}): {} registers/thread, {} bytes static shared memory", FirstLine(kernel.name, 100),
                          kernel.arch, kernel.registers, kernel.shared_memory_bytes);
      if (kernel.spill_store_bytes > 0 || kernel.spill_load_bytes > 0) {
        text += fmt::format(", spills {} bytes stored / {} loaded", kernel.spill_store_bytes, kernel.spill_load_bytes);
      }
      if (kernel.stack_frame_bytes > 0) text += fmt::format(", {}-byte stack frame", kernel.stack_frame_bytes);
      text += "\n";
      spills = spills || kernel.spill_store_bytes > 0 || kernel.spill_load_bytes > 0;
    }
    if (resources.size() > kMaxKernelsShown)
      text += fmt::format("({} more functions)\n", resources.size() - kMaxKernelsShown);
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
  // cpu builds have no SASS: every count is 0.
  if (const SassCounts total = build.sass ? build.sass->total : SassCounts{}; total.instructions > 0) {
    text += fmt::format(
        "SASS: {} instructions, {} FMA, {} loads ({} of 64 bits or more, {} of 128), {} tensor-core, "
        "{} local-memory loads and {} stores\n",
        total.instructions, total.fma, total.loads, total.wide_loads, total.loads_128_bit, total.tensor_core,
        total.local_loads, total.local_stores);
    if (total.loads > 0 && total.wide_loads == 0) {
      text +=
          "Hint: No vectorized loads: float2/float4 loads move more bytes per instruction where alignment allows.\n";
    }
  }
  return text;
}

std::string PassedBody(const Verdict& verdict) {
  std::string text;
  const CheckFacts correctness = DetailsOf(verdict.FindStage(StageId::kCorrectness)).check.value_or(CheckFacts{});
  text += fmt::format("Correct on all {} verification cases (worst norm-wise error {:.2g}).\n",
                      correctness.cases.value_or(0), correctness.worst_norm_error.value_or(0.0));
  if (!verdict.timing) return text + "It was not timed.\n";
  const Timing& timing = *verdict.timing;
  text += fmt::format("Time at the timed shape: {} vs the baseline's {}, medians of {} rounds with 95% intervals.\n",
                      Interval(timing.candidate_us, " us", 4), Interval(timing.baseline_us, " us", 4),
                      timing.candidate_us.samples);
  const StageDetails& timed = DetailsOf(verdict.FindStage(StageId::kTiming));
  if (timed.timing && timed.timing->candidate && timed.timing->candidate->warm_us > 0) {
    text += fmt::format("With a warm L2 cache (back-to-back calls) it takes {:.4g} us.\n",
                        timed.timing->candidate->warm_us);
  }
  text += fmt::format("Speedup: {}: ", Interval(timing.speedup, "x", 3));
  text += timing.comparison == "faster"   ? "faster than the baseline.\n"
          : timing.comparison == "slower" ? "slower than the baseline.\n"
                                          : "a tie: the interval contains 1, so it cannot be told apart from the baseline.\n";
  if (!timed.note.empty()) text += "Warning: " + FirstLine(timed.note, 300) + "\n";
  if (timing.roofline_fraction > 0 && !timing.bound_by.empty()) {
    text +=
        fmt::format("Roofline: {:.0f}% of the {} limit (nothing can take less than {:.4g} us at the timed shape); {}\n",
                    100 * timing.roofline_fraction, timing.bound_by, timing.floor_us,
                    RooflineAdvice(timing.roofline_fraction, timing.bound_by, TraitsOf(verdict.backend).prompt));
  }
  if (const auto& build = DetailsOf(verdict.FindStage(StageId::kBuild)).build) text += ResourcesSection(*build);
  if (const auto& profile = DetailsOf(verdict.FindStage(StageId::kProfile)).profile; profile && !profile->facts.empty()) {
    text += "Profiler (ncu, one call at the timed shape):\n";
    for (size_t i = 0; i < profile->facts.size() && i < kMaxProfileFacts; ++i) {
      text += "- " + FirstLine(profile->facts[i], 240) + "\n";
    }
  }
  return text;
}

const char* Headline(VerdictStatus status) {
  switch (status) {
    case VerdictStatus::kPassed: return "passed";
    case VerdictStatus::kCompileError: return "compile_error: the source did not build";
    case VerdictStatus::kWrongOutput: return "wrong_output";
    case VerdictStatus::kIntegrityViolation: return "integrity_violation";
    case VerdictStatus::kRuntimeError: return "runtime_error: the kernel crashed";
    case VerdictStatus::kTimeout: return "timeout: a call did not finish in time";
    case VerdictStatus::kInfraError: return "infra_error: the evaluator failed, not your kernel";
  }
  return "unknown";
}

std::string RenderVerdict(const Verdict& verdict, std::string_view source) {
  std::string text = fmt::format("Verdict: {}.\n", Headline(verdict.status));
  switch (verdict.status) {
    case VerdictStatus::kPassed:
      text += PassedBody(verdict);
      break;
    case VerdictStatus::kCompileError:
      text += CompileErrorBody(verdict, source);
      if (text.find('\n') == text.size() - 1) text += "What happened: " + FirstLine(verdict.reason, kMaxReasonChars) + "\n";
      break;
    case VerdictStatus::kWrongOutput:
      text += WrongOutputBody(verdict);
      break;
    case VerdictStatus::kIntegrityViolation:
      text += IntegrityBody(verdict);
      break;
    case VerdictStatus::kRuntimeError:
    case VerdictStatus::kTimeout:
      text += CrashBody(verdict);
      break;
    case VerdictStatus::kInfraError:
      text += "What happened: " + FirstLine(verdict.reason, kMaxReasonChars) + "\n";
      text += "Nothing is known about this kernel yet; it may be submitted again as it is.\n";
      break;
  }
  return Capped(text, kMaxFeedbackBytes);
}

// SummarizeVerdict without its guard.
std::string SummaryLine(const Verdict& verdict) {
  const std::string status = VerdictStatusName(verdict.status);
  const std::string& reason = verdict.reason;
  const Failure& failure = FailureOf(verdict);
  std::string line;
  if (verdict.status == VerdictStatus::kPassed) {
    if (!verdict.timing) return "passed (not timed)";
    const Timing& timing = *verdict.timing;
    line = fmt::format("passed, {:.2f}x", timing.speedup.median);
    if (timing.speedup.high > 0) line += fmt::format(" [{:.2f}, {:.2f}]", timing.speedup.low, timing.speedup.high);
    line += fmt::format(" ({})", timing.comparison);
    if (timing.roofline_fraction > 0) {
      line += fmt::format(", {:.0f}% of the {} roofline", 100 * timing.roofline_fraction, timing.bound_by);
    }
  } else if (verdict.status == VerdictStatus::kWrongOutput) {
    if (!failure.at) return FirstLine(reason.empty() ? "wrong_output" : "wrong_output: " + reason, kMaxSummaryChars - 3);
    const std::optional<CaseTally> tally = TallyOf(verdict);
    line = fmt::format("wrong_output{}: {} {}", tally ? " on " + FailingCasesCount(*tally) : "", failure.at->shape,
                       failure.at->distribution);
    if (const auto& mismatch = failure.mismatch) {
      if (mismatch->unwritten > 0)
        line += fmt::format(", {} of {} elements never written", mismatch->unwritten, mismatch->count);
      if (mismatch->nonfinite > 0) line += fmt::format(", {} NaN/Inf", mismatch->nonfinite);
      if (mismatch->over_bound > 0) line += fmt::format(", {} of {} elements off", mismatch->over_bound, mismatch->count);
      if (mismatch->worst_index >= 0) {
        line += fmt::format(", max error {:.3g} at [{}]", mismatch->worst_abs_error, mismatch->worst_index);
      }
    }
  } else if (verdict.status == VerdictStatus::kCompileError) {
    const auto& errors = DetailsOf(verdict.FindStage(StageId::kBuild)).diagnostics;
    line = "compile_error: " + (errors.empty() ? reason : DescribeDiagnostic(errors.front(), {}, false));
  } else if (failure.kind == FailureKind::kTimeNotReal && verdict.FailedStage()->Is(StageId::kPhysicalLimit)) {
    line = "integrity_violation: timed faster than this machine's physical limit allows";  // bytes would tell the shape
  } else {
    line = status + (reason.empty() ? "" : ": " + reason);
  }
  return FirstLine(line, kMaxSummaryChars - 3);  // FirstLine adds "..." when it cuts
}

}  // namespace

std::string RenderFeedback(const Verdict& verdict, std::string_view source) {
  try {
    return RenderVerdict(verdict, source);
  } catch (const std::exception&) {
    // A bug of ours: the model still gets the gist.
    return Capped(fmt::format("Verdict: {}.\nWhat happened: {}\n", VerdictStatusName(verdict.status),
                              FirstLine(verdict.reason, kMaxReasonChars)),
                  kMaxFeedbackBytes);
  }
}

std::string RenderFeedback(const nlohmann::json& verdict, std::string_view source) {
  const auto read = Verdict::FromJson(verdict);
  if (!read.ok()) return "Verdict: none (the evaluator returned nothing readable).\n";
  return RenderFeedback(*read, source);
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

std::string SummarizeVerdict(const Verdict& verdict) {
  try {
    return SummaryLine(verdict);
  } catch (const std::exception&) {
    return FirstLine(std::string(VerdictStatusName(verdict.status)) + ": " + verdict.reason, kMaxSummaryChars - 3);
  }
}

std::string SummarizeVerdict(const nlohmann::json& verdict) {
  const auto read = Verdict::FromJson(verdict);
  return read.ok() ? SummarizeVerdict(*read) : "no verdict";
}

}  // namespace ksmith
