#include "backends/cuda/worker/stream_monitor.h"

#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "binary/launch_origin.h"

namespace ksmith {
namespace {

constexpr size_t kActivityBufferBytes = size_t{4} << 20;
constexpr size_t kMaxViolations = 8;
// CUPTI converts GPU timestamps to its CPU clock; over hundreds of kernels the two drift apart
// by microseconds, so "after the call" must mean clearly after.
constexpr uint64_t kLateMarginNs = 5'000'000;

struct KernelRecord {
  uint32_t correlation_id = 0;
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::string name;
};

struct TransferRecord {
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  const char* what = "";
};

// CUPTI calls plain functions on its own threads; this is their one shared state.
struct MonitorState {
  std::mutex mutex;
  std::vector<KernelRecord> kernels;
  std::vector<TransferRecord> transfers;
  std::vector<std::string> api_violations;
  pid_t main_thread = 0;
  CUpti_SubscriberHandle subscriber = nullptr;
  // While launches are attributed: each launch's calling library, by CUPTI's correlation id.
  std::optional<LaunchOrigin> origin;
  bool attributing = false;
  std::map<uint32_t, std::string> launched_by;
};

MonitorState& State() {
  static MonitorState* state = new MonitorState;  // outlives every CUPTI callback
  return *state;
}

pid_t ThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  auto& state = State();
  std::lock_guard lock(state.mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        state.kernels.push_back({kernel->correlationId, kernel->streamId, kernel->start, kernel->end,
                                 kernel->name ? kernel->name : "?"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        state.transfers.push_back({copy->streamId, copy->start, "copy"});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        state.transfers.push_back({set->streamId, set->start, "memset"});
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

// Work enqueued from a thread other than the one that called the candidate: a thread the
// candidate started, launching where and when nobody looks.
void CUPTIAPI OnApiCall(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER || info->functionName == nullptr) return;
  auto& state = State();
  const std::string_view name = info->functionName;
  const bool launches = name.find("Launch") != std::string_view::npos;
  if (ThreadId() == state.main_thread) {
    if (launches && state.attributing && state.origin) {
      std::string caller = state.origin->Caller();
      std::lock_guard lock(state.mutex);
      state.launched_by[info->correlationId] = std::move(caller);
    }
    return;
  }
  const bool enqueues = launches || name.find("Memcpy") != std::string_view::npos ||
                        name.find("Memset") != std::string_view::npos;
  if (!enqueues) return;
  std::lock_guard lock(state.mutex);
  if (state.api_violations.size() < kMaxViolations) {
    state.api_violations.push_back(
        fmt::format("{} was called from a thread the evaluator did not start", name));
  }
}

const char* CuptiText(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text ? text : "unknown CUPTI error";
}

uint32_t StreamId(cudaStream_t stream) {
  CUcontext context = nullptr;
  cuCtxGetCurrent(&context);
  uint32_t id = 0;
  cuptiGetStreamIdEx(context, reinterpret_cast<CUstream>(stream), 0, &id);
  return id;
}

// The window being judged; only the main thread touches it.
struct Window {
  uint32_t allowed_stream = 0;
  std::optional<uint32_t> legacy_stream;  // where the legacy default stream counts as allowed
  std::set<uint32_t> trusted_streams;
  uint64_t complete_ns = 0;  // 0: not marked
} window;

}  // namespace

Result<std::unique_ptr<StreamMonitor>> StreamMonitor::Start() {
  auto& state = State();
  state.main_thread = ThreadId();
  // What a launch passes through on its way to the GPU, never the code that asked for it.
  state.origin.emplace(std::vector<std::string>{"libcuda.", "libcupti", "libcudart", "libnvidia-"});
  if (auto result = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
      result != CUPTI_SUCCESS) {
    return MakeError(ErrorKind::kUnsupported, "CUPTI activity callbacks: {}", CuptiText(result));
  }
  for (const auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                          CUPTI_ACTIVITY_KIND_MEMSET}) {
    if (auto result = cuptiActivityEnable(kind); result != CUPTI_SUCCESS) {
      return MakeError(ErrorKind::kUnsupported, "CUPTI cannot record activity: {}", CuptiText(result));
    }
  }
  if (auto result = cuptiSubscribe(&state.subscriber, OnApiCall, nullptr); result != CUPTI_SUCCESS) {
    return MakeError(ErrorKind::kUnsupported, "CUPTI cannot subscribe: {}", CuptiText(result));
  }
  cuptiEnableDomain(1, state.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, state.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  return std::unique_ptr<StreamMonitor>(new StreamMonitor());
}

StreamMonitor::~StreamMonitor() {
  auto& state = State();
  if (state.subscriber) cuptiUnsubscribe(state.subscriber);
  state.subscriber = nullptr;
  cuptiActivityFlushAll(1);
}

void StreamMonitor::Begin(cudaStream_t allowed, const std::vector<cudaStream_t>& trusted_streams) {
  cuptiActivityFlushAll(0);
  {
    auto& state = State();
    std::lock_guard lock(state.mutex);
    state.kernels.clear();
    state.transfers.clear();
  }
  {
    auto& state = State();
    std::lock_guard lock(state.mutex);
    state.launched_by.clear();
  }
  window = Window{};
  window.allowed_stream = StreamId(allowed);
  // A null stream is the legacy default stream where the code is not built for per-thread
  // default streams (CUPTI's flag 0); the per-thread one has an id of its own and stays foreign.
  if (default_stream_ordered_) {
    if (const uint32_t legacy = StreamId(nullptr); legacy != 0) window.legacy_stream = legacy;
  }
  for (auto stream : trusted_streams) window.trusted_streams.insert(StreamId(stream));
}

void StreamMonitor::MarkCallComplete() { cuptiGetTimestamp(&window.complete_ns); }

StreamReport StreamMonitor::Collect(bool idle) {
  cuptiActivityFlushAll(0);
  StreamReport report;
  auto& state = State();
  std::lock_guard lock(state.mutex);
  auto add = [&](std::string text) {
    if (report.violations.size() < kMaxViolations) report.violations.push_back(std::move(text));
  };
  for (auto& violation : state.api_violations) add(std::move(violation));
  state.api_violations.clear();
  // Records older than Begin() were flushed and dropped there; everything here is this window's.
  for (const auto& kernel : state.kernels) {
    if (window.trusted_streams.count(kernel.stream_id) > 0) continue;
    if (idle) {
      add(fmt::format("kernel {} ran on stream {} after the calls had returned", kernel.name, kernel.stream_id));
    } else if (kernel.stream_id == window.allowed_stream || kernel.stream_id == window.legacy_stream) {
      ++report.kernels_on_stream;
      report.device_time_ns += kernel.end_ns - kernel.start_ns;
      if (state.attributing) {
        const auto found = state.launched_by.find(kernel.correlation_id);
        const std::string library = found != state.launched_by.end() ? found->second : std::string();
        if (!library.empty() && IsOwn(library)) {
          ++report.own_kernels;
          report.own_device_time_ns += kernel.end_ns - kernel.start_ns;
        }
        ++report.launched_by[library.empty() ? "unknown" : library.substr(library.rfind('/') + 1)];
      }
    } else {
      add(window.legacy_stream
              ? fmt::format("kernel {} ran on stream {}, neither the stream it was given (stream {}) nor the "
                            "legacy default stream ordered with it (stream {})",
                            kernel.name, kernel.stream_id, window.allowed_stream, *window.legacy_stream)
              : fmt::format("kernel {} ran on stream {}, not on the stream it was given (stream {})", kernel.name,
                            kernel.stream_id, window.allowed_stream));
    }
  }
  for (const auto& transfer : state.transfers) {
    if (window.trusted_streams.count(transfer.stream_id) > 0) continue;
    if (idle) {
      add(fmt::format("a {} on stream {} ran after the calls had returned", transfer.what, transfer.stream_id));
    } else if (window.complete_ns != 0 && transfer.start_ns > window.complete_ns + kLateMarginNs) {
      add(fmt::format("a {} on stream {} started after the call's stream had completed",
                      transfer.what, transfer.stream_id));
    }
  }
  state.kernels.clear();
  state.transfers.clear();
  state.launched_by.clear();
  return report;
}

bool StreamMonitor::IsOwn(const std::string& library) {
  auto [known, added] = own_library_.try_emplace(library, false);
  if (added) {
    // As loaded (the path the loader was given) or as it really lies (through symbolic links).
    std::error_code error;
    const std::string real = std::filesystem::weakly_canonical(library, error).string();
    known->second = IsUnder(library, own_code_) || (!error && IsUnder(real, own_code_));
  }
  return known->second;
}

bool StreamMonitor::AttributeLaunches(bool on) {
  auto& state = State();
  std::lock_guard lock(state.mutex);
  state.attributing = on && !own_code_.empty();
  return state.attributing;
}

}  // namespace ksmith
