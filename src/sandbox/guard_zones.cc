#include "sandbox/guard_zones.h"

#include <algorithm>
#include <cstring>

#include "tensor/random.h"

namespace ksmith {
namespace {

// Stream ids of the zones, apart from every stream the input draws use (small numbers and the
// timing loop's millions).
constexpr uint64_t kGuardStreamBase = 0x6a4d'0000'0000ull;
constexpr uint64_t kGuardKeySalt = 0x6a4d;
constexpr uint64_t kLowBitOfEveryByte = 0x0101010101010101ull;

// Whole words where the zone is long enough, a word's low bytes at the end.
template <typename Visit>
void ForEachWord(size_t size, Visit&& visit) {
  for (size_t offset = 0; offset < size; offset += 8) visit(offset / 8, offset, std::min<size_t>(8, size - offset));
}

void StoreLittleEndian(uint64_t word, unsigned char* bytes, size_t count) {
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<unsigned char>(word >> (8 * i));
}

}  // namespace

const char* GuardSideName(GuardSide side) { return side == GuardSide::kBefore ? "before" : "after"; }

uint64_t GuardPattern::Word(size_t slot, GuardSide side, size_t index) const {
  const uint64_t stream = kGuardStreamBase + 2 * static_cast<uint64_t>(slot) + (side == GuardSide::kAfter ? 1 : 0);
  return MixCounter(key_, stream, index) | kLowBitOfEveryByte;
}

void GuardPattern::Fill(unsigned char* zone, size_t size, size_t slot, GuardSide side) const {
  ForEachWord(size, [&](size_t index, size_t offset, size_t count) {
    StoreLittleEndian(Word(slot, side, index), zone + offset, count);
  });
}

GuardDamage GuardPattern::Inspect(std::string_view zone, size_t slot, GuardSide side) const {
  GuardDamage damage;
  ForEachWord(zone.size(), [&](size_t index, size_t offset, size_t count) {
    unsigned char expected[8];
    StoreLittleEndian(Word(slot, side, index), expected, count);
    if (std::memcmp(expected, zone.data() + offset, count) == 0) return;
    for (size_t i = 0; i < count; ++i) {
      if (static_cast<unsigned char>(zone[offset + i]) == expected[i]) continue;
      if (damage.changed == 0) damage.first = offset + i;
      damage.last = offset + i;
      ++damage.changed;
    }
  });
  return damage;
}

uint64_t GuardKey(uint64_t secret_seed) { return MixCounter(secret_seed, kGuardKeySalt, 0); }

}  // namespace ksmith
