#include "eval/native_format.h"

#include <filesystem>
#include <utility>

namespace ksmith {
namespace {

// The backend compiles the source as it is.
class NativeBuildJob final : public CandidateBuildJob {
 public:
  explicit NativeBuildJob(BuildRequest request) : request_(std::move(request)) {}

  Result<BuildOutput> Run(const EvalBackend& backend, const Task& view) const override {
    return backend.Build(view, request_);
  }

 private:
  const BuildRequest request_;
};

class Native final : public CandidateFormat {
 public:
  const std::string& name() const override { return name_; }
  const std::string& description() const override { return description_; }
  bool ClaimsPath(std::string_view path) const override {
    (void)path;
    return false;  // the registry's fallback: any path no other format claims
  }
  std::string FileExtension() const override { return {}; }

  std::vector<AuditFinding> AuditSource(const EvalBackend& backend, const std::string& text,
                                        const Task& view) const override {
    return backend.AuditSource(text, view);
  }

  Result<std::shared_ptr<const CandidateBuildJob>> PlanBuild(const CandidateSource& candidate, const Task& view,
                                                             const EvalBackend& backend) const override {
    (void)view;
    const std::string file = std::filesystem::path(candidate.path).filename().string();
    const std::string display = file.empty() ? "candidate" + backend.traits().source_extension : file;
    return std::shared_ptr<const CandidateBuildJob>(
        std::make_shared<NativeBuildJob>(BuildRequest{candidate.text, display, KernelRole::kCandidate, {}}));
  }

  std::string ExpectedDeclaration(const EvalBackend& backend, const Task& view) const override {
    return backend.Declaration(view);
  }
  std::optional<BuildFailureWords> BuildFailure(const std::string& log) const override {
    (void)log;
    return std::nullopt;
  }
  Result<std::vector<AuditFinding>> AuditBinary(const EvalBackend& backend, const BuildOutput& build,
                                                const Task& view) const override {
    return backend.AuditBinary(build, view);
  }

 private:
  const std::string name_ = "native";
  const std::string description_ = "ksmith's function contract";
};

}  // namespace

const CandidateFormat& NativeFormat() {
  static const Native format;
  return format;
}

}  // namespace ksmith
