#include "backends/opencl/runtime/opencl_worker.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/opencl/opencl_form.h"
#include "backends/opencl/runtime/cl_runtime.h"
#include "core/files.h"
#include "sandbox/layout.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"
#include "sandbox/shared_arena.h"
#include "sandbox/timing_loop.h"
#include "sandbox/worker_reply.h"

namespace ksmith {
namespace {

constexpr size_t kMinFlushBytes = size_t{64} << 20;
constexpr size_t kMinGpuFlushBytes = size_t{256} << 20;

// The candidate's launches failed (sizes its `@launch` lines gave, a kernel that faulted on the
// device): a runtime error of the candidate, reported as a KernelBench candidate's exception is
// (the evaluator fails it for it), not the worker's own error.
Message CandidateFailed(const std::string& type, const std::string& message) {
  return Reply(type, {{"candidate_raised", {{"message", "its launch failed: " + message}}}});
}

// A built program with its plan: what the worker launches for one side.
struct Side {
  std::unique_ptr<ClProgram> program;
  OpenclPlan plan;
  std::vector<cl_kernel> kernels;  // per launch
};

// One tensor on the device: [pad | guard | tensor | guard], the kernel's view at the tensor.
struct DeviceTensor {
  ClBuffer whole;
  ClBuffer view;
  size_t guard_offset = 0;  // where the leading guard starts in `whole`
};

struct WorkerState {
  std::unique_ptr<ClContext> context;
  Side candidate;
  Side baseline;
  size_t max_group_items = 0;
  size_t align_bytes = 1;
  size_t flush_bytes = kMinFlushBytes;  // twice the device's cache, at least kMinFlushBytes
  // Correctness: the shared arenas and their device copies, by layout key.
  std::map<std::string, SharedArena> arenas;
  std::map<std::string, std::vector<DeviceTensor>> device_arenas;
  // Timing: the bench over the sets' host memory, each host buffer's device mirror, and which
  // input mirrors hold what the host holds now.
  std::unique_ptr<SharedMemory> timing_inputs;
  std::unique_ptr<TimingBench> bench;
  CaseLayout timing_layout;
  struct Mirror {
    ClBuffer buffer;
    bool output = false;
  };
  std::map<const void*, Mirror> mirrors;
  bool upload_in_call = false;  // a tweaked call: its inputs go up before its launches
  ClBuffer flush;
  std::string call_error;    // set by a trampoline; a request fails with it
  bool candidate_failed = false;  // ...and it was the candidate's launch that failed (its fault)
  double last_call_ns = 0;   // the last trampoline call's device time
};

// The trampolines' state: TimingBench calls kernels through plain function pointers (KernelEntry,
// the CPU worker's), which carry none; one worker serves one evaluation, on one thread.
WorkerState* g_state = nullptr;

Result<Side> LoadSide(const ClContext& context, const std::string& binary_path) {
  auto binary = ReadFile(binary_path);
  if (!binary.ok()) return binary.error();
  auto plan_text = ReadFile(OpenclPlanPath(binary_path).string());
  if (!plan_text.ok()) return plan_text.error();
  nlohmann::json plan_json = nlohmann::json::parse(*plan_text, nullptr, false);
  auto plan = OpenclPlan::FromJson(plan_json);
  if (!plan.ok()) return plan.error();
  auto program = ClProgram::FromBinary(context, *binary);
  if (!program.ok()) return program.error();
  Side side{std::move(program.value()), std::move(plan.value()), {}};
  for (const auto& launch : side.plan.launches) {
    auto kernel = side.program->Kernel(launch.kernel);
    if (!kernel.ok()) return kernel.error();
    side.kernels.push_back(*kernel);
  }
  return side;
}

// Runs `side`'s launches on `arguments` (one cl_mem per tensor parameter, in `layout`'s slots) and
// waits; returns the device time from the first launch's start to the last one's end [ns].
Result<double> Launch(WorkerState& state, Side& side, const CaseLayout& layout, const std::vector<cl_mem>& tensor_args) {
  std::vector<cl_mem> by_parameter(layout.scalars.size(), nullptr);
  for (size_t i = 0; i < layout.tensors.size(); ++i) by_parameter[layout.tensors[i].parameter] = tensor_args[i];
  std::vector<cl_event> events;
  Status failed;
  for (size_t l = 0; l < side.plan.launches.size() && failed.ok(); ++l) {
    cl_kernel kernel = side.kernels[l];
    for (size_t p = 0; p < by_parameter.size(); ++p) {
      cl_int status = by_parameter[p] != nullptr ? clSetKernelArg(kernel, p, sizeof(cl_mem), &by_parameter[p])
                                                 : clSetKernelArg(kernel, p, sizeof(cl_long), &layout.scalars[p]);
      if (status != CL_SUCCESS) failed = ClError(fmt::format("clSetKernelArg({}, {})", side.plan.launches[l].kernel, p), status);
    }
    if (!failed.ok()) break;
    auto sizes = ResolveLaunch(side.plan.launches[l], side.plan, layout.scalars, state.max_group_items);
    if (!sizes.ok()) {
      failed = sizes.error();
      break;
    }
    cl_event event = nullptr;
    const cl_int status = clEnqueueNDRangeKernel(state.context->queue(), kernel, static_cast<cl_uint>(sizes->global.size()),
                                                 nullptr, sizes->global.data(), sizes->local.data(), 0, nullptr, &event);
    if (status != CL_SUCCESS) {
      failed = ClError(fmt::format("launching {}", side.plan.launches[l].kernel), status);
      break;
    }
    events.push_back(event);
  }
  const cl_int finished = clFinish(state.context->queue());
  double elapsed_ns = 0;
  cl_int profiled = CL_SUCCESS;
  if (failed.ok() && finished == CL_SUCCESS && !events.empty()) {
    cl_ulong start = 0;
    cl_ulong end = 0;
    profiled = clGetEventProfilingInfo(events.front(), CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
    if (profiled == CL_SUCCESS) profiled = clGetEventProfilingInfo(events.back(), CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    elapsed_ns = end > start ? static_cast<double>(end - start) : 0;
  }
  for (cl_event event : events) clReleaseEvent(event);
  if (!failed.ok()) return failed.error();
  if (finished != CL_SUCCESS) return ClError("clFinish after the launches", finished);
  // A time not read is no time: 0 would read as an infinite speedup (an infrastructure error,
  // which Launch's callers report as the worker's own, not the candidate's).
  if (profiled != CL_SUCCESS) return ClError("clGetEventProfilingInfo", profiled);
  return elapsed_ns;
}

Status Copy(WorkerState& state, bool upload, const ClBuffer& buffer, size_t offset, size_t bytes, void* host) {
  if (bytes == 0) return {};
  const cl_int status = upload ? clEnqueueWriteBuffer(state.context->queue(), buffer.get(), CL_TRUE, offset, bytes, host, 0, nullptr, nullptr)
                               : clEnqueueReadBuffer(state.context->queue(), buffer.get(), CL_TRUE, offset, bytes, host, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) return ClError(upload ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", status);
  return {};
}

// Written over by a fill of its own: what the device's caches held is gone.
Status Flush(WorkerState& state) {
  const cl_uint zero = 0;
  cl_int status = clEnqueueFillBuffer(state.context->queue(), state.flush.get(), &zero, sizeof(zero), 0, state.flush.bytes(), 0,
                                      nullptr, nullptr);
  if (status == CL_SUCCESS) status = clFinish(state.context->queue());
  if (status != CL_SUCCESS) return ClError("flushing the caches", status);
  return {};
}

Message HandleSetup(const Message& request, WorkerState& state, int report_fd) {
  const std::string scratch = request.header.value("scratch", std::string());
  // PoCL unpacks a binary into its cache and loads it from there; the generic work-group
  // function it holds serves every local size, so nothing is compiled or linked in here.
  if (!scratch.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(scratch) / "pocl", ignored);
    ::setenv("POCL_CACHE_DIR", (std::filesystem::path(scratch) / "pocl").c_str(), 1);
  }
  ::setenv("POCL_WORK_GROUP_SPECIALIZATION", "0", 1);
  // A GPU driver's compiler cache would be written under $HOME: nothing is kept between workers.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  // A CPU device's runtime starts inside the walls: its threads run the kernels. A GPU driver
  // starts before them, as the CUDA worker's does (it writes its threads' names under /proc, which
  // Landlock would refuse); seccomp binds its threads too (TSYNC).
  const bool gpu = request.header.value("gpu", false);
  std::string start_error;
  auto start_runtime = [&] {
    auto device = PickDevice(request.header.value("device", std::string()), request.header.value("identity", std::string()));
    if (!device.ok()) {
      start_error = device.error().message;
      return;
    }
    auto context = ClContext::Create(*device);
    if (!context.ok()) {
      start_error = context.error().message;
      return;
    }
    state.context = std::move(context.value());
    state.max_group_items = MaxWorkGroupSize(*device);
    state.align_bytes = std::max<size_t>(BaseAddressAlignBytes(*device), 1);
    // Twice the cache the device reports; a GPU's may report its L1 (NVIDIA's does), so a GPU's
    // flush is at least four times a large L2.
    state.flush_bytes = std::max<size_t>(IsGpu(*device) ? kMinGpuFlushBytes : kMinFlushBytes, 2 * GlobalCacheBytes(*device));
  };
  if (gpu) start_runtime();
  Protections protections;
  if (request.header.value("sandbox", true)) {
    SandboxPolicy policy = PolicyFromSetup(request.header, report_fd);
    // The OpenCL loader's vendor list, and what runtimes read to learn the machine (hwloc, the driver).
    for (const char* path : {"/etc/OpenCL", "/proc", "/sys"}) policy.readable.emplace_back(path);
    // PoCL unpacks the binaries into the scratch; a GPU driver writes nothing there.
    policy.scratch_writable = !gpu;
    policy.gpu = gpu;
    protections = ApplySandbox(policy);
  } else {
    protections.notes.push_back("sandbox disabled by the evaluator");
  }
  if (!gpu) start_runtime();
  // The device, its runtime and the trusted baseline are the evaluator's: their failure is no
  // candidate's runtime error (a setup_error is the evaluator's own, WorkerSession says so).
  if (!start_error.empty()) return Reply("setup_error", {{"message", start_error}, {"protections", protections.ToJson()}});
  const std::string baseline = request.header.value("baseline", std::string());
  if (!baseline.empty()) {
    auto side = LoadSide(*state.context, baseline);
    if (!side.ok()) return Reply("setup_error", {{"message", "the baseline: " + side.error().message}});
    state.baseline = std::move(side.value());
  }
  auto side = LoadSide(*state.context, request.header.at("candidate").get<std::string>());
  if (!side.ok()) {
    return Reply("load_error", {{"message", side.error().message}, {"protections", protections.ToJson()}});
  }
  state.candidate = std::move(side.value());
  return Reply("ready", {{"protections", protections.ToJson()}, {"pid", ::getpid()}});
}

Message HandleArena(const Message& request, int channel_fd, WorkerState& state) {
  auto received = ReceiveShared(request.header, channel_fd, [](const CaseLayout& layout, const nlohmann::json&) {
    return GuardedArena::RequiredBytes(layout);
  });
  if (!received.ok()) return Reply("error", {{"message", received.error().message}});
  const CaseLayout& layout = received->layout;
  std::vector<DeviceTensor> tensors;
  const size_t guard = layout.guard_bytes;
  const size_t pad = (state.align_bytes - guard % state.align_bytes) % state.align_bytes;
  for (const auto& slot : layout.tensors) {
    DeviceTensor tensor;
    auto whole = ClBuffer::Create(*state.context, pad + 2 * guard + std::max<size_t>(slot.bytes, 1));
    if (!whole.ok()) return Reply("error", {{"message", whole.error().message}});
    tensor.whole = std::move(whole.value());
    auto view = ClBuffer::Region(tensor.whole, pad + guard, slot.bytes);
    if (!view.ok()) return Reply("error", {{"message", view.error().message}});
    tensor.view = std::move(view.value());
    tensor.guard_offset = pad;
    tensors.push_back(std::move(tensor));
  }
  SharedArena shared;
  shared.arena = std::make_unique<GuardedArena>(layout, received->memory->data());
  shared.memory = std::move(received->memory);
  state.device_arenas[layout.Key()] = std::move(tensors);
  state.arenas[layout.Key()] = std::move(shared);
  return Reply("arena_ready");
}

// One case: every tensor with its guards up, the launches, every tensor with its guards back.
Message HandleRun(const Message& request, WorkerState& state) {
  auto layout = CaseLayout::FromJson(request.header);
  if (!layout.ok()) return Reply("error", {{"message", layout.error().message}});
  const auto found = state.arenas.find(layout->Key());
  if (found == state.arenas.end()) return Reply("error", {{"message", "no arena for this layout"}});
  auto& tensors = state.device_arenas.at(layout->Key());
  const GuardedArena& arena = *found->second.arena;
  const size_t guard = layout->guard_bytes;
  std::vector<cl_mem> views;
  for (size_t i = 0; i < layout->tensors.size(); ++i) {
    auto* region = static_cast<unsigned char*>(arena.pointers()[layout->tensors[i].parameter]) - guard;
    if (auto status = Copy(state, true, tensors[i].whole, tensors[i].guard_offset, layout->tensors[i].bytes + 2 * guard, region);
        !status.ok()) {
      return Reply("error", {{"message", status.error().message}});
    }
    views.push_back(tensors[i].view.get());
  }
  const bool on_baseline = request.header.value("target", std::string()) == "baseline";
  auto elapsed = Launch(state, on_baseline ? state.baseline : state.candidate, *layout, views);
  if (!elapsed.ok()) {
    return on_baseline ? Reply("error", {{"message", "the baseline: " + elapsed.error().message}})
                       : CandidateFailed("result", elapsed.error().message);
  }
  for (size_t i = 0; i < layout->tensors.size(); ++i) {
    auto* region = static_cast<unsigned char*>(arena.pointers()[layout->tensors[i].parameter]) - guard;
    if (auto status = Copy(state, false, tensors[i].whole, tensors[i].guard_offset, layout->tensors[i].bytes + 2 * guard, region);
        !status.ok()) {
      return Reply("error", {{"message", status.error().message}});
    }
  }
  return Reply("result", {{"elapsed_ns", static_cast<int64_t>(*elapsed)}});
}

// TimingBench's kernels: each host buffer of a set has a device mirror. Inputs go up when the
// evaluator changes them (time_setup, time_refresh: untimed requests; a tweak: inside the call's
// request, before its launches), outputs stay on the device until the round's check.
Result<ClBuffer*> MirrorOf(WorkerState& state, void* host, size_t bytes, bool output, bool* created_now) {
  auto mirror = state.mirrors.find(host);
  *created_now = mirror == state.mirrors.end();
  if (*created_now) {
    auto created = ClBuffer::Create(*state.context, bytes);
    if (!created.ok()) return created.error();
    mirror = state.mirrors.emplace(host, WorkerState::Mirror{std::move(created.value()), output}).first;
  }
  return &mirror->second.buffer;
}

void TimedCall(Side& side, void* const* pointers) {
  WorkerState& state = *g_state;
  std::vector<cl_mem> arguments;
  for (const auto& slot : state.timing_layout.tensors) {
    void* host = pointers[slot.parameter];
    bool created_now = false;
    auto mirror = MirrorOf(state, host, slot.bytes, slot.output, &created_now);
    if (!mirror.ok()) {
      state.call_error = mirror.error().message;
      return;
    }
    if (!slot.output && (created_now || state.upload_in_call)) {
      if (auto status = Copy(state, true, **mirror, 0, slot.bytes, host); !status.ok()) {
        state.call_error = status.error().message;
        return;
      }
    }
    arguments.push_back((*mirror)->get());
  }
  // A tweaked call's inputs went up just now: out of the caches again, as every other call's are.
  if (state.upload_in_call) {
    if (auto flushed = Flush(state); !flushed.ok()) {
      state.call_error = flushed.error().message;
      return;
    }
  }
  auto elapsed = Launch(state, side, state.timing_layout, arguments);
  if (!elapsed.ok()) {
    if (state.call_error.empty()) state.call_error = elapsed.error().message;
    if (&side == &state.candidate) state.candidate_failed = true;
    return;
  }
  state.last_call_ns = *elapsed;
}

void CandidateTrampoline(void* const* pointers, const int64_t*) { TimedCall(g_state->candidate, pointers); }
void BaselineTrampoline(void* const* pointers, const int64_t*) { TimedCall(g_state->baseline, pointers); }

// Every buffer of `set` on the device: inputs up, where `inputs` says, outputs' mirrors made.
Status MirrorSet(WorkerState& state, size_t set, bool inputs) {
  for (const auto& region : state.bench->Regions(set)) {
    bool created_now = false;
    auto mirror = MirrorOf(state, region.data, region.bytes, region.output, &created_now);
    if (!mirror.ok()) return mirror.error();
    if (!region.output && (inputs || created_now)) {
      if (auto status = Copy(state, true, **mirror, 0, region.bytes, region.data); !status.ok()) return status;
    }
  }
  return {};
}

// Every output mirror of `set` back into its host buffer, for the bench's check.
Status DownloadOutputs(WorkerState& state, size_t set) {
  for (const auto& region : state.bench->Regions(set)) {
    if (!region.output) continue;
    const auto mirror = state.mirrors.find(region.data);
    if (mirror == state.mirrors.end()) continue;  // never called on: the host's poison stays
    if (auto status = Copy(state, false, mirror->second.buffer, 0, region.bytes, region.data); !status.ok()) return status;
  }
  return {};
}

Message HandleTimeSetup(const Message& request, int channel_fd, WorkerState& state) {
  auto received = ReceiveShared(request.header, channel_fd, [](const CaseLayout& layout, const nlohmann::json& header) {
    return TimingInputBytes(layout, header.value("sets", size_t{1}));
  });
  if (!received.ok()) return Reply("error", {{"message", received.error().message}});
  state.timing_layout = received->layout;
  state.mirrors.clear();
  state.call_error.clear();
  state.upload_in_call = false;
  auto flush = ClBuffer::Create(*state.context, state.flush_bytes);
  if (!flush.ok()) return Reply("error", {{"message", flush.error().message}});
  state.flush = std::move(flush.value());
  state.candidate_failed = false;
  auto bench = TimingBench::Create(request.header, received->memory->data(), CandidateTrampoline, BaselineTrampoline);
  if (state.candidate_failed) return CandidateFailed("time_ready", state.call_error);
  if (!state.call_error.empty()) return Reply("error", {{"message", state.call_error}});
  if (!bench.ok()) return Reply("error", {{"message", bench.error().message}});
  state.timing_inputs = std::move(received->memory);
  state.bench = std::move(bench.value());
  for (size_t set = 0; state.bench->HasSet(set); ++set) {
    if (auto status = MirrorSet(state, set, true); !status.ok()) return Reply("error", {{"message", status.error().message}});
  }
  return Reply("time_ready", {{"finish", {{"candidate", false}, {"baseline", false}}}});
}

Message HandleTimeCall(const Message& request, WorkerState& state) {
  if (!state.bench) return Reply("error", {{"message", "timing was not set up"}});
  const bool tweak = request.header.value("tweak", false);
  state.upload_in_call = tweak;  // the bench changes a few inputs before the call
  state.last_call_ns = 0;
  state.call_error.clear();
  state.candidate_failed = false;
  auto elapsed = state.bench->Call(request.header.value("target", std::string()), request.header.value("set", size_t{0}),
                                   request.header.value("round", size_t{0}), tweak);
  state.upload_in_call = false;
  if (state.candidate_failed) return CandidateFailed("timed", state.call_error);
  if (!state.call_error.empty()) return Reply("error", {{"message", state.call_error}});
  if (!elapsed.ok()) return Reply("error", {{"message", elapsed.error().message}});
  return Reply("timed", {{"inner_ns", state.last_call_ns}});
}

Message HandleTimeEvict(WorkerState& state) {
  if (!state.bench) return Reply("error", {{"message", "timing was not set up"}});
  if (auto flushed = Flush(state); !flushed.ok()) return Reply("error", {{"message", flushed.error().message}});
  return Reply("evicted");
}

Message HandleTimeCheck(const Message& request, WorkerState& state) {
  if (!state.bench) return Reply("error", {{"message", "timing was not set up"}});
  const size_t set = request.header.value("set", size_t{0});
  if (!state.bench->HasSet(set)) return Reply("error", {{"message", fmt::format("no timing set {}", set)}});
  if (auto status = DownloadOutputs(state, set); !status.ok()) return Reply("error", {{"message", status.error().message}});
  const Comparison comparison = state.bench->Check(set);
  return Reply("checked", {{"passed", comparison.passed}, {"description", comparison.Describe()}});
}

Message HandleTimeRefresh(const Message& request, WorkerState& state) {
  if (!state.bench) return Reply("error", {{"message", "timing was not set up"}});
  const size_t set = request.header.value("set", size_t{0});
  if (!state.bench->HasSet(set)) return Reply("error", {{"message", fmt::format("no timing set {}", set)}});
  if (request.header.value("rewrite", false)) {
    state.bench->Rewrite(set);
  } else {
    state.bench->Refresh(set, request.header.value("refresh_round", size_t{0}));
  }
  if (auto status = MirrorSet(state, set, true); !status.ok()) return Reply("error", {{"message", status.error().message}});
  if (auto flushed = Flush(state); !flushed.ok()) return Reply("error", {{"message", flushed.error().message}});
  return Reply("refreshed");
}

}  // namespace

int RunOpenclWorker(int channel_fd, int report_fd) {
  WorkerState state;
  g_state = &state;
  return ServeRequests(
      channel_fd,
      {{"setup", [&](const Message& request) { return HandleSetup(request, state, report_fd); }},
       {"arena", [&](const Message& request) { return HandleArena(request, channel_fd, state); }},
       {"run", [&](const Message& request) { return HandleRun(request, state); }},
       {"time_setup", [&](const Message& request) { return HandleTimeSetup(request, channel_fd, state); }},
       {"time_call", [&](const Message& request) { return HandleTimeCall(request, state); }},
       {"time_finish", [](const Message&) { return Reply("finished"); }},
       // A candidate has no host code: nothing of the process's settings is its to change.
       {"state_report", [](const Message&) { return Reply("state", {{"changes", nlohmann::json::array()}}); }},
       {"time_check", [&](const Message& request) { return HandleTimeCheck(request, state); }},
       {"time_evict", [&](const Message&) { return HandleTimeEvict(state); }},
       // A CPU device's kernels run on this machine's cores: their branch predictors forget too
       // (timing_loop.h), as far as this thread's core can make them.
       {"time_scrub", [](const Message&) {
          ScrubBranchPredictors();
          return Reply("scrubbed");
        }},
       {"time_refresh", [&](const Message& request) { return HandleTimeRefresh(request, state); }}});
}

}  // namespace ksmith
