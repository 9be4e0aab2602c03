// How one case's tensors sit in the worker's memory: each tensor between two guard zones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sandbox/guard_zones.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {

struct TensorSlot {
  size_t parameter = 0;  // index in the signature
  size_t bytes = 0;
  bool output = false;
  DType dtype = DType::kFloat32;  // what workers generate, poison and compare it as
  InputDraw draw;                 // how an input's values are drawn (timing sets, mutations)

  size_t Elements() const { return bytes / DTypeBytes(dtype); }
};

/// What a "run" request describes: the scalars of every parameter and the tensors' slots.
struct CaseLayout {
  std::vector<int64_t> scalars;  // per signature parameter (0 for tensors)
  std::vector<TensorSlot> tensors;
  size_t guard_bytes = 256;
  /// The seed of its held inputs (InputDraw::held): one per verification, so that a module's
  /// weights are the same in every case, timing set and call at a shape.
  uint64_t held_seed = 0;

  /// Draws input `slot`'s values as FillInput does with `distribution`, `seed` and `stream`; a
  /// held input instead with the held seed, its parameter index and its own distribution.
  void FillSlot(const TensorSlot& slot, float* data, Distribution distribution, uint64_t seed,
                uint64_t stream) const;
  nlohmann::json ToJson() const;
  static Result<CaseLayout> FromJson(const nlohmann::json& json);
  /// Identical keys get identical buffers.
  std::string Key() const;
  /// Bytes of the snapshot: every tensor with both guards.
  size_t SnapshotBytes() const;
};

/// The draw of one case's inputs, which a CUDA worker repeats on the device (FillSlot's values, bit
/// for bit) instead of receiving them: the case's seed and distribution, with the layout's held seed.
struct CaseDraw {
  uint64_t seed = 0;
  Distribution distribution = Distribution::kNormal;

  nlohmann::json ToJson() const;
  /// The "draw" field of a request; nullopt where there is none. Errors: a malformed one.
  static Result<std::optional<CaseDraw>> FromRequest(const nlohmann::json& header);
};

/// Whether every input of `layout` can be drawn on the device as the host draws it: floating
/// point inputs, and integer ranges only in int32 tensors, within +-2^24 (the host's draw passes
/// through a float).
bool DrawableOnDevice(const CaseLayout& layout);

/// Which parts of an arena the evaluator reads back.
enum class ArenaPart {
  kAll,              // every tensor with its guards
  kGuardsAndOutputs  // the worker checked the inputs on the device; their bytes are not read
};

/// One allocation holding [guard | tensor | guard] per tensor, 64-byte aligned tensors.
class GuardedArena {
 public:
  /// Allocates its own memory.
  explicit GuardedArena(const CaseLayout& layout);
  /// Uses memory owned elsewhere (a mapping shared between evaluator and worker): 64-byte
  /// aligned and at least RequiredBytes(layout) long.
  GuardedArena(const CaseLayout& layout, unsigned char* base);
  ~GuardedArena();

  static size_t RequiredBytes(const CaseLayout& layout);
  GuardedArena(const GuardedArena&) = delete;
  GuardedArena& operator=(const GuardedArena&) = delete;

  /// Fills the guards from `guard_key` (GuardPattern: bytes that differ per tensor, side and
  /// position), copies `inputs` (input tensors, in slot order) and poisons the outputs with their
  /// dtype's NaN pattern (DTypePoisonPattern).
  Status Prepare(std::string_view inputs, uint64_t guard_key);
  /// Only the guards: the worker draws the inputs and poisons the outputs on the device.
  void PrepareGuards(uint64_t guard_key);
  /// Every tensor with its guards, in slot order.
  std::string Snapshot() const;
  /// The same into `snapshot`, whose memory is reused: a case's snapshot can be hundreds of
  /// megabytes, and fresh pages for each cost more than the copy.
  /// With kGuardsAndOutputs the inputs' bytes in `snapshot` are left as they were.
  void SnapshotInto(std::string& snapshot, ArenaPart part = ArenaPart::kAll) const;

  void* const* pointers() const { return pointers_.data(); }
  const int64_t* scalars() const { return layout_.scalars.data(); }

 private:
  CaseLayout layout_;
  std::vector<size_t> offsets_;  // start of each slot's leading guard
  size_t total_bytes_ = 0;
  unsigned char* base_ = nullptr;
  bool owns_memory_ = false;
  std::vector<void*> pointers_;  // per signature parameter

  void PlaceTensors();
};

/// Fills `size` bytes with the 4-byte `pattern` repeated.
void FillPattern(unsigned char* data, size_t size, uint32_t pattern);
/// The first byte offset in `data` that breaks the repeated `pattern`, or npos.
size_t FindPatternBreak(std::string_view data, uint32_t pattern);

}  // namespace ksmith
