#include "sandbox/shared_arena.h"

#include <unistd.h>

#include <algorithm>

#include "core/parallel.h"

namespace ksmith {

Result<SharedArena> ShareArena(WorkerProcess& worker, const CaseLayout& layout, std::chrono::milliseconds timeout) {
  auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(layout));
  if (!memory.ok()) return memory.error();
  // Its pages made now on several threads, not one by one by the first copy into them (nor by
  // the worker pinning them on its one thread).
  PrefaultPages((*memory)->data(), GuardedArena::RequiredBytes(layout));
  Message announce;
  announce.header = layout.ToJson();
  announce.header["type"] = "arena";
  auto reply = worker.Request(announce, "arena_ready", timeout, "sharing case memory", (*memory)->fd());
  if (!reply) return MakeError(ErrorKind::kProtocol, "{}", worker.failure()->description);
  if (reply->type() != "arena_ready") {
    return MakeError(ErrorKind::kInternal, "worker error: {}", reply->header.value("message", std::string("?")));
  }
  SharedArena shared;
  shared.pinned = reply->header.value("pinned", true);
  shared.arena = std::make_unique<GuardedArena>(layout, (*memory)->data());
  shared.memory = std::move(memory.value());
  return shared;
}

Result<SharedRequest> ReceiveShared(const nlohmann::json& header, int channel_fd,
                                    size_t (*bytes_for)(const CaseLayout&, const nlohmann::json&)) {
  auto layout = CaseLayout::FromJson(header);
  auto fd = ReceiveDescriptor(channel_fd, std::nullopt);
  if (!fd.ok()) return fd.error();
  if (!layout.ok()) {
    ::close(*fd);
    return layout.error();
  }
  auto memory = SharedMemory::Map(*fd, std::max<size_t>(bytes_for(*layout, header), 1));
  if (!memory.ok()) return memory.error();
  return SharedRequest{std::move(layout.value()), std::move(memory.value())};
}

}  // namespace ksmith
