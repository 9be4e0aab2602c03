// Where candidate formats are found: by name (`optimize --format kernelbench`, a run's stored
// settings) and by a candidate file's path (`ksmith eval k.py`). Each format registers both its
// faces in one entry, a ModelFormat (agent/model_format.h) whose format() is its CandidateFormat
// (eval/candidate_format.h). This folder sits above eval/, agent/ and kernelbench/: the registry
// is the one place that names the concrete formats; adding one is its implementation and one
// line in format_registry.cc. Nothing else compares format names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agent/model_format.h"
#include "core/result.h"
#include "eval/eval_options.h"

namespace ksmith {

/// Not thread-safe while formats are registered; Global() is complete when returned, and read-only.
class FormatRegistry {
 public:
  /// Every format this build has (native, kernelbench).
  static const FormatRegistry& Global();

  /// Adds a format; kInvalidArgument when one of that name is registered already. `format`
  /// outlives the registry.
  Status Register(const ModelFormat& format);
  /// The format called `name`; kInvalidArgument, naming each choice with its description, when unknown.
  Result<const ModelFormat*> Find(std::string_view name) const;
  /// The format a candidate file at `path` is written in: the first that claims it, else the
  /// native format.
  const ModelFormat& ForPath(std::string_view path) const;
  /// Registered names, in registration order.
  std::vector<std::string> Names() const;

 private:
  std::vector<const ModelFormat*> formats_;
};

/// Reads a candidate's file (ReadCandidateSource) and sets its format from its path.
Result<CandidateSource> ReadCandidateFile(const std::string& path);

}  // namespace ksmith
