#include "agent/model_format.h"

#include "eval/backend_registry.h"
#include "eval/native_format.h"

namespace ksmith {
namespace {

class NativeModel final : public ModelFormat {
 public:
  const CandidateFormat& format() const override { return NativeFormat(); }
  std::string SystemPrompt(const PromptContext& context) const override { return BuildNativeSystemPrompt(context); }
  std::string TaskPrompt(const PromptContext& context, std::string_view starting_point) const override {
    return BuildNativeTaskPrompt(context, starting_point);
  }
  // The backend says what a candidate looks like where it is not an extern "C" function (OpenCL).
  Result<ExtractedKernel> Extract(std::string_view answer, const Task& task, const std::string& backend) const override {
    const BackendTraits traits = TraitsOf(backend);
    if (traits.prompt.is_candidate) {
      return ExtractCandidateBlock(answer, traits.prompt.is_candidate, traits.prompt.candidate_description);
    }
    return ExtractKernel(answer, task.signature.function);
  }
  bool UsesTaskSeeds() const override { return true; }
};

}  // namespace

const ModelFormat& NativeModelFormat() {
  static const NativeModel format;
  return format;
}

const ModelFormat& ModelFormatOf(const ModelFormat* format) { return format != nullptr ? *format : NativeModelFormat(); }

}  // namespace ksmith
