#include "knowledge/retrieval.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "agent/conversation.h"

namespace ksmith {
namespace {

constexpr size_t kCandidates = 24;  // notes read from the index before filtering and fitting

std::set<std::string> Words(const std::string& text) {
  std::set<std::string> words;
  std::string word;
  for (unsigned char c : text + " ") {
    if (std::isalnum(c) || c == '_') {
      word += static_cast<char>(std::tolower(c));
    } else if (!word.empty()) {
      words.insert(word);
      word.clear();
    }
  }
  return words;
}

// "hopper sm_90" for "sm_90a"; empty for what is not an sm_ architecture.
std::string ArchWords(const std::string& sm_arch) {
  if (sm_arch.rfind("sm_", 0) != 0) return "";
  const int number = std::atoi(sm_arch.c_str() + 3);
  const int major = number / 10;
  const char* family = major == 10 || major == 12 ? "blackwell" : major == 9 ? "hopper" : major == 8 ? "ampere" : "";
  const std::string arch = "sm_" + std::to_string(number);
  return *family != '\0' ? std::string(family) + " " + arch : arch;
}

}  // namespace

std::string SmArchOf(const nlohmann::json& device_facts) {
  if (!device_facts.is_object()) return "";
  const auto cc = device_facts.find("compute_capability");
  if (cc == device_facts.end()) return "";
  const std::string text = cc->is_string() ? cc->get<std::string>() : cc->dump();
  const size_t dot = text.find('.');
  const int major = std::atoi(text.c_str());
  const int minor = dot == std::string::npos ? 0 : std::atoi(text.c_str() + dot + 1);
  return major > 0 ? "sm_" + std::to_string(major * 10 + minor) : "";
}

std::string NoteHardware(const std::string& backend, const std::string& sm_arch) {
  const std::string arch = ArchWords(sm_arch);  // empty for a target without an sm_ architecture
  return arch.empty() ? backend : backend + " " + arch;
}

std::string HardwareWords(const std::string& backend, const nlohmann::json& device_facts) {
  std::string words = backend;
  if (!device_facts.is_object()) return words;
  for (const char* key : {"name", "cpu_model"}) {
    if (const auto found = device_facts.find(key); found != device_facts.end() && found->is_string()) {
      words += " " + found->get<std::string>();
    }
  }
  if (const std::string arch = ArchWords(SmArchOf(device_facts)); !arch.empty()) words += " " + arch;
  return words;
}

bool AppliesTo(const KnowledgeNote& note, const std::string& backend, const std::string& hardware_words) {
  // Both sides split alike ("Xeon(R)" is the word "xeon"); the note's first word is its backend.
  std::istringstream words(note.hardware);
  std::string first;
  if (!(words >> first)) return true;
  std::transform(first.begin(), first.end(), first.begin(), [](unsigned char c) { return std::tolower(c); });
  if (first != backend) return false;
  std::string rest;
  std::getline(words, rest, '\0');
  const std::set<std::string> named = Words(rest);
  if (named.empty()) return true;
  const std::set<std::string> target = Words(hardware_words);
  return std::any_of(named.begin(), named.end(), [&target](const std::string& word) { return target.count(word) > 0; });
}

std::string SearchWords(const RetrievalQuery& query) {
  std::string words = query.category + " " + query.task + " " + query.backend;
  for (char& c : words) {
    if (c == '_') c = ' ';
  }
  if (query.bottleneck == "memory") words += " memory-bound bandwidth coalescing vectorized loads fusion passes";
  if (query.bottleneck == "compute") words += " compute-bound tiling tensor cores instruction throughput occupancy";
  if (!query.error_class.empty()) {
    words += " " + query.error_class;
    if (query.error_class == "compile_error") words += " compile error";
    if (query.error_class == "wrong_output") words += " correctness wrong output race boundary remainder";
    if (query.error_class == "crash" || query.error_class == "timeout") words += " crash out-of-bounds hang";
  }
  return words;
}

std::string RenderNotes(const std::vector<KnowledgeNote>& notes, const std::string& heading, int64_t max_tokens) {
  std::string text = heading + "\n\n";
  bool any = false;
  for (const auto& note : notes) {
    const std::string section = fmt::format("### {}\n{}\n\n", note.title, note.body);
    if (EstimateTokens(text) + EstimateTokens(section) > max_tokens) continue;
    text += section;
    any = true;
  }
  return any ? std::string(text.substr(0, text.size() - 1)) : "";
}

std::string StoreKnowledgeSource::Retrieve(const RetrievalQuery& query, const std::string& heading,
                                           int64_t max_tokens) const {
  auto found = store_.Search({SearchWords(query), "", kCandidates});
  if (!found.ok()) return "";  // the knowledge base is advice: a run never fails for it
  std::vector<KnowledgeNote> kept;
  for (auto& note : *found) {
    if (!AppliesTo(note, query.backend, query.hardware)) continue;
    if (std::find(query.exclude_titles.begin(), query.exclude_titles.end(), note.title) != query.exclude_titles.end()) {
      continue;
    }
    kept.push_back(std::move(note));
  }
  return RenderNotes(kept, heading, max_tokens);
}

}  // namespace ksmith
