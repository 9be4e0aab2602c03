// Retrieval from the knowledge base into prompts: the notes that match a task's category and name,
// the target's backend and hardware, and (later in a run) the bottleneck a verdict measured or the
// class of error it reported, as much as fits a token budget.
//
// A note's `hardware` says where it applies: empty for anywhere; else its first word is the backend
// (cpu, cuda) and any further words name hardware ("cuda hopper h100 h200"), one of which the
// target's hardware words must include. A note for another backend or another GPU is never shown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/knowledge_store.h"

namespace ksmith {

struct RetrievalQuery {
  std::string category;      // the task's ("elementwise", "gemm"...)
  std::string task;          // its name: its words count ("add_layernorm": add, layernorm)
  std::string backend;       // "cpu", "cuda"
  std::string hardware;      // words naming the target ("nvidia h200 hopper sm_90"): HardwareWords
  std::string bottleneck;    // "memory", "compute" or "" (a timing's bound_by)
  std::string error_class;   // a failed verdict's status ("compile_error", "wrong_output"...) or ""
  std::vector<std::string> exclude_titles;  // notes already shown
};

/// The words that name a target for note filtering: the backend, the device's name in words and,
/// on CUDA, its architecture family from the compute capability ("hopper" for 9.x).
std::string HardwareWords(const std::string& backend, const nlohmann::json& device_facts);

/// What a harvested note's `hardware` says: the backend and, on CUDA, the GPU's family and
/// architecture ("cuda hopper sm_90"), never words every GPU shares ("nvidia"). `sm_arch` is the
/// build's target ("sm_90a") or empty.
std::string NoteHardware(const std::string& backend, const std::string& sm_arch);
/// The build target's architecture from device facts' compute capability ("9.0" -> "sm_90").
std::string SmArchOf(const nlohmann::json& device_facts);

/// Whether a note's `hardware` allows the target (see above).
bool AppliesTo(const KnowledgeNote& note, const std::string& backend, const std::string& hardware_words);

/// The words searched for: the query's fields, a bottleneck and an error class widened into the
/// words notes about them use.
std::string SearchWords(const RetrievalQuery& query);

/// Notes as a prompt section, best first, each whole, as many as fit `max_tokens` (a note that
/// does not fit is skipped for a shorter one); empty when none fits.
std::string RenderNotes(const std::vector<KnowledgeNote>& notes, const std::string& heading, int64_t max_tokens);

/// What strategies ask for; thread-safe.
class KnowledgeSource {
 public:
  virtual ~KnowledgeSource() = default;
  /// The matching notes rendered under `heading`, within `max_tokens`; empty when none.
  virtual std::string Retrieve(const RetrievalQuery& query, const std::string& heading, int64_t max_tokens) const = 0;
};

/// Retrieval from a KnowledgeStore.
class StoreKnowledgeSource : public KnowledgeSource {
 public:
  explicit StoreKnowledgeSource(const KnowledgeStore& store) : store_(store) {}
  std::string Retrieve(const RetrievalQuery& query, const std::string& heading, int64_t max_tokens) const override;

 private:
  const KnowledgeStore& store_;
};

}  // namespace ksmith
