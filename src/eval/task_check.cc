#include "eval/task_check.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "core/files.h"
#include "eval/case_probe.h"
#include "eval/cases.h"
#include "sandbox/layout.h"
#include "tensor/compare.h"
#include "tensor/dtype.h"
#include "tensor/random.h"

namespace ksmith {
namespace {

constexpr uint64_t kCheckSeed = 0x7a5c'c4ec;  // fixed: a finding can be reproduced
constexpr uint64_t kBaselineSeedSalt = 0xba5e;  // the baseline's cases differ from the reference checks'
constexpr size_t kNoGuard = 0;  // nothing runs in a worker here
constexpr size_t kMaxShapesNamed = 3;  // in one finding; the rest are counted

struct CaseRecord {
  size_t shape = 0;  // index into the checked shapes
  Distribution distribution = Distribution::kNormal;
  std::string label;
  std::vector<OutputProbe> outputs;
  std::vector<InputProbe> inputs;
};

int64_t LargestTensor(const Task& task, const DimValues& shape) {
  int64_t largest = 0;
  for (const auto* tensors : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *tensors) largest = std::max(largest, task.Elements(tensor, shape));
  }
  return largest;
}

std::string DistributionList(const Task& task, const std::vector<const CaseRecord*>& cases) {
  std::string list;
  for (Distribution distribution : task.distributions) {
    const bool seen = std::any_of(cases.begin(), cases.end(),
                                  [&](const CaseRecord* record) { return record->distribution == distribution; });
    if (seen) list += (list.empty() ? "" : ", ") + std::string(DistributionName(distribution));
  }
  return list;
}

// std <= tolerance x rms: "<=" so that an output of exact zeros (std = rms = 0) counts.
bool NearConstant(const OutputProbe& measured) {
  return measured.judged && measured.std <= measured.elem_bound * measured.rms;
}

double RelativeStd(const OutputProbe& measured) { return measured.rms > 0 ? measured.std / measured.rms : 0; }

std::vector<const CaseRecord*> AllOf(const std::vector<CaseRecord>& records) {
  std::vector<const CaseRecord*> all;
  for (const auto& record : records) all.push_back(&record);
  return all;
}

// Within each case, or across cases for an output of one element (a loss): a 1-element output
// is its own mean, so only a value that stays put from case to case lets a constant pass.
void FindNearConstant(const Task& task, const std::vector<CaseRecord>& records, TaskCheckReport& report) {
  for (size_t output = 0; output < task.outputs.size(); ++output) {
    std::vector<const CaseRecord*> multi;
    OutputProbe across;  // the 1-element cases' values, as one output
    double sum = 0, squares = 0;
    std::vector<double> singles;
    for (const auto& record : records) {
      const OutputProbe& measured = record.outputs[output];
      if (!measured.judged) continue;
      if (measured.elements > 1) {
        multi.push_back(&record);
        continue;
      }
      singles.push_back(measured.mean);
      sum += measured.mean;
      squares += measured.mean * measured.mean;
      across.elem_bound = std::max(across.elem_bound, measured.elem_bound);
    }
    const std::string& name = task.outputs[output].name;
    if (multi.empty() && singles.size() >= 2) {
      const double count = static_cast<double>(singles.size());
      across.judged = true;
      across.rms = std::sqrt(squares / count);
      double deviations = 0;
      for (double value : singles) deviations += (value - sum / count) * (value - sum / count);
      across.std = std::sqrt(deviations / count);
      if (!NearConstant(across)) continue;
      report.findings.push_back(
          {kNearConstantOutput, name, "every shape", DistributionList(task, AllOf(records)),
           fmt::format("its single value barely changes across all {} cases (std/rms {:.2g}, tolerance {:.2g}): "
                       "one constant passes them all",
                       singles.size(), RelativeStd(across), across.elem_bound)});
      continue;
    }
    const bool everywhere = !multi.empty() && std::all_of(multi.begin(), multi.end(), [&](const CaseRecord* record) {
      return NearConstant(record->outputs[output]);
    });
    if (!everywhere) continue;
    const CaseRecord* worst = *std::max_element(multi.begin(), multi.end(), [&](const CaseRecord* a, const CaseRecord* b) {
      return RelativeStd(a->outputs[output]) / a->outputs[output].elem_bound <
             RelativeStd(b->outputs[output]) / b->outputs[output].elem_bound;
    });
    const OutputProbe& largest = worst->outputs[output];
    report.findings.push_back(
        {kNearConstantOutput, name, "every shape", DistributionList(task, multi),
         fmt::format("std/rms at most the elementwise tolerance on all {} cases{} (largest: {:.2g} against {:.2g}, "
                     "at {}): a constant output comes within tolerance",
                     multi.size(), multi.size() < records.size() ? " of more than one element" : "",
                     RelativeStd(largest), largest.elem_bound, worst->label)});
  }
}

// A shape-level check: `holds` on every case of some shapes where it `applies` (one finding
// naming them), else on most such cases of the task. `describe` words it from the matching cases.
using CasePredicate = std::function<bool(const OutputProbe&)>;
void FindPerShape(const Task& task, const std::vector<DimValues>& shapes, const std::vector<CaseRecord>& records,
                  const char* check, size_t output, const CasePredicate& applies, const CasePredicate& holds,
                  const std::function<std::string(const std::vector<const OutputProbe*>&)>& describe,
                  TaskCheckReport& report) {
  std::vector<const CaseRecord*> held_anywhere, held_on_shapes;
  std::vector<const OutputProbe*> cases_anywhere, cases_on_shapes;
  std::vector<std::string> shape_names;
  int informative_total = 0, informative_on_shapes = 0;
  for (size_t shape = 0; shape < shapes.size(); ++shape) {
    std::vector<const CaseRecord*> held;
    std::vector<const OutputProbe*> cases;
    int informative = 0;
    for (const auto& record : records) {
      const OutputProbe& measured = record.outputs[output];
      if (record.shape != shape || !measured.judged || !applies(measured)) continue;
      ++informative;
      if (!holds(measured)) continue;
      held.push_back(&record);
      cases.push_back(&measured);
    }
    informative_total += informative;
    held_anywhere.insert(held_anywhere.end(), held.begin(), held.end());
    cases_anywhere.insert(cases_anywhere.end(), cases.begin(), cases.end());
    if (informative == 0 || static_cast<int>(held.size()) < informative) continue;
    shape_names.push_back(task.FormatShape(shapes[shape]));
    informative_on_shapes += informative;
    held_on_shapes.insert(held_on_shapes.end(), held.begin(), held.end());
    cases_on_shapes.insert(cases_on_shapes.end(), cases.begin(), cases.end());
  }
  if (!shape_names.empty()) {
    std::string named;
    for (size_t i = 0; i < shape_names.size() && i < kMaxShapesNamed; ++i) named += (i ? "; " : "") + shape_names[i];
    if (shape_names.size() > kMaxShapesNamed) named += fmt::format("; ... ({} shapes)", shape_names.size());
    report.findings.push_back({check, task.outputs[output].name, named, DistributionList(task, held_on_shapes),
                               fmt::format("on all {} cases of {}: {}", informative_on_shapes,
                                           shape_names.size() == 1 ? "this shape" : "these shapes",
                                           describe(cases_on_shapes))});
  } else if (2 * held_anywhere.size() > static_cast<size_t>(informative_total)) {
    report.findings.push_back(
        {check, task.outputs[output].name, fmt::format("{} of {} cases", held_anywhere.size(), informative_total),
         DistributionList(task, held_anywhere), fmt::format("on most cases of the task: {}", describe(cases_anywhere))});
  }
}

std::string DescribePasses(const std::string& what, const std::vector<const OutputProbe*>& cases,
                           Comparison OutputProbe::*trial) {
  double error = 0, bound = 0;
  for (const OutputProbe* measured : cases) {
    if ((measured->*trial).norm_error >= error) {
      error = (measured->*trial).norm_error;
      bound = (measured->*trial).norm_bound;
    }
  }
  return fmt::format("{} passes the comparison (norm error up to {:.2g}, within its bound {:.2g})", what, error, bound);
}

std::string DescribeTooSmall(const std::vector<const OutputProbe*>& cases) {
  const OutputProbe* largest = *std::max_element(cases.begin(), cases.end(), [](const auto* a, const auto* b) {
    return a->rms * b->floor < b->rms * a->floor;  // rms / floor, without dividing
  });
  return fmt::format("rms at most {:.2g} of the magnitude floor (eps x rms of the inputs; {:.2g} against {:.2g} "
                     "there): the floor sets the comparison's scale, so the tolerance is far looser than intended",
                     largest->rms / largest->floor, largest->rms, largest->floor);
}

void FindInputIgnored(const Task& task, const std::vector<CaseRecord>& records, TaskCheckReport& report) {
  for (size_t input = 0; input < task.inputs.size(); ++input) {
    bool everywhere = !records.empty();
    const InputProbe* largest = nullptr;
    for (const auto& record : records) {
      everywhere = everywhere && record.inputs[input].still_passes;
      if (!largest || record.inputs[input].worst_error > largest->worst_error) largest = &record.inputs[input];
    }
    if (!everywhere) continue;
    report.findings.push_back(
        {kInputIgnored, task.inputs[input].name, "every shape", DistributionList(task, AllOf(records)),
         fmt::format("redrawn alone, it leaves every output within tolerance of the original on all {} cases "
                     "(largest change {:.2g} norm-wise, bound {:.2g})",
                     records.size(), largest->norm_error, largest->norm_bound)});
  }
}

}  // namespace

nlohmann::json TaskFinding::ToJson() const {
  return {{"check", check}, {about_input() ? "input" : "output", tensor}, {"shape", shape},
          {"distribution", distribution}, {"detail", detail}};
}

bool TaskCheckReport::ok() const {
  const bool gpu_fine = gpu_crosscheck == "agreed" || gpu_crosscheck.rfind("skipped", 0) == 0;
  return error.empty() && findings.empty() && gpu_fine;
}

nlohmann::json TaskCheckReport::ToJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& finding : findings) list.push_back(finding.ToJson());
  nlohmann::json json = {{"name", task}, {"ok", ok()}, {"shapes", shapes}, {"cases", cases}, {"findings", list},
                         {"gpu_crosscheck", gpu_crosscheck}};
  if (!error.empty()) json["error"] = error;
  return json;
}

namespace {

Result<LoadedKernel> LoadCpuKernel(const Task& task, const CpuCompiler& compiler, const std::filesystem::path& path,
                                   KernelRole role, const std::vector<std::string>& libraries) {
  auto source = ReadFile(path);
  if (!source.ok()) return source.error();
  auto build = compiler.Build(task, {*source, path.filename().string(), role, libraries});
  if (!build.ok()) return build.error();
  if (!build->compiled) {
    return MakeError(ErrorKind::kInvalidArgument, "{} does not compile:\n{}", path.string(), build->log);
  }
  auto library = SharedLibrary::Open(build->shared_object);
  if (!library.ok()) return library.error();
  auto entry = (*library)->Entry();
  if (!entry.ok()) return entry.error();
  KernelFinish finish = nullptr;
  if (role == KernelRole::kBaseline) {
    if (auto symbol = (*library)->Symbol(kKernelFinishSymbol); symbol.ok()) finish = reinterpret_cast<KernelFinish>(*symbol);
  }
  return LoadedKernel{std::move(library.value()), *entry, finish};
}

}  // namespace

Result<LoadedKernel> LoadCpuReference(const Task& task, const CpuCompiler& compiler) {
  return LoadCpuKernel(task, compiler, task.reference_source, KernelRole::kReference, {});
}

Result<LoadedKernel> LoadCpuBaseline(const Task& task, const CpuCompiler& compiler) {
  const auto baseline = task.baselines.find("cpu");
  if (baseline == task.baselines.end()) {
    return MakeError(ErrorKind::kInvalidArgument, "task '{}' has no [baseline.cpu]", task.name);
  }
  return LoadCpuKernel(task, compiler, baseline->second.source, KernelRole::kBaseline, baseline->second.libraries);
}

std::vector<DimValues> CheckedShapes(const Task& task, const TaskCheckOptions& options) {
  std::vector<DimValues> shapes = task.dev_shapes;
  std::vector<DimValues> eval = task.eval_shapes;
  if (task.cuda) eval.insert(eval.end(), task.cuda->eval_shapes.begin(), task.cuda->eval_shapes.end());
  for (const auto& shape : eval) {
    // A reference's own flop count (an imported model's) bounds no shape: its eval shapes were sized
    // by their tensors, and leaving its largest out would calibrate the tolerance on small ones only.
    const bool too_costly = task.flops_are_minimum && task.Flops(shape) > options.max_flops;
    if (LargestTensor(task, shape) > options.max_tensor_elements || too_costly) continue;
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
  }
  return shapes;
}

TaskCheckReport CheckTaskReference(const Task& task, KernelEntry reference, const TaskCheckOptions& options) {
  TaskCheckReport report;
  report.task = task.name;
  const std::vector<DimValues> shapes = CheckedShapes(task, options);
  report.shapes = static_cast<int>(shapes.size());
  std::vector<CaseRecord> records;
  // An input is flagged only if ignored on every case: once one case shows that it matters, it
  // is not redrawn again (most of the check's cost on a healthy task).
  std::vector<bool> input_matters(task.inputs.size(), false);
  uint64_t ordinal = 0;
  for (size_t shape = 0; shape < shapes.size(); ++shape) {
    for (Distribution distribution : task.distributions) {
      for (int seed = 0; seed < options.seeds; ++seed) {
        const CaseSpec spec{shapes[shape], distribution, DeriveSeed(kCheckSeed, ordinal++),
                            fmt::format("{}, {}, seed #{}", task.FormatShape(shapes[shape]),
                                        DistributionName(distribution), seed + 1)};
        PreparedCase prepared = PrepareCase(task, spec, kNoGuard);
        ComputeExpected(task, reference, prepared);
        const double input_rms = InputRms(prepared);
        CaseRecord& record = records.emplace_back(CaseRecord{shape, distribution, spec.label, {}, {}});
        for (size_t output = 0; output < task.outputs.size(); ++output) {
          record.outputs.push_back(ProbeOutput(task, prepared, output, input_rms));
        }
        for (size_t input = 0; input < task.inputs.size(); ++input) {
          InputProbe probe;
          probe.still_passes = false;
          if (!input_matters[input]) probe = ProbeInput(task, reference, prepared, spec, input, input_rms);
          input_matters[input] = !probe.still_passes;
          record.inputs.push_back(probe);
        }
      }
    }
  }
  report.cases = static_cast<int>(records.size());

  FindNearConstant(task, records, report);
  for (size_t output = 0; output < task.outputs.size(); ++output) {
    // Where the exact answer is all zeros, zeros are right; where it is one value repeated, the
    // mean is: such cases say nothing about the task's other cases.
    const auto not_all_zero = [](const OutputProbe& c) { return !c.all_zero; };
    const auto not_constant = [](const OutputProbe& c) { return !c.exactly_constant; };
    FindPerShape(task, shapes, records, kTrivialOutputPasses, output, not_all_zero,
                 [](const OutputProbe& c) { return c.zeros.passed; },
                 [](const auto& cases) { return DescribePasses("the all-zeros output", cases, &OutputProbe::zeros); },
                 report);
    FindPerShape(task, shapes, records, kTrivialOutputPasses, output, not_constant,
                 [](const OutputProbe& c) { return c.mean_everywhere.passed; },
                 [](const auto& cases) {
                   return DescribePasses("the output's mean in every element", cases, &OutputProbe::mean_everywhere);
                 },
                 report);
    FindPerShape(task, shapes, records, kOutputTooSmall, output, not_all_zero,
                 [](const OutputProbe& c) { return c.rms < c.floor; }, DescribeTooSmall, report);
  }
  FindInputIgnored(task, records, report);
  return report;
}

std::vector<TaskFinding> CheckTaskBaseline(const Task& task, KernelEntry reference, KernelEntry baseline,
                                           const TaskCheckOptions& options, KernelFinish finish) {
  std::vector<TaskFinding> findings;
  std::set<std::string> reported;  // one finding per tensor: the first case that went wrong
  uint64_t ordinal = 0;
  for (const DimValues& shape : CheckedShapes(task, options)) {
    for (Distribution distribution : task.distributions) {
      const CaseSpec spec{shape, distribution, DeriveSeed(kCheckSeed ^ kBaselineSeedSalt, ordinal++),
                          fmt::format("{}, {}", task.FormatShape(shape), DistributionName(distribution))};
      PreparedCase prepared = PrepareCase(task, spec, kNoGuard);
      ComputeExpected(task, reference, prepared);
      GuardedArena arena(prepared.layout);
      const Status ready = arena.Prepare(prepared.inputs, 0);
      if (!ready.ok()) {
        findings.push_back({kBaselineWrong, "", spec.label, DistributionName(distribution), ready.error().message});
        return findings;
      }
      baseline(arena.pointers(), arena.scalars());
      if (finish != nullptr) finish(nullptr);
      const CaseCheck check = CheckSnapshot(task, prepared, arena.Snapshot(), 0);
      if (check.problem == CaseProblem::kNone) continue;
      const std::string tensor = check.output.empty() ? "inputs" : check.output;
      if (!reported.insert(tensor).second) continue;
      findings.push_back({kBaselineWrong, tensor, task.FormatShape(shape), DistributionName(distribution),
                          fmt::format("the baseline ({}) is wrong: {}", task.baselines.at("cpu").source.filename().string(),
                                      check.description)});
    }
  }
  return findings;
}

}  // namespace ksmith
