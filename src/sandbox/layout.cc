#include "sandbox/layout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/parallel.h"
#include "tensor/compare.h"

namespace ksmith {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kMaxTensorBytes = size_t{1} << 40;

size_t RoundUp(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

void CaseLayout::FillSlot(const TensorSlot& slot, float* data, Distribution distribution, uint64_t seed,
                          uint64_t stream) const {
  if (slot.draw.held) {
    FillInput(data, slot.Elements(), slot.draw, Distribution::kNormal, held_seed, slot.parameter);
  } else {
    FillInput(data, slot.Elements(), slot.draw, distribution, seed, stream);
  }
}

nlohmann::json CaseLayout::ToJson() const {
  nlohmann::json tensors_json = nlohmann::json::array();
  for (const auto& slot : tensors) {
    nlohmann::json slot_json = {{"parameter", slot.parameter}, {"bytes", slot.bytes}, {"output", slot.output}};
    if (slot.dtype != DType::kFloat32) slot_json["dtype"] = DTypeName(slot.dtype);
    if (!slot.draw.IsDefault()) {
      nlohmann::json draw = {{"scale", slot.draw.scale}, {"offset", slot.draw.offset},
                             {"nonnegative", slot.draw.nonnegative}};
      if (slot.draw.own) draw["distribution"] = DistributionName(*slot.draw.own);
      if (slot.draw.integers) draw["integers"] = {slot.draw.integers->low, slot.draw.integers->high};
      if (slot.draw.held) draw["held"] = true;
      slot_json["draw"] = std::move(draw);
    }
    tensors_json.push_back(std::move(slot_json));
  }
  nlohmann::json json = {{"scalars", scalars}, {"tensors", tensors_json}, {"guard_bytes", guard_bytes}};
  // Only where something is held: the layouts of ksmith's own tasks keep their keys.
  const bool holds = std::any_of(tensors.begin(), tensors.end(), [](const TensorSlot& slot) { return slot.draw.held; });
  if (holds) json["held_seed"] = held_seed;
  return json;
}

Result<CaseLayout> CaseLayout::FromJson(const nlohmann::json& json) {
  CaseLayout layout;
  try {
    layout.scalars = json.at("scalars").get<std::vector<int64_t>>();
    layout.guard_bytes = json.at("guard_bytes").get<size_t>();
    layout.held_seed = json.value("held_seed", uint64_t{0});
    for (const auto& slot : json.at("tensors")) {
      TensorSlot parsed{slot.at("parameter").get<size_t>(), slot.at("bytes").get<size_t>(),
                        slot.at("output").get<bool>()};
      if (slot.contains("dtype")) {
        auto dtype = ParseDType(slot.at("dtype").get<std::string>());
        if (!dtype.ok()) return MakeError(ErrorKind::kProtocol, "bad case layout: {}", dtype.error().message);
        parsed.dtype = *dtype;
      }
      if (slot.contains("draw")) {
        const auto& draw = slot.at("draw");
        parsed.draw.scale = draw.at("scale").get<double>();
        parsed.draw.offset = draw.at("offset").get<double>();
        parsed.draw.nonnegative = draw.at("nonnegative").get<bool>();
        parsed.draw.held = draw.value("held", false);
        if (draw.contains("distribution")) {
          auto own = ParseDistribution(draw.at("distribution").get<std::string>());
          if (!own.ok()) return MakeError(ErrorKind::kProtocol, "bad case layout: {}", own.error().message);
          parsed.draw.own = *own;
        }
        if (draw.contains("integers")) {
          const auto bounds = draw.at("integers").get<std::vector<int64_t>>();
          if (bounds.size() != 2 || bounds[1] <= bounds[0] || bounds[1] - bounds[0] > kMaxIntegerSpan) {
            return MakeError(ErrorKind::kProtocol, "bad case layout: integers must be [low, high) holding 1 to 2^24 values");
          }
          parsed.draw.integers = IntegerRange{bounds[0], bounds[1]};
        }
      }
      layout.tensors.push_back(parsed);
    }
  } catch (const nlohmann::json::exception& error) {
    return MakeError(ErrorKind::kProtocol, "bad case layout: {}", error.what());
  }
  if (layout.guard_bytes % kAlignment != 0) {
    return MakeError(ErrorKind::kProtocol, "guard size must be a multiple of {}", kAlignment);
  }
  for (const auto& slot : layout.tensors) {
    // Sizes arrive as JSON numbers: a negative one would wrap to a huge size_t.
    if (slot.bytes > kMaxTensorBytes || slot.bytes % DTypeBytes(slot.dtype) != 0) {
      return MakeError(ErrorKind::kProtocol, "tensor size {} is not a plausible size", slot.bytes);
    }
    if (slot.parameter >= layout.scalars.size()) {
      return MakeError(ErrorKind::kProtocol, "tensor slot names parameter {} of {}", slot.parameter,
                       layout.scalars.size());
    }
  }
  return layout;
}

std::string CaseLayout::Key() const { return ToJson().dump(); }

size_t CaseLayout::SnapshotBytes() const {
  size_t total = 0;
  for (const auto& slot : tensors) total += slot.bytes + 2 * guard_bytes;
  return total;
}

nlohmann::json CaseDraw::ToJson() const {
  return {{"seed", seed}, {"distribution", DistributionName(distribution)}};
}

Result<std::optional<CaseDraw>> CaseDraw::FromRequest(const nlohmann::json& header) {
  const auto found = header.find("draw");
  if (found == header.end()) return std::optional<CaseDraw>();
  if (!found->is_object() || !found->contains("seed") || !(*found)["seed"].is_number_unsigned() ||
      !found->contains("distribution") || !(*found)["distribution"].is_string()) {
    return MakeError(ErrorKind::kProtocol, "malformed draw: {}", found->dump());
  }
  auto distribution = ParseDistribution((*found)["distribution"].get<std::string>());
  if (!distribution.ok()) return distribution.error();
  return std::optional<CaseDraw>(CaseDraw{(*found)["seed"].get<uint64_t>(), *distribution});
}

bool DrawableOnDevice(const CaseLayout& layout) {
  // The host draws integers as floats before storing them: exact only up to 2^24.
  constexpr int64_t kExactInFloat = int64_t{1} << 24;
  for (const auto& slot : layout.tensors) {
    if (slot.output) continue;
    const bool integer_tensor = slot.dtype == DType::kInt32;
    if (integer_tensor != slot.draw.integers.has_value()) return false;
    if (integer_tensor && (std::llabs(slot.draw.integers->low) > kExactInFloat ||
                           std::llabs(slot.draw.integers->high) > kExactInFloat)) {
      return false;
    }
  }
  return true;
}

size_t GuardedArena::RequiredBytes(const CaseLayout& layout) {
  size_t total = 0;
  for (const auto& slot : layout.tensors) total += RoundUp(slot.bytes + 2 * layout.guard_bytes, kAlignment);
  return std::max(total, kAlignment);
}

GuardedArena::GuardedArena(const CaseLayout& layout) : layout_(layout), owns_memory_(true) {
  base_ = static_cast<unsigned char*>(std::aligned_alloc(kAlignment, RequiredBytes(layout_)));
  if (base_ == nullptr) throw std::bad_alloc();
  PlaceTensors();
}

GuardedArena::GuardedArena(const CaseLayout& layout, unsigned char* base)
    : layout_(layout), base_(base) {
  PlaceTensors();
}

void GuardedArena::PlaceTensors() {
  pointers_.assign(layout_.scalars.size(), nullptr);
  for (const auto& slot : layout_.tensors) {
    offsets_.push_back(total_bytes_);
    total_bytes_ += RoundUp(slot.bytes + 2 * layout_.guard_bytes, kAlignment);
  }
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    pointers_[layout_.tensors[i].parameter] = base_ + offsets_[i] + layout_.guard_bytes;
  }
}

GuardedArena::~GuardedArena() {
  if (owns_memory_) std::free(base_);
}

Status GuardedArena::Prepare(std::string_view inputs, uint64_t guard_key) {
  const GuardPattern guards(guard_key);
  size_t consumed = 0;
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const auto& slot = layout_.tensors[i];
    unsigned char* region = base_ + offsets_[i];
    guards.Fill(region, layout_.guard_bytes, i, GuardSide::kBefore);
    guards.Fill(region + layout_.guard_bytes + slot.bytes, layout_.guard_bytes, i, GuardSide::kAfter);
    unsigned char* data = region + layout_.guard_bytes;
    if (slot.output) {
      ParallelChunks(slot.bytes, [data, pattern = DTypePoisonPattern(slot.dtype)](size_t begin, size_t end) {
        FillPattern(data + begin, end - begin, pattern);
      });
    } else {
      if (inputs.size() - consumed < slot.bytes) {
        return MakeError(ErrorKind::kProtocol, "input data shorter than the layout");
      }
      ParallelCopy(data, inputs.data() + consumed, slot.bytes);
      consumed += slot.bytes;
    }
  }
  if (consumed != inputs.size()) return MakeError(ErrorKind::kProtocol, "input data longer than the layout");
  return {};
}

void GuardedArena::PrepareGuards(uint64_t guard_key) {
  const GuardPattern guards(guard_key);
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    unsigned char* region = base_ + offsets_[i];
    guards.Fill(region, layout_.guard_bytes, i, GuardSide::kBefore);
    guards.Fill(region + layout_.guard_bytes + layout_.tensors[i].bytes, layout_.guard_bytes, i, GuardSide::kAfter);
  }
}

std::string GuardedArena::Snapshot() const {
  std::string snapshot;
  SnapshotInto(snapshot);
  return snapshot;
}

void GuardedArena::SnapshotInto(std::string& snapshot, ArenaPart part) const {
  // Resized only when the size changes: a buffer of the same size is overwritten as it is, with
  // no pass that zeroes gigabytes first.
  ResizeFaultedIn(snapshot, layout_.SnapshotBytes());
  const size_t guard = layout_.guard_bytes;
  size_t offset = 0;
  for (size_t i = 0; i < layout_.tensors.size(); ++i) {
    const TensorSlot& slot = layout_.tensors[i];
    const size_t bytes = slot.bytes + 2 * guard;
    if (part == ArenaPart::kAll || slot.output) {
      ParallelCopy(snapshot.data() + offset, base_ + offsets_[i], bytes);
    } else {
      std::memcpy(snapshot.data() + offset, base_ + offsets_[i], guard);
      std::memcpy(snapshot.data() + offset + guard + slot.bytes, base_ + offsets_[i] + guard + slot.bytes, guard);
    }
    offset += bytes;
  }
}

void FillPattern(unsigned char* data, size_t size, uint32_t pattern) {
  const size_t words = size / 4;
  for (size_t i = 0; i < words; ++i) std::memcpy(data + 4 * i, &pattern, 4);
  unsigned char bytes[4];
  std::memcpy(bytes, &pattern, 4);
  for (size_t i = words * 4; i < size; ++i) data[i] = bytes[i % 4];
}

size_t FindPatternBreak(std::string_view data, uint32_t pattern) {
  unsigned char bytes[4];
  std::memcpy(bytes, &pattern, 4);
  for (size_t i = 0; i < data.size(); ++i) {
    if (static_cast<unsigned char>(data[i]) != bytes[i % 4]) return i;
  }
  return std::string_view::npos;
}

}  // namespace ksmith
