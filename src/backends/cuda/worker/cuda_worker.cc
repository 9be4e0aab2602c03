#include "backends/cuda/worker/cuda_worker.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "backends/cuda/nvrtc_form.h"
#include "backends/cuda/worker/device_case.h"
#include "backends/cuda/worker/device_inputs.h"
#include "backends/cuda/worker/gpu_kernels.h"
#include "backends/cuda/worker/gpu_timing.h"
#include "backends/cuda/worker/nvrtc_module.h"
#include "backends/cuda/worker/stream_monitor.h"
#include "binary/shared_library.h"
#include "sandbox/call_watch.h"
#include "sandbox/policy.h"
#include "sandbox/protocol.h"
#include "sandbox/shared_memory.h"
#include "sandbox/worker_reply.h"
#include "tensor/dtype.h"

namespace ksmith {
namespace {

using Clock = std::chrono::steady_clock;

std::string CudaText(cudaError_t error) {
  return fmt::format("{} ({})", cudaGetErrorString(error), cudaGetErrorName(error));
}

struct WorkerState {
  int device = 0;
  cudaStream_t stream = nullptr;       // the one stream candidates are given
  cudaStream_t copy_stream = nullptr;  // the worker's own copies
  // The two kinds of stream a candidate may be given (setup picks one for `stream`): ksmith's
  // contract asks for work on `stream` alone, so the legacy default stream is kept unordered with
  // it (such work shows up as what it is); a KernelBench-format candidate runs as KernelBench runs
  // it, where a launch with no stream argument is ordered with the caller's work.
  cudaStream_t separate_stream = nullptr;
  cudaStream_t ordered_stream = nullptr;
  // Recorded on `stream` after a checked call: with the legacy default stream ordered, a launch
  // there is complete only when a later operation on `stream` is, not when the stream's earlier
  // work is (cudaStreamSynchronize alone would not wait for it).
  cudaEvent_t call_end = nullptr;
  std::unique_ptr<StreamMonitor> monitor;
  std::unique_ptr<SharedLibrary> libraries[4];
  // The device code of the NVRTC-form ones among them (nvrtc_module.h), bound to their launches.
  std::unique_ptr<NvrtcModule> modules[4];
  std::unique_ptr<SharedLibrary> warmed;  // the trusted library a "warm" request loaded, kept loaded
  bool set_up = false;                    // setup ran: the walls are up, nothing more is warmed
  // "candidate", "baseline", "reference", and "second_baseline" where the evaluator gave one
  // (torch.compile beside a KernelBench problem's eager baseline)
  std::map<std::string, CudaEntry> entries;
  std::map<std::string, CudaFinish> finishes;  // the baselines' ksmith_finish, where they have one
  // The candidate's, only where the evaluator says ksmith generated its shim (a KernelBench-format
  // candidate): a candidate's own code would do untimed work there.
  CudaFinish candidate_finish = nullptr;
  StateChangesReport candidate_state = nullptr;  // the same shim's report of what its Python changed
  CandidateRaisedReport candidate_raised = nullptr;  // the same shim's report of what its Python raised
  std::map<std::string, std::unique_ptr<DeviceCase>> cases;
  // The device copy of a case's memory as the stream left it, for the late-write check; grown
  // to the largest case.
  unsigned char* settled = nullptr;
  size_t settled_bytes = 0;
  unsigned long long* differing = nullptr;  // one device counter
  bool context_lost = false;
  nlohmann::json device_facts;
  int report_fd = -1;  // where the sandbox hands over its listener for forbidden calls (policy.h)
};

// Everything the driver opens or maps for its first context, streams, pinned and device memory
// happens here, before the walls go up.
Result<nlohmann::json> InitCuda(WorkerState& state) {
  if (auto error = cudaSetDevice(state.device); error != cudaSuccess) {
    return MakeError(ErrorKind::kUnsupported, "no CUDA device {}: {}", state.device, CudaText(error));
  }
  if (auto error = cudaFree(nullptr); error != cudaSuccess) {
    return MakeError(ErrorKind::kUnsupported, "cannot create a CUDA context: {}", CudaText(error));
  }
  cudaStreamCreateWithFlags(&state.separate_stream, cudaStreamNonBlocking);
  // Blocking: the legacy default stream synchronizes with it both ways.
  cudaStreamCreateWithFlags(&state.ordered_stream, cudaStreamDefault);
  state.stream = state.separate_stream;
  cudaStreamCreateWithFlags(&state.copy_stream, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&state.call_end, cudaEventDisableTiming);
  auto monitor = StreamMonitor::Start();
  if (!monitor.ok()) return monitor.error();
  state.monitor = std::move(monitor.value());
  void* warm = nullptr;
  cudaMalloc(&warm, 1 << 20);
  cudaFree(warm);
  cudaHostAlloc(&warm, 4096, cudaHostAllocMapped);
  cudaFreeHost(warm);
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, state.device);
  char uuid[64];
  const auto* bytes = reinterpret_cast<const unsigned char*>(properties.uuid.bytes);
  std::snprintf(uuid, sizeof(uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
  if (auto error = cudaGetLastError(); error != cudaSuccess) {
    return MakeError(ErrorKind::kUnsupported, "CUDA start-up failed: {}", CudaText(error));
  }
  return nlohmann::json{{"name", properties.name}, {"uuid", uuid},
                        {"l2_bytes", properties.l2CacheSize},
                        {"compute_capability", fmt::format("{}.{}", properties.major, properties.minor)}};
}

Message HandleSetup(const Message& request, WorkerState& state, const Result<nlohmann::json>& init) {
  if (!init.ok()) return Reply("load_error", {{"message", init.error().message}});
  state.device_facts = *init;
  state.set_up = true;
  Protections protections;
  if (request.header.value("sandbox", true)) {
    SandboxPolicy policy;
    policy.gpu = true;
    const auto limits = request.header.value("limits", nlohmann::json::object());
    policy.limits.cpu_seconds = limits.value("cpu_seconds", policy.limits.cpu_seconds);
    policy.limits.file_bytes = limits.value("file_bytes", policy.limits.file_bytes);
    for (const auto& path : request.header.value("readable", std::vector<std::string>{})) {
      policy.readable.emplace_back(path);
    }
    policy.scratch = request.header.value("scratch", std::string());
    policy.report_fd = state.report_fd;
    protections = ApplySandbox(policy);
  } else {
    protections.notes.push_back("sandbox disabled by the evaluator");
  }
  const auto own_code = request.header.value("own_code", std::vector<std::string>{});
  state.monitor->SetOwnCode(own_code);
  const bool default_stream_ordered = request.header.value("default_stream_ordered", false);
  state.stream = default_stream_ordered ? state.ordered_stream : state.separate_stream;
  state.monitor->SetDefaultStreamOrdered(default_stream_ordered);
  // Trusted kernels first; the candidate's static constructors run last, inside the walls. Every
  // call into a library runs in its code window (call_watch.h): what the sandbox denies trusted
  // code stays quiet, what it denies the candidate fails it.
  const char* roles[] = {"reference", "baseline", "second_baseline", "candidate"};
  for (int i = 0; i < 4; ++i) {
    const std::string path = request.header.value(roles[i], std::string());
    if (path.empty()) continue;
    const CodeWindow window = std::string_view(roles[i]) == "candidate" ? CodeWindow::kCandidate : CodeWindow::kTrusted;
    // An NVRTC-form library's device code, which the evaluator names and ksmith compiled: read
    // and loaded by the worker before anything of the library runs (nvrtc_module.h).
    std::unique_ptr<NvrtcModule> module;
    if (const std::string cubin = request.header.value(std::string(roles[i]) + "_device_code", std::string());
        !cubin.empty()) {
      ScopedCodeWindow loading(CodeWindow::kTrusted);
      auto loaded = NvrtcModule::Load(cubin);
      if (!loaded.ok()) {
        nlohmann::json reply = {{"message", fmt::format("the {}'s device code: {}", roles[i], loaded.error().message)}};
        // With `protections` a load error is the candidate's (its code did not load), without them
        // the machine's (the evaluator's infrastructure error).
        if (loaded.error().kind == ErrorKind::kInvalidArgument) reply["protections"] = protections.ToJson();
        return Reply("load_error", std::move(reply));
      }
      module = std::move(loaded.value());
    }
    if (window == CodeWindow::kCandidate) MarkCandidateLoaded();
    auto library = [&] {
      ScopedCodeWindow loading(window);
      return SharedLibrary::Open(path);
    }();
    if (!library.ok()) {
      return Reply("load_error", {{"message", library.error().message}, {"protections", protections.ToJson()}});
    }
    auto symbol = (*library)->Symbol(kKernelEntrySymbol);
    if (!symbol.ok()) return Reply("load_error", {{"message", symbol.error().message}});
    if (module) {
      if (auto bound = module->BindTo(**library); !bound.ok()) {
        return Reply("load_error", {{"message", fmt::format("the {}: {}", roles[i], bound.error().message)}});
      }
      state.modules[i] = std::move(module);
    } else if ((*library)->Symbol(kNvrtcLauncherSymbol).ok()) {
      // An NVRTC-form library whose device code nobody named would launch nothing, silently.
      return Reply("load_error", {{"message", fmt::format("the {} is an NVRTC-form library, and the evaluator named no "
                                                          "device code for it", roles[i])}});
    }
    state.entries[roles[i]] = InWindow(window, reinterpret_cast<CudaEntry>(*symbol));
    if (std::string_view(roles[i]).ends_with("baseline")) {
      if (auto finish = (*library)->Symbol(kKernelFinishSymbol); finish.ok()) {
        state.finishes[roles[i]] = InWindow(window, reinterpret_cast<CudaFinish>(*finish));
      }
    }
    if (std::string(roles[i]) == "candidate" && request.header.value("candidate_finish", false)) {
      auto finish = (*library)->Symbol(kKernelFinishSymbol);
      if (!finish.ok()) return Reply("load_error", {{"message", "the generated candidate shim has no ksmith_finish"}});
      state.candidate_finish = InWindow(window, reinterpret_cast<CudaFinish>(*finish));
      if (auto report = (*library)->Symbol(kStateChangesSymbol); report.ok()) {
        state.candidate_state = InWindow(window, reinterpret_cast<StateChangesReport>(*report));
      }
      if (auto raised = (*library)->Symbol(kCandidateRaisedSymbol); raised.ok()) {
        state.candidate_raised = InWindow(window, reinterpret_cast<CandidateRaisedReport>(*raised));
      }
    }
    state.libraries[i] = std::move(library.value());
  }
  if (auto error = cudaGetLastError(); error != cudaSuccess) {
    state.context_lost = true;
    return Reply("cuda_error",
                 {{"message", "loading the kernels: " + CudaText(error)}, {"error_name", cudaGetErrorName(error)}});
  }
  return Reply("ready", {{"protections", protections.ToJson()}, {"pid", ::getpid()}, {"device", state.device_facts}});
}

// Before setup, while the candidate builds: a trusted library's warm entry (a KernelBench
// baseline's shim starts Python and imports torch, about 3 s), so that the candidate's first
// call, in the same interpreter, does not pay it. Outside the walls, as the CUDA context is; a
// library without the entry, or one loaded after setup, is left as it is.
Message HandleWarm(const Message& request, WorkerState& state, const Result<nlohmann::json>& init) {
  if (!init.ok() || state.warmed || state.set_up) return Reply("warmed", {{"warmed", false}});
  auto library = [&] {
    ScopedCodeWindow loading(CodeWindow::kTrusted);
    return SharedLibrary::Open(request.header.value("library", std::string()));
  }();
  if (!library.ok()) return Reply("warmed", {{"warmed", false}, {"message", library.error().message}});
  auto warm = (*library)->Symbol(kKernelWarmSymbol);
  if (!warm.ok()) return Reply("warmed", {{"warmed", false}});
  {
    ScopedCodeWindow calling(CodeWindow::kTrusted);
    reinterpret_cast<KernelWarm>(*warm)();
  }
  state.warmed = std::move(library.value());
  if (auto error = cudaGetLastError(); error != cudaSuccess) {
    return Reply("warmed", {{"warmed", false}, {"cuda_error", true}, {"message", CudaText(error)}});
  }
  return Reply("warmed", {{"warmed", true}});
}

// A KernelBench candidate's Python raised nothing across its shim: what it raised since the last
// look goes with the reply (the evaluator fails the candidate for it), and this worker serves on.
Message WithRaised(const WorkerState& state, Message reply) {
  if (state.candidate_raised == nullptr) return reply;
  if (nlohmann::json raised = TakeCandidateRaised(state.candidate_raised); !raised.is_null()) {
    reply.header["candidate_raised"] = std::move(raised);
  }
  return reply;
}

Message HandleArena(const Message& request, int channel_fd, WorkerState& state) {
  auto layout = CaseLayout::FromJson(request.header);
  auto fd = ReceiveDescriptor(channel_fd, std::nullopt);
  if (!fd.ok()) return Reply("error", {{"message", fd.error().message}});
  if (!layout.ok()) {
    ::close(*fd);
    return Reply("error", {{"message", layout.error().message}});
  }
  auto memory = SharedMemory::Map(*fd, GuardedArena::RequiredBytes(*layout));
  if (!memory.ok()) return Reply("error", {{"message", memory.error().message}});
  const std::string key = layout->Key();
  auto device_case = DeviceCase::Create(std::move(layout.value()), std::move(memory.value()));
  if (!device_case.ok()) return Reply("error", {{"message", device_case.error().message}});
  const bool pinned = (*device_case)->pinned();
  state.cases[key] = std::move(device_case.value());
  return Reply("arena_ready", {{"pinned", pinned}});
}

Message CudaError(WorkerState& state, const std::string& when, cudaError_t error) {
  state.context_lost = true;
  std::string message = fmt::format("{}: {}", when, CudaText(error));
  if (const std::string refused = TakeLaunchRefusal(); !refused.empty()) message += "; " + refused;
  return Reply("cuda_error", {{"message", message}, {"error_name", cudaGetErrorName(error)}});
}

Result<DeviceCase*> FindCase(const Message& request, WorkerState& state) {
  auto layout = CaseLayout::FromJson(request.header);
  if (!layout.ok()) return layout.error();
  const auto found = state.cases.find(layout->Key());
  if (found == state.cases.end()) return MakeError(ErrorKind::kProtocol, "no arena for this layout");
  return found->second.get();
}

// Grows the worker's device buffer (`settled`) to `bytes`, and makes its one device counter.
cudaError_t EnsureScratch(WorkerState& state, size_t bytes) {
  if (state.settled_bytes < bytes) {
    if (state.settled != nullptr) cudaFree(state.settled);
    state.settled = nullptr;
    state.settled_bytes = 0;
    if (auto error = cudaMalloc(&state.settled, bytes); error != cudaSuccess) return error;
    state.settled_bytes = bytes;
  }
  if (state.differing == nullptr) {
    if (auto error = cudaMalloc(&state.differing, sizeof(*state.differing)); error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

// Copies the case's device memory into the worker's own device buffer, on the copy stream.
cudaError_t SnapshotOnDevice(WorkerState& state, const DeviceCase& device_case) {
  if (auto error = EnsureScratch(state, device_case.bytes()); error != cudaSuccess) return error;
  return cudaMemcpyAsync(state.settled, device_case.device_base(), device_case.bytes(), cudaMemcpyDeviceToDevice,
                         state.copy_stream);
}

// Sets `changed` to how many words of the case's device memory differ from the snapshot.
cudaError_t CountChangedSinceSnapshot(WorkerState& state, const DeviceCase& device_case, unsigned long long& changed) {
  changed = 0;
  cudaError_t error = cudaMemsetAsync(state.differing, 0, sizeof(*state.differing), state.copy_stream);
  if (error == cudaSuccess) {
    error = LaunchCountDifferences(device_case.device_base(), state.settled, device_case.bytes(), state.differing,
                                   state.copy_stream);
  }
  if (error == cudaSuccess) {
    error = cudaMemcpyAsync(&changed, state.differing, sizeof(changed), cudaMemcpyDeviceToHost, state.copy_stream);
  }
  return error == cudaSuccess ? cudaStreamSynchronize(state.copy_stream) : error;
}

// Fills every output of `bench` with its poison, on `stream`.
cudaError_t PoisonOutputs(const DeviceCase& bench, cudaStream_t stream) {
  const CaseLayout& layout = bench.layout();
  for (size_t slot = 0; slot < layout.tensors.size(); ++slot) {
    const TensorSlot& tensor = layout.tensors[slot];
    if (!tensor.output) continue;
    if (auto error = LaunchFill(bench.DeviceTensor(slot), tensor.bytes, DTypePoisonPattern(tensor.dtype), stream);
        error != cudaSuccess) {
      return error;
    }
  }
  return cudaSuccess;
}

// A case the evaluator asked to be drawn here: the guards it wrote, the outputs poisoned, the
// inputs drawn as its FillSlot draws them. Nothing of the inputs or outputs crosses PCIe.
cudaError_t PrepareOnDevice(WorkerState& state, DeviceCase& device_case, const CaseDraw& draw) {
  if (auto error = device_case.UploadGuards(state.copy_stream); error != cudaSuccess) return error;
  if (auto error = PoisonOutputs(device_case, state.copy_stream); error != cudaSuccess) return error;
  if (auto error = DrawInputs(device_case.layout(), device_case.DeviceTensors(), draw, state.copy_stream);
      error != cudaSuccess) {
    return error;
  }
  return cudaStreamSynchronize(state.copy_stream);
}

// The draw a request asks the worker to make of `device_case`'s inputs, if any. Errors: a
// malformed one, or one for inputs the device cannot draw as the host does.
Result<std::optional<CaseDraw>> RequestedDraw(const Message& request, const DeviceCase& device_case) {
  auto draw = CaseDraw::FromRequest(request.header);
  if (draw.ok() && *draw && !DrawableOnDevice(device_case.layout())) {
    return MakeError(ErrorKind::kProtocol, "this layout's inputs cannot be drawn on the device");
  }
  return draw;
}

// What ReadBack brought back, or the CUDA error that stopped it and in doing what.
struct ReadBackResult {
  ArenaPart part = ArenaPart::kAll;
  cudaError_t error = cudaSuccess;
  const char* when = "";
};

// Brings back what the evaluator judges, once the device is idle. With the inputs drawn here
// (`draw`) and found as drawn (compared on the device with a second draw), the guards and outputs
// alone; otherwise, the whole arena, and the evaluator finds the change byte for byte. The trusted
// reference's inputs are not looked at (`untrusted` false): only its answers are read.
ReadBackResult ReadBack(WorkerState& state, DeviceCase& device_case, const std::optional<CaseDraw>& draw,
                        bool untrusted = true) {
  if (draw && !untrusted) {
    return {ArenaPart::kGuardsAndOutputs, device_case.DownloadGuardsAndOutputs(state.copy_stream),
            "downloading the outputs"};
  }
  if (draw) {
    unsigned long long changed = 0;
    cudaError_t error = EnsureScratch(state, LargestInputBytes(device_case.layout()));
    if (error == cudaSuccess) {
      error = CountInputChanges(device_case.layout(), device_case.DeviceTensors(), *draw, state.settled,
                                state.differing, state.copy_stream, changed);
    }
    if (error != cudaSuccess) return {ArenaPart::kAll, error, "comparing the inputs with their draw"};
    if (changed == 0) {
      error = device_case.DownloadGuardsAndOutputs(state.copy_stream);
      return {ArenaPart::kGuardsAndOutputs, error, "downloading the outputs"};
    }
  }
  return {ArenaPart::kAll, device_case.Download(state.copy_stream), "downloading the case"};
}

Message HandleRun(const Message& request, WorkerState& state) {
  auto found = FindCase(request, state);
  if (!found.ok()) return Reply("error", {{"message", found.error().message}});
  DeviceCase& device_case = **found;
  const std::string target = request.header.value("target", std::string("candidate"));
  const auto entry = state.entries.find(target);
  if (entry == state.entries.end()) return Reply("error", {{"message", "no " + target + " kernel loaded"}});
  const auto draw = RequestedDraw(request, device_case);
  if (!draw.ok()) return Reply("error", {{"message", draw.error().message}});
  TakeLaunchRefusal();  // an earlier request's, reported with it or forgotten
  const auto received = Clock::now();
  if (auto error = *draw ? PrepareOnDevice(state, device_case, **draw) : device_case.Upload(state.copy_stream);
      error != cudaSuccess) {
    return CudaError(state, "preparing the case", error);
  }
  const auto uploaded = Clock::now();
  // The checked calls only: attributing each launch walks the stack, which no timed call pays
  // (the monitor attributes only where the evaluator named the candidate's own code).
  const bool attribute = state.monitor->AttributeLaunches(target == "candidate");
  state.monitor->Begin(state.stream, {state.copy_stream});
  // Extra calls first (a secret number, in the re-check): a kernel that counts its calls
  // changes behaviour somewhere in there, and the checked call is the last one.
  const int repeat = std::clamp(request.header.value("repeat", 0), 0, 100'000);
  for (int i = 0; i < repeat; ++i) {
    entry->second(device_case.device_pointers(), device_case.scalars(), state.stream);
  }
  TakeLaunchRefusal();  // the extra calls': the checked call is the one reported
  const auto start = Clock::now();
  entry->second(device_case.device_pointers(), device_case.scalars(), state.stream);
  if (const auto finish = state.finishes.find(target); finish != state.finishes.end()) finish->second(state.stream);
  if (target == "candidate" && state.candidate_finish != nullptr) state.candidate_finish(state.stream);
  const auto returned = Clock::now();
  const cudaError_t launch_error = cudaGetLastError();
  cudaError_t stream_error = cudaEventRecord(state.call_end, state.stream);
  if (stream_error == cudaSuccess) stream_error = cudaEventSynchronize(state.call_end);
  const auto complete = Clock::now();
  state.monitor->MarkCallComplete();
  if (stream_error != cudaSuccess) return CudaError(state, "the kernel failed", stream_error);
  // What the stream left (a device copy, taken before the download), then what the whole device
  // left: any difference was written by work still running after the stream completed. The
  // trusted reference leaves nothing running; only untrusted code needs the second look. Both
  // copies stay on the device: a second download and a host memcmp took most of a large case's
  // time.
  const bool untrusted = target != "reference";
  if (untrusted) {
    if (auto error = SnapshotOnDevice(state, device_case); error != cudaSuccess) {
      return CudaError(state, "copying the outputs", error);
    }
  }
  if (auto error = cudaDeviceSynchronize(); error != cudaSuccess) {
    return CudaError(state, "work left running after the call failed", error);
  }
  bool late_write = false;
  if (untrusted) {
    unsigned long long changed = 0;
    if (auto error = CountChangedSinceSnapshot(state, device_case, changed); error != cudaSuccess) {
      return CudaError(state, "comparing the outputs", error);
    }
    late_write = changed != 0;
  }
  const auto read_back = ReadBack(state, device_case, *draw, untrusted);
  if (read_back.error != cudaSuccess) return CudaError(state, read_back.when, read_back.error);
  const auto downloaded = Clock::now();
  StreamReport streams = state.monitor->Collect();
  state.monitor->AttributeLaunches(false);
  const auto collected = Clock::now();
  auto us = [](auto from, auto to) { return std::chrono::duration<double, std::micro>(to - from).count(); };
  nlohmann::json reply = {
      {"elapsed_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(complete - start).count()},
      {"return_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(returned - start).count()},
      {"kernels", streams.kernels_on_stream},
      {"device_ns", streams.device_time_ns},
      {"violations", streams.violations},
      {"late_write", late_write},
      {"drew", draw->has_value()},
      {"inputs_as_drawn", read_back.part == ArenaPart::kGuardsAndOutputs},
      // Where the worker's time went, for the latency benchmark.
      {"phase_us", {{"upload", us(received, uploaded)}, {"begin", us(uploaded, start)},
                    {"call", us(start, complete)}, {"download", us(complete, downloaded)},
                    {"collect", us(downloaded, collected)}}}};
  // A launch the NVRTC launcher refused says why (nvrtc_module.h), even where the candidate
  // cleared the CUDA error it left.
  if (const std::string refused = TakeLaunchRefusal(); launch_error != cudaSuccess || !refused.empty()) {
    reply["launch_error"] = launch_error != cudaSuccess ? CudaText(launch_error) + (refused.empty() ? "" : "; " + refused)
                                                        : "refused: " + refused;
  }
  if (attribute) {
    reply["own_kernels"] = streams.own_kernels;
    reply["own_device_ns"] = streams.own_device_time_ns;
    reply["launched_by"] = streams.launched_by;
  }
  return WithRaised(state, Reply("result", std::move(reply)));
}

// Whether every output of `bench` still begins with the poison PoisonOutputs left there. The timing
// loop's comparison skips a baseline's non-finite values (a baseline may compute them), so a
// second baseline that could not run (torch.compile whose caches missed writes nothing) must be
// caught before: it would read as one that takes no time.
Result<bool> OutputsStillPoisoned(const DeviceCase& bench) {
  const CaseLayout& layout = bench.layout();
  for (size_t slot = 0; slot < layout.tensors.size(); ++slot) {
    const TensorSlot& tensor = layout.tensors[slot];
    if (!tensor.output) continue;
    uint32_t head[64] = {};
    const size_t words = std::min<size_t>(std::size(head), tensor.bytes / sizeof(uint32_t));
    if (auto error = cudaMemcpy(head, bench.DeviceTensor(slot), words * sizeof(uint32_t), cudaMemcpyDeviceToHost);
        error != cudaSuccess) {
      return MakeError(ErrorKind::kInternal, "reading the second baseline's output: {}", cudaGetErrorString(error));
    }
    const uint32_t poison = DTypePoisonPattern(tensor.dtype);
    if (!std::all_of(head, head + words, [&](uint32_t word) { return word == poison; })) return false;
  }
  return true;
}

Message HandleTime(const Message& request, WorkerState& state) {
  auto found = FindCase(request, state);
  if (!found.ok()) return Reply("error", {{"message", found.error().message}});
  // Against the task's baseline, or against the second one the evaluator loaded (torch.compile).
  const std::string against = request.header.value("against", std::string("baseline"));
  const auto candidate = state.entries.find("candidate");
  const auto baseline = state.entries.find(against);
  if (candidate == state.entries.end() || baseline == state.entries.end() || !against.ends_with("baseline")) {
    return Reply("error", {{"message", fmt::format("timing needs both the candidate and the {}", against)}});
  }
  const auto finish = state.finishes.find(against);
  const CudaFinish baseline_finish = finish != state.finishes.end() ? finish->second : nullptr;
  DeviceCase& bench = **found;
  const auto draw = RequestedDraw(request, bench);
  if (!draw.ok()) return Reply("error", {{"message", draw.error().message}});
  if (auto error = *draw ? PrepareOnDevice(state, bench, **draw) : bench.Upload(state.copy_stream);
      error != cudaSuccess) {
    return CudaError(state, "preparing the timing case", error);
  }
  if (against != "baseline") {
    // Its first call loads what it runs (torch.compile traces the model and loads inductor's
    // kernels, seconds): made here, untimed, before the loop's rounds.
    if (auto error = PoisonOutputs(bench, state.stream); error != cudaSuccess) {
      return CudaError(state, "poisoning the outputs", error);
    }
    baseline->second(bench.device_pointers(), bench.scalars(), state.stream);
    if (baseline_finish != nullptr) baseline_finish(state.stream);
    if (auto error = cudaStreamSynchronize(state.stream); error != cudaSuccess) {
      return CudaError(state, "the second baseline's first call", error);
    }
    auto unwritten = OutputsStillPoisoned(bench);
    if (!unwritten.ok()) return Reply("error", {{"message", unwritten.error().message}});
    if (*unwritten) {
      return Reply("error", {{"message", fmt::format("the {} wrote no output (it could not run here; the worker's log "
                                                     "says why)", against)}});
    }
  }
  const auto config = GpuTimingConfig::FromJson(request.header.value("config", nlohmann::json::object()));
  TakeLaunchRefusal();  // an earlier request's, reported with it or forgotten
  auto timed = TimeOnGpu(bench, candidate->second, baseline->second, state.stream, state.copy_stream,
                         *state.monitor, config, baseline_finish, state.candidate_finish);
  if (!timed.ok()) {
    const cudaError_t error = cudaGetLastError();
    state.context_lost = true;
    std::string message = timed.error().message;
    if (const std::string refused = TakeLaunchRefusal(); !refused.empty()) message += "; " + refused;
    return Reply("cuda_error", {{"message", message},
                                {"error_name", cudaGetErrorName(error)}});
  }
  // The last call's inputs were drawn from the final seed (a held input keeps the bench case's).
  std::optional<CaseDraw> final_draw;
  if (*draw && config.final_seed != 0) {
    final_draw = CaseDraw{config.final_seed, static_cast<Distribution>(config.distribution)};
  }
  const auto read_back = ReadBack(state, bench, final_draw);
  if (read_back.error != cudaSuccess) return CudaError(state, read_back.when, read_back.error);
  nlohmann::json timed_reply = std::move(timed.value());
  timed_reply["drew"] = draw->has_value();
  timed_reply["inputs_as_drawn"] = read_back.part == ArenaPart::kGuardsAndOutputs;
  // A launch refused in a timed call ran no kernel: the verdict's checks of the timed outputs
  // fail it, and this says why.
  if (const std::string refused = TakeLaunchRefusal(); !refused.empty()) timed_reply["launch_refused"] = refused;
  return WithRaised(state, Reply("timed", std::move(timed_reply)));
}

// Nothing may run once the candidate's calls are over: a thread it left behind that launches
// later is caught here, after a pause long enough for it to act.
Message HandleIdle(const Message& request, WorkerState& state) {
  state.monitor->Begin(state.stream, {state.copy_stream});
  state.monitor->MarkCallComplete();
  std::this_thread::sleep_for(std::chrono::milliseconds(request.header.value("wait_ms", 100)));
  if (auto error = cudaDeviceSynchronize(); error != cudaSuccess) {
    return CudaError(state, "work launched after the calls failed", error);
  }
  StreamReport streams = state.monitor->Collect(/*idle=*/true);
  return Reply("idle_done", {{"violations", streams.violations}});
}

}  // namespace

int RunCudaWorker(int channel_fd, int device, int report_fd) {
  WorkerState state;
  state.device = device;
  state.report_fd = report_fd;
  // The context (0.3 s) is created before the first request, while the evaluator still compiles.
  const auto init = InitCuda(state);
  return ServeRequests(
      channel_fd,
      {{"warm", [&](const Message& request) { return HandleWarm(request, state, init); }},
       {"setup", [&](const Message& request) { return HandleSetup(request, state, init); }},
       {"arena", [&](const Message& request) { return HandleArena(request, channel_fd, state); }},
       {"run", [&](const Message& request) { return HandleRun(request, state); }},
       {"state_report",
        [&](const Message&) {
          nlohmann::json reply = {{"changes", nlohmann::json::array()}};
          if (state.candidate_state != nullptr) {
            const CandidateReport report = ReadCandidateReport(state.candidate_state);
            reply["changes"] = report.changes;
            reply["custom_code"] = report.CustomCodeJson();
            reply["restored"] = report.restored;
          }
          return Reply("state", reply);
        }},
       {"time", [&](const Message& request) { return HandleTime(request, state); }},
       {"idle", [&](const Message& request) { return HandleIdle(request, state); }}},
      [&state] {
        // A lost context cannot run anything else; exit without touching the GPU again.
        if (state.context_lost) std::_Exit(0);
      });
}

}  // namespace ksmith
