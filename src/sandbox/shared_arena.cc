#include "sandbox/shared_arena.h"

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

}  // namespace ksmith
