#include "store/stored_json.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "eval/verdict.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

// What readers take from a stored verdict without checking each type: the top-level fields of
// docs/verdict.md, and what Verdict::FromJson reads. Empty when it is sound.
std::string VerdictProblem(const nlohmann::json& verdict) {
  using Type = nlohmann::json::value_t;
  const auto status = verdict.find("status");
  if (status == verdict.end() || !status->is_string() || !ParseVerdictStatus(status->get<std::string>()).ok()) {
    return "has no verdict status";
  }
  const std::vector<Type> number = {Type::number_float, Type::number_unsigned, Type::number_integer};
  const std::vector<Type> integer = {Type::number_unsigned, Type::number_integer};
  const std::pair<const char*, std::vector<Type>> fields[] = {
      {"schema_version", integer},
      {"reason", {Type::string}},
      {"task", {Type::string}},
      {"backend", {Type::string}},
      {"candidate", {Type::string}},
      {"total_s", number},
      {"speedup", {Type::number_float, Type::number_unsigned, Type::number_integer, Type::null}},
      {"speedup_ci95", {Type::array}},
      {"stages", {Type::array}},
      {"timing", {Type::object}},
      {"provenance", {Type::object}},
      {"labels", {Type::array}},
      {"repeat_of_candidate", integer},
  };
  for (const auto& [key, types] : fields) {
    const auto found = verdict.find(key);
    if (found == verdict.end()) continue;
    if (std::find(types.begin(), types.end(), found->type()) == types.end()) {
      return fmt::format("has '{}' of type {}", key, found->type_name());
    }
  }
  // The typed reading that resume and feedback rely on, nested fields included: nlohmann's
  // exceptions on a mistyped field become a value here, at the one place stored verdicts enter.
  try {
    if (auto read = Verdict::FromJson(verdict); !read.ok()) return read.error().message;
  } catch (const nlohmann::json::exception& error) {
    return fmt::format("does not read as a verdict ({})", error.what());
  }
  return "";
}

}  // namespace

Error DamagedStoreError(const fs::path& store, std::string_view what, std::string_view problem) {
  return MakeError(ErrorKind::kDamaged,
                   "the run store {} is damaged: {} {}; move the file aside (ksmith starts a new store in its place) "
                   "or pass --db with another file",
                   store.string(), what, problem);
}

// The store wrote these columns itself, as JSON of one type. Text that does not parse (bytes that
// are not UTF-8 included), or parses to another type, is damage: kept as a string, it reached
// readers that threw nlohmann's type_error.306 (or 316 when dumped) as an internal error.
Result<nlohmann::json> ParseStoredJson(const fs::path& store, const std::string& text, std::string_view what,
                                       nlohmann::json::value_t type) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return DamagedStoreError(store, what, "does not parse as JSON");
  if (json.type() != type) {
    return DamagedStoreError(store, what,
                             fmt::format("is JSON of type {}, not {}", json.type_name(), nlohmann::json(type).type_name()));
  }
  return json;
}

Result<nlohmann::json> ParseStoredVerdict(const fs::path& store, const std::string& text, std::string_view what) {
  auto verdict = ParseStoredJson(store, text, what, nlohmann::json::value_t::object);
  if (!verdict.ok()) return verdict.error();
  if (const std::string problem = VerdictProblem(*verdict); !problem.empty()) {
    return DamagedStoreError(store, what, problem);
  }
  return verdict;
}

}  // namespace ksmith
