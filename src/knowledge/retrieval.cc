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

}  // namespace

std::string HardwareWords(const std::string& backend, const nlohmann::json& device_facts) {
  std::string words = backend;
  if (!device_facts.is_object()) return words;
  for (const char* key : {"name", "cpu_model"}) {
    if (const auto found = device_facts.find(key); found != device_facts.end() && found->is_string()) {
      words += " " + found->get<std::string>();
    }
  }
  if (const auto cc = device_facts.find("compute_capability"); cc != device_facts.end()) {
    const std::string text = cc->is_string() ? cc->get<std::string>() : cc->dump();
    const int major = std::atoi(text.c_str());
    const char* family = major == 10 || major == 12 ? "blackwell" : major == 9 ? "hopper" : major == 8 ? "ampere" : "";
    if (*family != '\0') words += std::string(" ") + family + " sm_" + std::to_string(major) + "0";
  }
  return words;
}

bool AppliesTo(const KnowledgeNote& note, const std::string& backend, const std::string& hardware_words) {
  std::istringstream words(note.hardware);
  std::string first;
  if (!(words >> first)) return true;
  std::transform(first.begin(), first.end(), first.begin(), [](unsigned char c) { return std::tolower(c); });
  if (first != backend) return false;
  const std::set<std::string> target = Words(hardware_words);
  bool named = false;
  for (std::string word; words >> word;) {
    named = true;
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    if (target.count(word) > 0) return true;
  }
  return !named;
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
