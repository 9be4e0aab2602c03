#include "backends/cpu/worker/cpu_worker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "binary/shared_library.h"
#include "sandbox/call_watch.h"
#include "sandbox/layout.h"
#include "sandbox/policy.h"
#include "sandbox/process_state.h"
#include "sandbox/protocol.h"
#include "sandbox/shared_arena.h"
#include "sandbox/shared_memory.h"
#include "sandbox/timing_loop.h"
#include "sandbox/worker_reply.h"

namespace ksmith {
namespace {

struct TimingState {
  std::unique_ptr<SharedMemory> inputs;
  std::unique_ptr<TimingBench> bench;
};

struct Kernels {
  std::unique_ptr<SharedLibrary> candidate_library;
  std::unique_ptr<SharedLibrary> baseline_library;
  KernelEntry candidate = nullptr;
  KernelEntry baseline = nullptr;
  KernelFinish baseline_finish = nullptr;  // kKernelFinishSymbol, where the baseline has one
  // The candidate's, only where the evaluator says ksmith generated it (a KernelBench-format
  // candidate's shim): a candidate's own code would do untimed work there.
  KernelFinish candidate_finish = nullptr;
  StateChangesReport candidate_state = nullptr;  // the same shim's report of what its Python changed
  StateRestore candidate_guard = nullptr;         // the same shim's guard, run after its every call
  CandidateRaisedReport candidate_raised = nullptr;  // the same shim's report of what its Python raised
  // The process-wide state the baseline runs under, captured before the candidate was loaded,
  // and every change the candidate made to it (each undone at once).
  ProcessState expected_state;
  std::vector<std::string> state_changes;
};

// After candidate code ran (its load, each of its calls): what it changed is noted and undone,
// so the baseline never runs under it.
void GuardProcessState(Kernels& kernels) {
  auto changes = ProcessState::Capture().ChangesFrom(kernels.expected_state);
  if (changes.empty()) return;
  for (auto& change : changes) {
    if (std::find(kernels.state_changes.begin(), kernels.state_changes.end(), change) == kernels.state_changes.end()) {
      kernels.state_changes.push_back(std::move(change));
    }
  }
  kernels.expected_state.Restore();
}

Message HandleSetup(const Message& request, Kernels& kernels, int report_fd) {
  Protections protections;
  if (request.header.value("sandbox", true)) {
    protections = ApplySandbox(PolicyFromSetup(request.header, report_fd));
  } else {
    protections.notes.push_back("sandbox disabled by the evaluator");
  }
  // Seccomp, Landlock and capabilities bind the calling thread and what it starts: load the
  // baseline only now, so that its threads (OpenBLAS starts them at load) are walled in too.
  // Every call into a library runs in its code window (call_watch.h): what the sandbox denies
  // the baseline stays quiet, what it denies the candidate fails it.
  const std::string baseline_path = request.header.value("baseline", std::string());
  if (!baseline_path.empty()) {
    auto library = [&] {
      ScopedCodeWindow trusted(CodeWindow::kTrusted);
      return SharedLibrary::Open(baseline_path);
    }();
    if (!library.ok()) return Reply("load_error", {{"message", library.error().message}});
    auto entry = (*library)->Entry();
    if (!entry.ok()) return Reply("load_error", {{"message", entry.error().message}});
    kernels.baseline_library = std::move(library.value());
    kernels.baseline = InWindow(CodeWindow::kTrusted, *entry);
    if (auto finish = kernels.baseline_library->Symbol(kKernelFinishSymbol); finish.ok()) {
      kernels.baseline_finish = InWindow(CodeWindow::kTrusted, reinterpret_cast<KernelFinish>(*finish));
    }
  }
  kernels.expected_state = ProcessState::Capture();
  // Candidate code first runs here (static constructors), already inside the walls.
  MarkCandidateLoaded();
  auto library = [&] {
    ScopedCodeWindow candidate(CodeWindow::kCandidate);
    return SharedLibrary::Open(request.header.at("candidate").get<std::string>());
  }();
  GuardProcessState(kernels);
  if (!library.ok()) {
    return Reply("load_error",
                 {{"message", library.error().message}, {"protections", protections.ToJson()}});
  }
  auto entry = (*library)->Entry();
  if (!entry.ok()) return Reply("load_error", {{"message", entry.error().message}});
  kernels.candidate_library = std::move(library.value());
  kernels.candidate = InWindow(CodeWindow::kCandidate, *entry);
  if (request.header.value("candidate_finish", false)) {
    auto finish = kernels.candidate_library->Symbol(kKernelFinishSymbol);
    if (!finish.ok()) return Reply("load_error", {{"message", "the generated candidate shim has no ksmith_finish"}});
    kernels.candidate_finish = InWindow(CodeWindow::kCandidate, reinterpret_cast<KernelFinish>(*finish));
    if (auto report = kernels.candidate_library->Symbol(kStateChangesSymbol); report.ok()) {
      kernels.candidate_state = InWindow(CodeWindow::kCandidate, reinterpret_cast<StateChangesReport>(*report));
    }
    if (auto guard = kernels.candidate_library->Symbol(kStateRestoreSymbol); guard.ok()) {
      kernels.candidate_guard = InWindow(CodeWindow::kCandidate, reinterpret_cast<StateRestore>(*guard));
    }
    if (auto raised = kernels.candidate_library->Symbol(kCandidateRaisedSymbol); raised.ok()) {
      kernels.candidate_raised = InWindow(CodeWindow::kCandidate, reinterpret_cast<CandidateRaisedReport>(*raised));
    }
  }
  return Reply("ready", {{"protections", protections.ToJson()}, {"pid", ::getpid()}});
}

// A KernelBench candidate's Python raised nothing across its shim: what it raised since the last
// look goes with the reply (the evaluator fails the candidate for it), and this worker serves on.
Message WithRaised(const Kernels& kernels, Message reply) {
  if (kernels.candidate_raised == nullptr) return reply;
  if (nlohmann::json raised = TakeCandidateRaised(kernels.candidate_raised); !raised.is_null()) {
    reply.header["candidate_raised"] = std::move(raised);
  }
  return reply;
}

// `ksmith doctor`: the walls this machine allows, applied to this worker as for a candidate.
// The worker can serve nothing after it (it loaded no kernel).
Message HandleSandboxProbe(const Message& request) {
  SandboxPolicy policy;
  policy.scratch = request.header.value("scratch", std::string());
  return Reply("protections", {{"protections", ApplySandbox(policy).ToJson()}});
}

// The evaluator owns the case memory and shares it: it writes inputs, guards and poison, and
// reads the results in place. The worker only maps it and calls the kernel.
Message HandleArena(const Message& request, int channel_fd,
                    std::map<std::string, SharedArena>& arenas) {
  auto received = ReceiveShared(request.header, channel_fd, [](const CaseLayout& layout, const nlohmann::json&) {
    return GuardedArena::RequiredBytes(layout);
  });
  if (!received.ok()) return Reply("error", {{"message", received.error().message}});
  auto& layout = received->layout;
  auto& memory = received->memory;
  SharedArena shared;
  shared.arena = std::make_unique<GuardedArena>(layout, memory->data());
  shared.memory = std::move(memory);
  arenas[layout.Key()] = std::move(shared);
  return Reply("arena_ready");
}

// The one frame between this worker's code and a kernel. A kernel may rewrite the registers its
// caller keeps across the call (the timer-tamper red team does). The clobber list makes this
// frame save every callee-saved register on entry and restore it on return, so HandleRun gets
// its own registers back untouched; this frame uses nothing after the call but its clock.
__attribute__((noinline)) int64_t CallKernel(KernelEntry entry, void* const* pointers, const int64_t* scalars) {
  const auto start = std::chrono::steady_clock::now();
  entry(pointers, scalars);
  __asm__ volatile("" ::: "rbx", "r12", "r13", "r14", "r15", "memory");
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count();
}

Message HandleRun(const Message& request, Kernels& kernels,
                  const std::map<std::string, SharedArena>& arenas) {
  auto layout = CaseLayout::FromJson(request.header);
  if (!layout.ok()) return Reply("error", {{"message", layout.error().message}});
  const bool on_baseline = request.header.value("target", std::string()) == "baseline";
  const KernelEntry entry = on_baseline ? kernels.baseline : kernels.candidate;
  if (entry == nullptr) return Reply("error", {{"message", "no such kernel loaded"}});
  const auto found = arenas.find(layout->Key());
  if (found == arenas.end()) return Reply("error", {{"message", "no arena for this layout"}});
  const GuardedArena& arena = *found->second.arena;
  const int64_t elapsed_ns = CallKernel(entry, arena.pointers(), arena.scalars());
  if (on_baseline && kernels.baseline_finish != nullptr) kernels.baseline_finish(nullptr);
  if (!on_baseline && kernels.candidate_finish != nullptr) kernels.candidate_finish(nullptr);
  if (!on_baseline) GuardProcessState(kernels);
  return WithRaised(kernels, Reply("result", {{"elapsed_ns", elapsed_ns}}));
}

// The evaluator generated the timing inputs while correctness ran; they arrive as shared memory.
Message HandleTimeSetup(const Message& request, int channel_fd, const Kernels& kernels,
                        TimingState& timing) {
  auto received = ReceiveShared(request.header, channel_fd, [](const CaseLayout& layout, const nlohmann::json& header) {
    return TimingInputBytes(layout, header.value("sets", size_t{1}));
  });
  if (!received.ok()) return Reply("error", {{"message", received.error().message}});
  auto bench = TimingBench::Create(request.header, received->memory->data(),
                                   kernels.candidate, kernels.baseline, kernels.baseline_finish,
                                   kernels.candidate_finish);
  if (!bench.ok()) return Reply("error", {{"message", bench.error().message}});
  timing.inputs = std::move(received->memory);
  timing.bench = std::move(bench.value());
  return WithRaised(kernels, Reply("time_ready", {{"finish", {{"candidate", timing.bench->HasFinish("candidate")},
                                                              {"baseline", timing.bench->HasFinish("baseline")}}}}));
}

Message HandleTimeCall(const Message& request, TimingState& timing) {
  if (!timing.bench) return Reply("error", {{"message", "timing was not set up"}});
  auto elapsed = timing.bench->Call(request.header.value("target", std::string()),
                                    request.header.value("set", size_t{0}), request.header.value("round", size_t{0}),
                                    request.header.value("tweak", false));
  if (!elapsed.ok()) return Reply("error", {{"message", elapsed.error().message}});
  return Reply("timed", {{"inner_ns", *elapsed}});
}

Message HandleTimeFinish(const Message& request, Kernels& kernels, const TimingState& timing) {
  if (!timing.bench) return Reply("error", {{"message", "timing was not set up"}});
  const std::string target = request.header.value("target", std::string());
  timing.bench->Finish(target);
  // After either side, so that both sides' timed calls follow the same untimed work: once only
  // after the candidate's, the baseline always ran just after a restore (a thread-count and
  // affinity reset) and the candidate only half the time, and the unchanged KernelBench model
  // read 4-8% faster than itself. Only the candidate's code could have changed anything here:
  // the baseline's shim restores what torch sets. The same for a KernelBench candidate's own
  // guard (a walk over torch's namespaces), which its finish runs: after the baseline's call too.
  if (target == "baseline" && kernels.candidate_guard != nullptr) kernels.candidate_guard();
  GuardProcessState(kernels);
  return WithRaised(kernels, Reply("finished"));
}

Message HandleTimeCheck(const Message& request, Kernels& kernels, const TimingState& timing) {
  if (!timing.bench) return Reply("error", {{"message", "timing was not set up"}});
  // Between rounds, not inside a timed request: the outside clock times the whole request, and
  // the check would be charged to the candidate's side alone.
  GuardProcessState(kernels);
  const size_t set = request.header.value("set", size_t{0});
  if (!timing.bench->HasSet(set)) return Reply("error", {{"message", fmt::format("no timing set {}", set)}});
  // The set's new inputs and its eviction are time_refresh's and time_evict's, which end every
  // round (timing_driver.h's PlanRound): an untimed call of a side may follow the check.
  const Comparison comparison = timing.bench->Check(set);
  return WithRaised(kernels, Reply("checked", {{"passed", comparison.passed}, {"description", comparison.Describe()}}));
}

// New inputs for `set` (the refresh numbered "refresh_round"), and the set out of the caches: after
// a round, and within one where the second side runs on new inputs (timing_driver.h's PlanRound).
// With "rewrite", the same values written back instead (TimingBench::Rewrite).
Message HandleTimeRefresh(const Message& request, const TimingState& timing) {
  if (!timing.bench) return Reply("error", {{"message", "timing was not set up"}});
  const size_t set = request.header.value("set", size_t{0});
  if (!timing.bench->HasSet(set)) return Reply("error", {{"message", fmt::format("no timing set {}", set)}});
  if (request.header.value("rewrite", false)) {
    timing.bench->Rewrite(set);
  } else {
    timing.bench->Refresh(set, request.header.value("refresh_round", size_t{0}));
  }
  timing.bench->Evict(set);
  return Reply("refreshed");
}

Message HandleTimeEvict(const Message& request, const TimingState& timing) {
  if (!timing.bench) return Reply("error", {{"message", "timing was not set up"}});
  const size_t set = request.header.value("set", size_t{0});
  if (!timing.bench->HasSet(set)) return Reply("error", {{"message", fmt::format("no timing set {}", set)}});
  timing.bench->Evict(set);
  return Reply("evicted");
}

}  // namespace

int RunWorker(int channel_fd, int report_fd) {
  Kernels kernels;
  std::map<std::string, SharedArena> arenas;
  TimingState timing;
  return ServeRequests(
      channel_fd,
      {{"setup", [&](const Message& request) { return HandleSetup(request, kernels, report_fd); }},
       {"sandbox_probe", [&](const Message& request) { return HandleSandboxProbe(request); }},
       {"arena", [&](const Message& request) { return HandleArena(request, channel_fd, arenas); }},
       {"run", [&](const Message& request) { return HandleRun(request, kernels, arenas); }},
       {"time_setup", [&](const Message& request) { return HandleTimeSetup(request, channel_fd, kernels, timing); }},
       {"time_call", [&](const Message& request) { return HandleTimeCall(request, timing); }},
       {"time_finish", [&](const Message& request) { return HandleTimeFinish(request, kernels, timing); }},
       {"state_report",
        [&](const Message&) {
          GuardProcessState(kernels);  // whatever the last calls left since the last look
          std::vector<std::string> changes = kernels.state_changes;
          nlohmann::json reply = nlohmann::json::object();
          if (kernels.candidate_state != nullptr) {
            CandidateReport report = ReadCandidateReport(kernels.candidate_state);
            for (auto& change : report.changes) changes.push_back(std::move(change));
            reply["custom_code"] = report.CustomCodeJson();
            reply["restored"] = report.restored;
          }
          reply["changes"] = changes;
          return Reply("state", reply);
        }},
       {"time_check", [&](const Message& request) { return HandleTimeCheck(request, kernels, timing); }},
       {"time_evict", [&](const Message& request) { return HandleTimeEvict(request, timing); }},
       // Before a round on barely changed inputs: the branch predictors forget (timing_loop.h).
       {"time_scrub", [](const Message&) {
          ScrubBranchPredictors();
          return Reply("scrubbed");
        }},
       {"time_refresh", [&](const Message& request) { return HandleTimeRefresh(request, timing); }}});
}

}  // namespace ksmith
