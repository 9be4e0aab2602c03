#include "testing/in_process_backend.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/files.h"
#include "core/hash.h"
#include "tensor/random.h"

namespace ksmith::testing {
namespace {

constexpr const char* kWords[] = {"forbidden", "syntax-error", "imports-fopen", "throw", "crash", "hang", "sub",
                                  "slow-sass", "add"};

// Set once a session has started verifying: a "slow-sass" build's summary waits for it, as
// cuobjdump runs beside verification on the GPU.
std::atomic<bool> g_verifying{false};

// The first word of kWords the text holds; "add" when none.
std::string Behaviour(const std::string& text) {
  for (const char* word : kWords) {
    if (text.find(word) != std::string::npos) return word;
  }
  return "add";
}

const BackendTraits& Traits() {
  static const BackendTraits traits{.name = kInProcessBackend,
                                    .description = "vector_add computed in the test process",
                                    .source_extension = ".txt",
                                    .fence_language = "text",
                                    .compiler_name = "the test compiler"};
  return traits;
}

class InProcessSession : public VerificationSession {
 public:
  InProcessSession(const Task& task, const EvalOptions& options, Verdict& verdict, uint64_t seed)
      : task_(task), options_(options), verdict_(verdict), seed_(seed) {}

  void Run(const std::filesystem::path& candidate, const TrustedBuild&) override {
    g_verifying = true;
    VerdictRecorder recorder(verdict_);
    auto text = ReadFile(candidate);
    StageRecord& stage = recorder.Stage(StageId::kCorrectness);
    if (!text.ok()) {
      recorder.Finish(stage, VerdictStatus::kInfraError, text.error().message);
      return;
    }
    const std::string behaviour = Behaviour(*text);
    if (behaviour == "throw") throw std::runtime_error("the test session threw");
    if (behaviour == "crash") {
      recorder.Finish(stage, VerdictStatus::kRuntimeError, "the kernel crashed (simulated)");
      return;
    }
    if (behaviour == "hang") {
      const auto start = SteadyClock::now();
      while (!options_.Cancelled()) {
        if (SteadyClock::now() - start > options_.call_timeout) {
          recorder.Finish(stage, VerdictStatus::kTimeout, "no answer within the call timeout (simulated)");
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      recorder.Finish(stage, VerdictStatus::kInfraError, "stopped: the evaluation was cancelled");
      return;
    }
    size_t cases = 0;
    for (const auto& shape : task_.eval_shapes) {
      const int64_t n = shape.at("n");
      for (int64_t i = 0; i < n; ++i) {
        const float a = static_cast<float>(UniformOpen01(seed_, 1, static_cast<uint64_t>(i)));
        const float b = static_cast<float>(UniformOpen01(seed_, 2, static_cast<uint64_t>(i)));
        const float c = behaviour == "sub" ? a - b : a + b;
        const double expected = static_cast<double>(a) + static_cast<double>(b);
        if (std::abs(c - expected) > 1e-6 * std::abs(expected) + 1e-7) {
          recorder.Finish(stage, VerdictStatus::kWrongOutput, fmt::format("c[{}] is {} where {} was expected (n = {})",
                                                                          i, c, expected, n));
          return;
        }
      }
      ++cases;
    }
    stage.details.summary = fmt::format("{} cases", cases);
    if (options_.time) recorder.Stage(StageId::kTiming).details.summary = "not timed: the in-process backend has no clock";
    verdict_.status = VerdictStatus::kPassed;
    verdict_.reason = fmt::format("correct on all {} cases", cases);
  }

 private:
  const Task& task_;
  const EvalOptions& options_;
  Verdict& verdict_;
  uint64_t seed_;
};

class InProcessBackend : public EvalBackend {
 public:
  explicit InProcessBackend(std::filesystem::path directory) : directory_(std::move(directory)) {}

  const BackendTraits& traits() const override { return Traits(); }

  Status Supports(const Task& task) const override {
    if (task.signature.function != "vector_add") {
      return MakeError(ErrorKind::kInvalidArgument, "the in-process backend computes only vector_add, not {}", task.name);
    }
    return {};
  }

  std::string Declaration(const Task& task) const override { return task.signature.Declaration(); }

  std::vector<AuditFinding> AuditSource(const std::string& text, const Task&) const override {
    if (Behaviour(text) != "forbidden") return {};
    AuditFinding finding;
    finding.rule = "test";
    finding.message = "the source says 'forbidden'";
    finding.line = 1;
    return {finding};
  }

  Result<BuildOutput> Build(const Task&, const BuildRequest& request) const override {
    BuildOutput output;
    output.command = "in-process";
    if (Behaviour(request.source) == "syntax-error") {
      output.log = request.display_name + ":1: error: syntax error";
      return output;
    }
    output.shared_object = directory_ / (Sha256Hex(request.source) + ".txt");
    output.cache_hit = std::filesystem::exists(output.shared_object);
    if (!output.cache_hit) {
      if (auto written = WriteFileAtomic(output.shared_object, request.source); !written.ok()) return written.error();
    }
    output.compiled = true;
    if (Behaviour(request.source) == "slow-sass") {
      g_verifying = false;
      output.pending_sass = std::async(std::launch::async, [] {
                              SassSummary summary;
                              const auto start = SteadyClock::now();
                              while (!g_verifying && SteadyClock::now() - start < std::chrono::seconds(5)) {
                                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                              }
                              if (!g_verifying) summary.error = "verification never started";
                              summary.kernels.push_back({.name = "read beside verification", .arch = "test"});
                              return summary;
                            }).share();
    }
    return output;
  }

  Result<std::vector<AuditFinding>> AuditBinary(const BuildOutput& build, const Task&) const override {
    auto text = ReadFile(build.shared_object);
    if (!text.ok()) return text.error();
    if (Behaviour(*text) != "imports-fopen") return std::vector<AuditFinding>{};
    AuditFinding finding;
    finding.rule = "test";
    finding.message = "the binary imports fopen";
    return std::vector<AuditFinding>{finding};
  }

  Result<std::pair<BuildRequest, BuildRequest>> TrustedSources(const Task&) const override {
    return std::pair{BuildRequest{"add", "reference.txt", KernelRole::kReference, {}},
                     BuildRequest{"add", "baseline.txt", KernelRole::kBaseline, {}}};
  }

  nlohmann::json Provenance() const override { return {{"compiler", "in-process"}}; }
  nlohmann::json DeviceFacts() const override { return {{"name", "the test process"}}; }

  std::unique_ptr<VerificationSession> OpenSession(const Task& view, const EvalOptions& options, Verdict& verdict,
                                                   uint64_t secret_seed) const override {
    return std::make_unique<InProcessSession>(view, options, verdict, secret_seed);
  }

 private:
  std::filesystem::path directory_;
};

}  // namespace

BackendEntry InProcessBackendEntry() {
  return {Traits(), [](const BackendConfig& config) -> Result<std::unique_ptr<EvalBackend>> {
            std::error_code error;
            std::filesystem::create_directories(config.cache_directory / "inprocess", error);
            if (error) return MakeError(ErrorKind::kIo, "cannot create {}", (config.cache_directory / "inprocess").string());
            return std::unique_ptr<EvalBackend>(std::make_unique<InProcessBackend>(config.cache_directory / "inprocess"));
          }};
}

void RegisterInProcessBackend() {
  static const bool registered = [] {
    (void)BackendRegistry::Global().Register(InProcessBackendEntry());
    return true;
  }();
  (void)registered;
}

}  // namespace ksmith::testing
