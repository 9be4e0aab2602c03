#include "agent/model_format.h"

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
  Result<ExtractedKernel> Extract(std::string_view answer, const Task& task) const override {
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
