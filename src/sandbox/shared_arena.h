// Case memory shared with a worker: created here, handed to the worker over its channel
// (SCM_RIGHTS), and seen through a guarded view. The same for every kind of worker.
#pragma once

#include <chrono>
#include <memory>

#include "core/result.h"
#include "sandbox/layout.h"
#include "sandbox/shared_memory.h"
#include "sandbox/supervisor.h"

namespace ksmith {

struct SharedArena {
  std::unique_ptr<SharedMemory> memory;
  std::unique_ptr<GuardedArena> arena;
  bool pinned = true;  // false when a GPU worker could not page-lock it (copies are then slower)
};

/// Creates the memory for `layout` and hands it to `worker`. When the worker itself failed
/// (crash, timeout), the error says so and `worker.failure()` is set; other errors are ksmith's.
Result<SharedArena> ShareArena(WorkerProcess& worker, const CaseLayout& layout, std::chrono::milliseconds timeout);

/// The worker's side of a request that hands over shared memory: its layout, and the memory
/// mapped at the size `bytes_for` derives from the layout and the request. The descriptor is
/// always taken off the channel.
struct SharedRequest {
  CaseLayout layout;
  std::unique_ptr<SharedMemory> memory;
};
Result<SharedRequest> ReceiveShared(const nlohmann::json& header, int channel_fd,
                                    size_t (*bytes_for)(const CaseLayout&, const nlohmann::json&));

}  // namespace ksmith
