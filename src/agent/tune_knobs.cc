#include "agent/tune_knobs.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>

#include <fmt/format.h>

#include "core/strings.h"

namespace ksmith {
namespace {

constexpr std::string_view kTuneMarker = "@tune";
constexpr std::string_view kHeaderComment = "// ksmith tune:";
constexpr size_t kMaxShuffled = size_t{1} << 22;

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool IsIdentifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front()))) return false;
  return std::all_of(text.begin(), text.end(), IsIdentifierChar);
}

// A value is pasted after `#define NAME`, so it must be one token: a number (64, 0.5f, -1, 1e-3),
// true/false or an identifier. Spaces, parentheses or operators would change what it means.
bool IsValueToken(std::string_view text) {
  if (text.empty()) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return IsIdentifierChar(c) || c == '.' || c == '+' || c == '-';
  });
}

// The identifier at the start of `text` (after blanks); empty when there is none.
std::string_view LeadingIdentifier(std::string_view text) {
  text = Trim(text);
  size_t end = 0;
  while (end < text.size() && IsIdentifierChar(text[end])) ++end;
  return IsIdentifier(text.substr(0, end)) ? text.substr(0, end) : std::string_view();
}

// "#  define X 1" -> directive "define", rest "X 1". Nullopt for a line that is no directive.
struct Directive {
  std::string_view name;
  std::string_view rest;
};
std::optional<Directive> ParseDirective(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with('#')) return std::nullopt;
  line = Trim(line.substr(1));
  size_t end = 0;
  while (end < line.size() && std::isalpha(static_cast<unsigned char>(line[end]))) ++end;
  return Directive{line.substr(0, end), line.substr(end)};
}

// The macro a `#define` line defines, with its value (comments cut off). Function-like macros
// (`#define F(x)`) are not knobs and give nothing.
std::optional<std::pair<std::string, std::string>> DefinedMacro(std::string_view line) {
  const auto directive = ParseDirective(line);
  if (!directive || directive->name != "define") return std::nullopt;
  if (directive->rest.empty() || !std::isblank(static_cast<unsigned char>(directive->rest[0]))) {
    return std::nullopt;
  }
  std::string_view rest = Trim(directive->rest);
  const std::string_view name = LeadingIdentifier(rest);
  if (name.empty()) return std::nullopt;
  rest = rest.substr(name.size());
  if (rest.starts_with('(')) return std::nullopt;
  for (std::string_view comment : {"//", "/*"}) {
    if (const size_t at = rest.find(comment); at != std::string_view::npos) rest = rest.substr(0, at);
  }
  return std::pair{std::string(name), std::string(Trim(rest))};
}

// The macro an `#ifndef NAME` or `#if !defined(NAME)` guard tests; empty otherwise.
std::string GuardedMacro(std::string_view line) {
  const auto directive = ParseDirective(line);
  if (!directive) return {};
  if (directive->name == "ifndef") return std::string(LeadingIdentifier(directive->rest));
  if (directive->name != "if") return {};
  std::string_view rest = Trim(directive->rest);
  if (!rest.starts_with('!')) return {};
  rest = Trim(rest.substr(1));
  if (!rest.starts_with("defined")) return {};
  rest = Trim(rest.substr(7));
  if (rest.starts_with('(')) rest = rest.substr(1);
  return std::string(LeadingIdentifier(rest));
}

// Lines [0, n) that an earlier ApplyKnobs put at the top: its comment and the #defines under it.
size_t TunerHeaderLines(const std::vector<std::string>& lines) {
  if (lines.empty() || !Trim(lines[0]).starts_with(kHeaderComment)) return 0;
  size_t count = 1;
  while (count < lines.size() && DefinedMacro(lines[count])) ++count;
  return count;
}

// The text after "@tune" on a `// @tune ...` line; nullopt for every other line, including words
// that merely start with it (`// @tuner`).
std::optional<std::string_view> TuneDeclaration(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with("//")) return std::nullopt;
  line = Trim(line.substr(2));
  if (!line.starts_with(kTuneMarker)) return std::nullopt;
  line = line.substr(kTuneMarker.size());
  if (!line.empty() && IsIdentifierChar(line.front())) return std::nullopt;
  return Trim(line);
}

Result<TuneKnob> ParseDeclaration(std::string_view text, size_t line) {
  const auto fail = [&](std::string why) {
    return MakeError(ErrorKind::kParse, "line {}: malformed `// @tune NAME: v1, v2` declaration: {}",
                     line, why);
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return fail("no ':' after the knob's name");
  TuneKnob knob;
  knob.line = line;
  knob.name = std::string(Trim(text.substr(0, colon)));
  if (knob.name.empty()) return fail("no knob name before ':'");
  if (!IsIdentifier(knob.name)) return fail(fmt::format("'{}' is not a C identifier", knob.name));
  const std::string_view list = Trim(text.substr(colon + 1));
  if (list.empty()) return fail(fmt::format("{} lists no values", knob.name));
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    const std::string value(Trim(list.substr(start, end - start)));
    if (value.empty()) return fail(fmt::format("{} has an empty value", knob.name));
    if (!IsValueToken(value)) {
      return fail(fmt::format("{}'s value '{}' is not a single token (a number, true/false or "
                              "an identifier)", knob.name, value));
    }
    if (std::find(knob.values.begin(), knob.values.end(), value) != knob.values.end()) {
      return fail(fmt::format("{} lists {} twice", knob.name, value));
    }
    knob.values.push_back(value);
    start = end + 1;
  }
  return knob;
}

// Picks each knob's default from the source's own #define, and refuses a #define the tuner could
// not override: without its guard the source's value would silently win over the setting.
Status ResolveDefaults(const std::vector<std::string>& lines, std::vector<TuneKnob>& knobs) {
  const size_t header = TunerHeaderLines(lines);
  std::map<std::string, std::string> defaults;  // from the tuner's header first, then the guards
  std::set<std::string> guarded;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (const std::string guard = GuardedMacro(lines[i]); !guard.empty()) guarded.insert(guard);
    const auto macro = DefinedMacro(lines[i]);
    if (!macro) continue;
    const auto knob = std::find_if(knobs.begin(), knobs.end(),
                                   [&](const TuneKnob& k) { return k.name == macro->first; });
    if (knob == knobs.end()) continue;
    if (i >= header && !guarded.contains(macro->first)) {
      return MakeError(ErrorKind::kParse,
                       "line {}: knob {} is defined without an `#ifndef {}` guard before it, so "
                       "no setting could override it",
                       i + 1, macro->first, macro->first);
    }
    defaults.emplace(macro->first, macro->second);
  }
  for (auto& knob : knobs) {
    const auto found = defaults.find(knob.name);
    if (found == defaults.end()) continue;
    const auto value = std::find(knob.values.begin(), knob.values.end(), found->second);
    if (value != knob.values.end()) knob.default_index = static_cast<size_t>(value - knob.values.begin());
  }
  return {};
}

using Choice = std::vector<size_t>;  // one index into values per knob

KnobSetting SettingOf(const std::vector<TuneKnob>& knobs, const Choice& choice) {
  KnobSetting setting;
  for (size_t i = 0; i < knobs.size(); ++i) setting.emplace_back(knobs[i].name, knobs[i].values[choice[i]]);
  return setting;
}

// The choice at position `index` of the cartesian product, the last knob varying fastest.
Choice ChoiceAt(const std::vector<TuneKnob>& knobs, uint64_t index) {
  Choice choice(knobs.size());
  for (size_t i = knobs.size(); i-- > 0;) {
    choice[i] = index % knobs[i].values.size();
    index /= knobs[i].values.size();
  }
  return choice;
}

}  // namespace

uint64_t UniformBelow(std::mt19937_64& rng, uint64_t bound) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % bound;
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % bound;
}

Result<std::vector<TuneKnob>> ParseTuneKnobs(std::string_view source) {
  const std::vector<std::string> lines = SplitLines(source);
  std::vector<TuneKnob> knobs;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto declaration = TuneDeclaration(lines[i]);
    if (!declaration) continue;
    auto knob = ParseDeclaration(*declaration, i + 1);
    if (!knob.ok()) return knob.error();
    for (const auto& earlier : knobs) {
      if (earlier.name == knob->name) {
        return MakeError(ErrorKind::kParse, "line {}: knob {} is already declared on line {}", i + 1,
                         knob->name, earlier.line);
      }
    }
    knobs.push_back(std::move(knob.value()));
  }
  if (auto status = ResolveDefaults(lines, knobs); !status.ok()) return status.error();
  return knobs;
}

std::string ApplyKnobs(std::string_view source, const KnobSetting& setting) {
  if (setting.empty()) return std::string(source);
  // A candidate tuned before keeps only its new header: two headers would redefine the knobs.
  const std::vector<std::string> lines = SplitLines(source);
  const size_t header = TunerHeaderLines(lines);
  size_t skip = 0;
  for (size_t i = 0; i < header; ++i) skip += lines[i].size() + 1;
  std::string out = fmt::format("{} {}\n", kHeaderComment, FormatSetting(setting));
  for (const auto& [name, value] : setting) out += fmt::format("#define {} {}\n", name, value);
  out.append(source.substr(std::min(skip, source.size())));
  return out;
}

size_t CountSettings(const std::vector<TuneKnob>& knobs) {
  size_t count = 1;
  for (const auto& knob : knobs) {
    const size_t size = knob.values.size();
    if (size == 0) return 0;
    if (count > std::numeric_limits<size_t>::max() / size) return std::numeric_limits<size_t>::max();
    count *= size;
  }
  return count;
}

std::vector<KnobSetting> EnumerateSettings(const std::vector<TuneKnob>& knobs, size_t limit, uint64_t seed) {
  std::vector<KnobSetting> settings;
  const size_t count = CountSettings(knobs);
  if (limit == 0 || count == 0) return settings;
  if (count <= limit) {
    for (size_t index = 0; index < count; ++index) settings.push_back(SettingOf(knobs, ChoiceAt(knobs, index)));
    return settings;
  }
  Choice defaults;
  for (const auto& knob : knobs) defaults.push_back(std::min(knob.default_index, knob.values.size() - 1));
  std::set<Choice> taken = {defaults};
  settings.push_back(SettingOf(knobs, defaults));
  std::mt19937_64 rng(seed);
  // Fewer than four times the wanted number: shuffle every position, so that the last picks do
  // not spend many draws on already taken ones. Otherwise draw each knob and skip repeats.
  if (count / 4 < limit && count <= kMaxShuffled) {
    std::vector<uint64_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    for (size_t i = 0; i < count && settings.size() < limit; ++i) {
      std::swap(order[i], order[i + UniformBelow(rng, count - i)]);
      Choice choice = ChoiceAt(knobs, order[i]);
      if (taken.insert(choice).second) settings.push_back(SettingOf(knobs, choice));
    }
    return settings;
  }
  while (settings.size() < limit) {
    Choice choice(knobs.size());
    for (size_t i = 0; i < knobs.size(); ++i) choice[i] = UniformBelow(rng, knobs[i].values.size());
    if (taken.insert(choice).second) settings.push_back(SettingOf(knobs, choice));
  }
  return settings;
}

std::string FormatSetting(const KnobSetting& setting) {
  std::string text;
  for (const auto& [name, value] : setting) {
    if (!text.empty()) text += ' ';
    text += fmt::format("{}={}", name, value);
  }
  return text;
}

nlohmann::json KnobsToJson(const KnobSetting& setting) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, value] : setting) json[name] = value;
  return json;
}

}  // namespace ksmith
