// What the guard zones around a case's tensors hold (GuardedArena, sandbox/layout.h), and how a
// zone is read back.
//
// Every zone byte is a keyed hash of the evaluation's secret guard key, the tensor's slot, the
// side of the tensor and the byte's offset in the zone. A single value repeated in every zone
// let a write past the end go unseen whenever it copied bytes from another zone: an off-by-one
// ReLU writes relu(x[n]), the first word after x, into y[n], and that word was y's own guard
// whenever it read as a positive float. Per buffer, per side and per position, a copy from any
// other zone, or from elsewhere in the same zone, changes what the zone holds; and no kernel can
// compute the bytes from its inputs, which are drawn under other keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ksmith {

enum class GuardSide { kBefore, kAfter };

/// "before" or "after".
const char* GuardSideName(GuardSide side);

/// The bytes of one zone that differ from what GuardPattern::Fill wrote there. Offsets count
/// from the zone's first byte.
struct GuardDamage {
  size_t changed = 0;  // bytes that differ
  size_t first = 0;    // the lowest differing offset (when changed > 0)
  size_t last = 0;     // the highest

  bool any() const { return changed > 0; }
  /// The differing byte nearest the tensor: `last` before it, `first` after it.
  size_t Nearest(GuardSide side) const { return side == GuardSide::kBefore ? last : first; }
};

/// One evaluation's guard zones.
class GuardPattern {
 public:
  explicit GuardPattern(uint64_t key) : key_(key) {}

  /// Writes zone (`slot`, `side`)'s `size` bytes at `zone`.
  void Fill(unsigned char* zone, size_t size, size_t slot, GuardSide side) const;
  /// Compares `zone` with what Fill writes for (`slot`, `side`).
  GuardDamage Inspect(std::string_view zone, size_t slot, GuardSide side) const;

 private:
  /// The 8 zone bytes from offset 8 * `index`. Each byte has its lowest bit set, so that a zero
  /// (0.0f, -0.0f, a small integer, a memset) never matches a whole word.
  uint64_t Word(size_t slot, GuardSide side, size_t index) const;

  uint64_t key_;
};

/// The guard key of an evaluation, from its secret seed: independent of every input draw, which
/// derive their seeds from the same secret under other salts.
uint64_t GuardKey(uint64_t secret_seed);

}  // namespace ksmith
