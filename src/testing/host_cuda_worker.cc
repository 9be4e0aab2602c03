#include "testing/host_cuda_worker.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "binary/shared_library.h"
#include "sandbox/layout.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"
#include "sandbox/shared_arena.h"
#include "sandbox/shared_memory.h"
#include "sandbox/worker_reply.h"
#include "tensor/dtype.h"

namespace ksmith::testing {
namespace {

using Clock = std::chrono::steady_clock;

// KSMITH_FAKE_CUDA_FAULT, as "kind" or "kind@N".
struct Fault {
  std::string kind;
  int at_call = 0;  // the checked call it happens at (1-based); 0: not a per-call fault

  static Fault FromEnvironment() {
    const char* text = std::getenv("KSMITH_FAKE_CUDA_FAULT");
    Fault fault;
    if (text == nullptr) return fault;
    const std::string value = text;
    const size_t at = value.find('@');
    fault.kind = value.substr(0, at);
    if (at != std::string::npos) fault.at_call = std::atoi(value.c_str() + at + 1);
    // A misspelt fault would make a test that expects a pass pass for nothing: refused at once.
    static const std::set<std::string> kPerCall = {"cuda_error", "crash", "hang", "other_stream", "late_write", "zeros"};
    static const std::set<std::string> kOnce = {"load_error",      "no_device",       "crash_at_new_shape",
                                                "idle_work",       "timed_mismatch",  "faster_on_reuse",
                                                "state_change",    "crash_in_second_timing"};
    const bool known = kPerCall.count(fault.kind) ? fault.at_call > 0 : kOnce.count(fault.kind) && at == std::string::npos;
    if (!known) {
      std::fprintf(stderr, "ksmith-fake-cuda-worker: KSMITH_FAKE_CUDA_FAULT=%s is not a fault it knows "
                           "(testing/host_cuda_worker.h lists them; per-call ones need @N)\n", text);
      std::exit(2);
    }
    return fault;
  }
};

struct CaseArena {
  CaseLayout layout;
  SharedArena shared;
};

struct HostWorker {
  Fault fault;
  bool trusted = false;  // the reference's worker
  std::vector<std::unique_ptr<SharedLibrary>> libraries;
  std::map<std::string, KernelEntry> entries;  // "candidate", "baseline", "reference"
  std::map<std::string, CaseArena> arenas;  // by CaseLayout::Key
  int checked_calls = 0;
  std::string first_layout;  // the first checked call's (CaseLayout::Key)

  bool FaultNow(const char* kind) const { return !trusted && fault.kind == kind; }
  bool FaultAtCall(const char* kind) const { return FaultNow(kind) && fault.at_call == checked_calls; }
};

Message HandleSetup(const Message& request, HostWorker& worker) {
  worker.trusted = request.header.contains("reference");
  const nlohmann::json protections = Protections{}.ToJson();
  if (worker.FaultNow("no_device")) return Reply("load_error", {{"message", "no CUDA-capable device is detected"}});
  if (worker.FaultNow("load_error")) {
    return Reply("load_error", {{"message", "undefined symbol: __cudaRegisterLinkedBinary"}, {"protections", protections}});
  }
  for (const char* role : {"reference", "candidate", "baseline", "second_baseline"}) {
    const std::string path = request.header.value(role, std::string());
    if (path.empty()) continue;
    auto library = SharedLibrary::Open(path);
    if (!library.ok()) return Reply("load_error", {{"message", library.error().message}, {"protections", protections}});
    auto entry = (*library)->Entry();
    if (!entry.ok()) return Reply("load_error", {{"message", entry.error().message}, {"protections", protections}});
    worker.entries[role] = *entry;
    worker.libraries.push_back(std::move(library.value()));
  }
  const nlohmann::json device = {{"name", "host stand-in for a GPU"}, {"l2_bytes", 1 << 20}};
  return Reply("ready", {{"protections", protections}, {"pid", ::getpid()}, {"device", device}});
}

Message HandleArena(const Message& request, int channel_fd, HostWorker& worker) {
  auto received = ReceiveShared(request.header, channel_fd, [](const CaseLayout& layout, const nlohmann::json&) {
    return GuardedArena::RequiredBytes(layout);
  });
  if (!received.ok()) return Reply("error", {{"message", received.error().message}});
  CaseArena& arena = worker.arenas[received->layout.Key()];
  arena.layout = received->layout;
  arena.shared.arena = std::make_unique<GuardedArena>(received->layout, received->memory->data());
  arena.shared.memory = std::move(received->memory);
  return Reply("arena_ready", {{"pinned", true}});
}

// The inputs of `draw`, written where the kernel reads them, as the device draws them, and the
// outputs poisoned (GuardedArena::Prepare's pattern): a kernel that writes nothing leaves NaNs.
void Draw(const CaseLayout& layout, GuardedArena& arena, const CaseDraw& draw) {
  std::vector<float> values;
  for (const auto& slot : layout.tensors) {
    void* destination = arena.pointers()[slot.parameter];
    if (slot.output) {
      FillPattern(static_cast<unsigned char*>(destination), slot.bytes, DTypePoisonPattern(slot.dtype));
      continue;
    }
    if (slot.dtype == DType::kFloat32) {
      layout.FillSlot(slot, static_cast<float*>(destination), draw.distribution, draw.seed, slot.parameter);
      continue;
    }
    values.resize(slot.Elements());
    layout.FillSlot(slot, values.data(), draw.distribution, draw.seed, slot.parameter);
    StoreAs(slot.dtype, values.data(), values.size(), destination);
  }
}

void ZeroOutputs(const CaseLayout& layout, GuardedArena& arena) {
  for (const auto& slot : layout.tensors) {
    if (slot.output) std::memset(arena.pointers()[slot.parameter], 0, slot.bytes);
  }
}

Result<CaseArena*> FindArena(const Message& request, HostWorker& worker) {
  auto layout = CaseLayout::FromJson(request.header);
  if (!layout.ok()) return layout.error();
  const auto found = worker.arenas.find(layout->Key());
  if (found == worker.arenas.end()) return MakeError(ErrorKind::kProtocol, "no arena shared for this layout");
  return &found->second;
}

Message HandleRun(const Message& request, HostWorker& worker) {
  auto shared = FindArena(request, worker);
  if (!shared.ok()) return Reply("error", {{"message", shared.error().message}});
  GuardedArena& arena = *(*shared)->shared.arena;
  const CaseLayout& layout = (*shared)->layout;
  const std::string target = request.header.value("target", std::string("candidate"));
  const auto entry = worker.entries.find(target);
  if (entry == worker.entries.end()) return Reply("error", {{"message", "no " + target + " kernel loaded"}});
  auto draw = CaseDraw::FromRequest(request.header);
  if (!draw.ok()) return Reply("error", {{"message", draw.error().message}});
  if (*draw) Draw(layout, arena, **draw);
  const int repeat = std::clamp(request.header.value("repeat", 0), 0, 100'000);
  for (int i = 0; i < repeat; ++i) entry->second(arena.pointers(), arena.scalars());
  if (target == "candidate") {
    ++worker.checked_calls;
    if (worker.first_layout.empty()) worker.first_layout = layout.Key();
  }
  const bool new_shape = target == "candidate" && layout.Key() != worker.first_layout;
  if (worker.FaultAtCall("crash") || (new_shape && worker.FaultNow("crash_at_new_shape"))) {
    ::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
  }
  if (worker.FaultAtCall("hang")) {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (worker.FaultAtCall("cuda_error")) {
    return Reply("cuda_error", {{"message", "the kernel failed: an illegal memory access was encountered"},
                                {"error_name", "cudaErrorIllegalAddress"}});
  }
  const auto start = Clock::now();
  if (worker.FaultAtCall("zeros")) {
    ZeroOutputs(layout, arena);
  } else {
    entry->second(arena.pointers(), arena.scalars());
  }
  const auto elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  nlohmann::json reply = {{"elapsed_ns", elapsed_ns},
                          {"return_ns", elapsed_ns},
                          {"kernels", 1},
                          {"device_ns", elapsed_ns},
                          {"violations", nlohmann::json::array()},
                          {"late_write", worker.FaultAtCall("late_write")},
                          {"drew", draw->has_value()},
                          {"inputs_as_drawn", false}};
  if (worker.FaultAtCall("other_stream")) reply["violations"] = {"a kernel ran on stream 0x7 (not the given stream)"};
  return Reply("result", std::move(reply));
}

// A fixed number of host-clock rounds of each side on the bench case's inputs (the evaluator
// takes the medians), then the last call on the final draw, whose outputs the evaluator checks.
Message HandleTime(const Message& request, HostWorker& worker) {
  auto shared = FindArena(request, worker);
  if (!shared.ok()) return Reply("error", {{"message", shared.error().message}});
  GuardedArena& arena = *(*shared)->shared.arena;
  const CaseLayout& layout = (*shared)->layout;
  // Against the task's baseline, or the second one the evaluator loaded.
  const std::string against = request.header.value("against", std::string("baseline"));
  const auto candidate = worker.entries.find("candidate");
  const auto baseline = worker.entries.find(against);
  if (candidate == worker.entries.end() || baseline == worker.entries.end()) {
    return Reply("error", {{"message", "timing needs both the candidate and the " + against}});
  }
  if (against == "second_baseline" && worker.FaultNow("crash_in_second_timing")) {
    ::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
  }
  auto draw = CaseDraw::FromRequest(request.header);
  if (!draw.ok()) return Reply("error", {{"message", draw.error().message}});
  if (*draw) Draw(layout, arena, **draw);
  const nlohmann::json config = request.header.value("config", nlohmann::json::object());
  const auto time_call = [&](KernelEntry entry) {
    const auto start = Clock::now();
    entry(arena.pointers(), arena.scalars());
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  };
  constexpr int kRounds = 10;
  nlohmann::json sides = nlohmann::json::object();
  for (const auto& [side, entry] : {std::pair{"candidate", candidate->second}, std::pair{"baseline", baseline->second}}) {
    std::vector<double> cold_ns, reuse_ns;
    for (int round = 0; round < kRounds; ++round) cold_ns.push_back(time_call(entry));
    for (int round = 0; round < kRounds; ++round) reuse_ns.push_back(time_call(entry));
    if (std::string_view(side) == "candidate" && worker.FaultNow("faster_on_reuse")) {
      for (double& value : cold_ns) value = 1e6;
      for (double& value : reuse_ns) value = 1e3;
    }
    sides[side] = {{"cold_ns", cold_ns}, {"reuse_ns", reuse_ns}, {"warm_ns", cold_ns.front()}, {"warm_batch", 1}};
  }
  // The last call, on the final draw: its outputs stay for the evaluator's check.
  // As the GPU worker: a final draw only where the evaluator named its seed.
  if (const uint64_t final_seed = config.value("final_seed", uint64_t{0}); *draw && final_seed != 0) {
    Draw(layout, arena, CaseDraw{final_seed, static_cast<Distribution>(config.value("distribution", 0))});
  }
  candidate->second(arena.pointers(), arena.scalars());
  nlohmann::json reply = {{"candidate", sides["candidate"]},
                          {"baseline", sides["baseline"]},
                          {"rounds", kRounds},
                          {"elapsed_s", 0.0},
                          {"stopped_by", "rounds"},
                          {"blocking_kernel", false},
                          {"mismatched_elements", worker.FaultNow("timed_mismatch") ? 5 : 0},
                          {"drew", draw->has_value()},
                          {"inputs_as_drawn", false},
                          {"violations", nlohmann::json::array()},
                          {"late_write", false}};
  return Reply("timed", std::move(reply));
}

}  // namespace

int RunHostCudaWorker(int channel_fd) {
  HostWorker worker;
  worker.fault = Fault::FromEnvironment();
  return ServeRequests(
      channel_fd,
      {{"warm", [](const Message&) { return Reply("warmed", {{"warmed", false}}); }},
       {"setup", [&](const Message& request) { return HandleSetup(request, worker); }},
       {"arena", [&](const Message& request) { return HandleArena(request, channel_fd, worker); }},
       {"run", [&](const Message& request) { return HandleRun(request, worker); }},
       {"time", [&](const Message& request) { return HandleTime(request, worker); }},
       {"idle",
        [&](const Message& request) {
          std::this_thread::sleep_for(std::chrono::milliseconds(request.header.value("wait_ms", 100)));
          nlohmann::json violations = nlohmann::json::array();
          if (worker.FaultNow("idle_work")) violations.push_back("a kernel was launched 40 ms after the last call returned");
          return Reply("idle_done", {{"violations", violations}});
        }},
       {"state_report", [&](const Message&) {
          nlohmann::json changes = nlohmann::json::array();
          if (worker.FaultNow("state_change")) changes.push_back("torch.backends.cuda.matmul.allow_tf32: False -> True");
          return Reply("state", {{"changes", changes}});
        }}});
}

}  // namespace ksmith::testing
