#include "task/task_loader.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <toml++/toml.h>

#include "core/files.h"

namespace ksmith {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxTaskFileBytes = 1 << 20;
// A cap on a tolerance's absolute allowance (in fp32 eps times max(1, the inputs' RMS)), far below
// what half precision costs (fp16's eps is 2^13 fp32 eps), so that no task can declare its way
// past the relative bounds; the tasks that need one declare 4.
constexpr double kMaxNoise = 64;

class TaskReader {
 public:
  TaskReader(fs::path path, const toml::table& root) : path_(std::move(path)), root_(root) {}

  Result<Task> Read();

 private:
  template <typename... Args>
  Error Fail(const toml::node* where, fmt::format_string<Args...> format, Args&&... args) {
    const auto line = where ? where->source().begin.line : 0;
    const std::string place =
        line > 0 ? fmt::format("{}:{}", path_.string(), line) : path_.string();
    return MakeError(ErrorKind::kParse, "{}: {}", place,
                     fmt::format(format, std::forward<Args>(args)...));
  }

  Result<std::string> RequiredString(const toml::table& table, std::string_view key) {
    const toml::node* node = table.get(key);
    if (node == nullptr) return Fail(&table, "missing required key '{}'", key);
    if (!node->is_string()) return Fail(node, "'{}' must be a string", key);
    return std::string(node->as_string()->get());
  }

  std::string OptionalString(const toml::table& table, std::string_view key,
                             std::string fallback) {
    const toml::node* node = table.get(key);
    return node && node->is_string() ? std::string(node->as_string()->get()) : fallback;
  }

  Result<std::vector<std::string>> StringList(const toml::table& table, std::string_view key,
                                              bool required) {
    std::vector<std::string> values;
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) return Fail(&table, "missing required key '{}'", key);
      return values;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr) return Fail(node, "'{}' must be an array of strings", key);
    for (const auto& item : *array) {
      if (!item.is_string()) return Fail(&item, "'{}' must hold only strings", key);
      values.emplace_back(item.as_string()->get());
    }
    return values;
  }

  Result<std::vector<TensorSpec>> Tensors(std::string_view key);
  Result<InputDraw> Draw(const toml::table& table, bool is_input);
  Result<std::vector<std::string>> IntegerBounds(const toml::table& table, const TensorSpec& tensor, bool is_input);
  Status IntegerRanges(const Task& task);
  Result<DimValues> Shape(const toml::node& node, const Task& task);
  Status Shapes(Task& task);
  Status Derived(Task& task);
  Status Cuda(Task& task);
  Status BindParameters(Task& task);
  Status Expressions(Task& task);
  Status Sources(Task& task);
  Status Seeds(Task& task);
  Status Tolerances(Task& task);

  fs::path path_;
  const toml::table& root_;
};

Result<std::vector<TensorSpec>> TaskReader::Tensors(std::string_view key) {
  std::vector<TensorSpec> tensors;
  const toml::node* node = root_.get(key);
  if (node == nullptr) return Fail(&root_, "missing [[{}]] tables", key);
  const toml::array* array = node->as_array();
  if (array != nullptr && array->empty() && key == "outputs") {
    return Fail(node, "a task needs at least one output");
  }
  if (array == nullptr) return Fail(node, "'{}' must be an array of tables ([[{}]])", key, key);
  for (const auto& item : *array) {
    const toml::table* table = item.as_table();
    if (table == nullptr) return Fail(&item, "each [[{}]] entry must be a table", key);
    TensorSpec tensor;
    auto name = RequiredString(*table, "name");
    if (!name.ok()) return name.error();
    tensor.name = *name;
    auto dtype_name = RequiredString(*table, "dtype");
    if (!dtype_name.ok()) return dtype_name.error();
    auto dtype = ParseDType(*dtype_name);
    if (!dtype.ok()) return Fail(table->get("dtype"), "{}", dtype.error().message);
    tensor.dtype = *dtype;
    auto range = IntegerBounds(*table, tensor, key == "inputs");
    if (!range.ok()) return range.error();
    tensor.integer_range = *range;
    auto shape = StringList(*table, "shape", true);
    if (!shape.ok()) return shape.error();
    tensor.shape = *shape;
    auto draw = Draw(*table, key == "inputs");
    if (!draw.ok()) return draw.error();
    tensor.draw = *draw;
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

// An input's own draw: `distribution`, `scale`, `offset`, `nonnegative`, `held`
// (docs/task_format.md).
Result<InputDraw> TaskReader::Draw(const toml::table& table, bool is_input) {
  InputDraw draw;
  for (const char* key : {"distribution", "scale", "offset", "nonnegative", "held"}) {
    if (!is_input && table.contains(key)) return Fail(table.get(key), "'{}' applies to inputs only", key);
  }
  if (const toml::node* node = table.get("distribution")) {
    const auto* name = node->as_string();
    if (name == nullptr) return Fail(node, "'distribution' must be a string");
    auto own = ParseDistribution(name->get());
    if (!own.ok()) return Fail(node, "{}", own.error().message);
    draw.own = *own;
  }
  for (const auto& [key, field] : {std::pair{"scale", &draw.scale}, {"offset", &draw.offset}}) {
    const toml::node* node = table.get(key);
    if (node == nullptr) continue;
    auto value = node->value<double>();
    if (!value || !std::isfinite(*value)) return Fail(node, "'{}' must be a finite number", key);
    *field = *value;
  }
  if (draw.scale <= 0) return Fail(table.get("scale"), "'scale' must be positive");
  if (const toml::node* node = table.get("nonnegative")) {
    if (!node->is_boolean()) return Fail(node, "'nonnegative' must be true or false");
    draw.nonnegative = node->as_boolean()->get();
  }
  if (const toml::node* node = table.get("held")) {
    if (!node->is_boolean()) return Fail(node, "'held' must be true or false");
    draw.held = node->as_boolean()->get();
  }
  return draw;
}

// `range = [low, high]` of an int32 input: integers or dim expressions, high exclusive.
Result<std::vector<std::string>> TaskReader::IntegerBounds(const toml::table& table, const TensorSpec& tensor,
                                                          bool is_input) {
  const toml::node* node = table.get("range");
  const bool integer_input = is_input && tensor.dtype == DType::kInt32;
  if (node == nullptr) {
    if (!integer_input) return std::vector<std::string>{};
    return Fail(table.get("dtype"),
                "int32 input '{}' needs 'range = [low, high]': the integers it holds, high exclusive "
                "(numbers or dim expressions, e.g. [0, \"num_classes\"])",
                tensor.name);
  }
  if (!integer_input) return Fail(node, "'range' applies to int32 inputs only");
  const toml::array* array = node->as_array();
  if (array == nullptr || array->size() != 2) return Fail(node, "'range' must be [low, high]");
  std::vector<std::string> bounds;
  for (const auto& bound : *array) {
    if (auto number = bound.value<int64_t>(); number && bound.is_integer()) {
      bounds.push_back(std::to_string(*number));
    } else if (const auto* text = bound.as_string()) {
      bounds.push_back(text->get());
    } else {
      return Fail(&bound, "each bound of 'range' must be an integer or a dim expression string");
    }
  }
  for (const char* key : {"distribution", "scale", "offset", "nonnegative"}) {
    if (table.contains(key)) return Fail(table.get(key), "'{}' does not apply to an int32 input (it has a range)", key);
  }
  return bounds;
}

// Every declared shape must give each integer input a usable range.
Status TaskReader::IntegerRanges(const Task& task) {
  std::vector<DimValues> shapes = task.dev_shapes;
  shapes.insert(shapes.end(), task.eval_shapes.begin(), task.eval_shapes.end());
  shapes.push_back(task.bench_shape);
  if (task.cuda) {
    shapes.insert(shapes.end(), task.cuda->eval_shapes.begin(), task.cuda->eval_shapes.end());
    shapes.push_back(task.cuda->bench_shape);
  }
  for (const auto& input : task.inputs) {
    for (const auto& shape : shapes) {
      if (auto draw = task.DrawAt(input, shape); !draw.ok()) return Fail(root_.get("inputs"), "{}", draw.error().message);
    }
  }
  return {};
}

Status TaskReader::BindParameters(Task& task) {
  const toml::node* where = root_.get("signature");
  if (task.outputs.empty()) return Fail(root_.get("outputs"), "a task needs at least one output");
  std::set<std::string> tensor_names;
  for (const auto* tensors : {&task.inputs, &task.outputs}) {
    for (const auto& tensor : *tensors) {
      if (!tensor_names.insert(tensor.name).second) {
        return Fail(where, "two tensors are named '{}'; every input and output needs its own name",
                    tensor.name);
      }
    }
  }
  std::set<std::string> seen_dims;
  for (const auto& parameter : task.signature.parameters) {
    ParameterBinding binding;
    bool found = false;
    for (size_t i = 0; i < task.inputs.size() && !found; ++i) {
      if (task.inputs[i].name != parameter.name) continue;
      const char* type = DTypeCType(task.inputs[i].dtype);
      if (!parameter.is_pointer || !parameter.is_const || parameter.base_type != type) {
        return Fail(where, "input '{}' must be declared 'const {}* {}' (its dtype is {})", parameter.name,
                    type, parameter.name, DTypeName(task.inputs[i].dtype));
      }
      binding = {ParameterRole::kInput, i};
      found = true;
    }
    for (size_t i = 0; i < task.outputs.size() && !found; ++i) {
      if (task.outputs[i].name != parameter.name) continue;
      const char* type = DTypeCType(task.outputs[i].dtype);
      if (!parameter.is_pointer || parameter.is_const || parameter.base_type != type) {
        return Fail(where, "output '{}' must be declared '{}* {}' (its dtype is {})", parameter.name, type,
                    parameter.name, DTypeName(task.outputs[i].dtype));
      }
      binding = {ParameterRole::kOutput, i};
      found = true;
    }
    if (!found) {
      if (parameter.is_pointer || parameter.base_type != "int64_t") {
        return Fail(where, "parameter '{}' is neither a declared input or output nor an int64_t dim",
                    parameter.name);
      }
      binding = {ParameterRole::kDim, task.dims.size()};
      task.dims.push_back(parameter.name);
      seen_dims.insert(parameter.name);
    }
    task.bindings.push_back(binding);
  }
  auto check_tensors = [&](const std::vector<TensorSpec>& tensors) -> Status {
    for (const auto& tensor : tensors) {
      bool in_signature = false;
      for (const auto& parameter : task.signature.parameters) in_signature |= parameter.name == tensor.name;
      if (!in_signature) return Fail(where, "tensor '{}' is not a parameter of the signature", tensor.name);
      for (const auto& dim : tensor.shape) {
        if (!seen_dims.contains(dim)) {
          return Fail(where, "tensor '{}' uses dim '{}', which is not an int64_t parameter",
                      tensor.name, dim);
        }
      }
    }
    return {};
  };
  if (auto status = check_tensors(task.inputs); !status.ok()) return status;
  return check_tensors(task.outputs);
}

Result<DimValues> TaskReader::Shape(const toml::node& node, const Task& task) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return Fail(&node, "a shape must be a table like {{ rows = 4, cols = 8 }}");
  DimValues shape;
  for (const auto& [key, value] : *table) {
    if (std::find(task.dims.begin(), task.dims.end(), key.str()) == task.dims.end()) {
      return Fail(&value, "shape names '{}', which is not a dim of the signature", key.str());
    }
    if (task.IsDerived(key.str())) {
      return Fail(&value, "dim '{}' is derived (see [derived]); give only the free dims", key.str());
    }
    const auto* integer = value.as_integer();
    if (integer == nullptr || integer->get() < 1) {
      return Fail(&value, "dim '{}' must be a positive integer", key.str());
    }
    shape[std::string(key.str())] = integer->get();
  }
  for (const auto& dim : task.dims) {
    if (!shape.contains(dim) && !task.IsDerived(dim)) {
      return Fail(&node, "shape gives no value for dim '{}'", dim);
    }
  }
  auto complete = task.WithDerivedDims(std::move(shape));
  if (!complete.ok()) return Fail(&node, "{}", complete.error().message);
  return complete;
}

// The optional [derived] table: dims computed from the free ones, e.g. oh = "(h - kh) / stride + 1".
Status TaskReader::Derived(Task& task) {
  const toml::node* node = root_.get("derived");
  if (node == nullptr) return {};
  const toml::table* table = node->as_table();
  if (table == nullptr) return Fail(node, "[derived] must be a table of dim = \"expression\"");
  for (const auto& [key, value] : *table) {
    const std::string name(key.str());
    if (std::find(task.dims.begin(), task.dims.end(), name) == task.dims.end()) {
      return Fail(&value, "[derived] names '{}', which is not a dim of the signature", name);
    }
    const auto* text = value.as_string();
    if (text == nullptr) return Fail(&value, "derived dim '{}' must be an expression string", name);
    task.derived_dims.push_back({name, text->get()});
  }
  // Expressions may use free dims only: check with every free dim at 1 and every derived one absent.
  DimValues ones;
  for (const auto& dim : task.dims) {
    if (!task.IsDerived(dim)) ones[dim] = 1;
  }
  for (const auto& derived : task.derived_dims) {
    auto checked = EvaluateExpression(derived.expression, ones);
    if (!checked.ok()) {
      return Fail(table->get(derived.name), "derived dim '{}': {} (only free dims may be used)",
                  derived.name, checked.error().message);
    }
  }
  return {};
}

Status TaskReader::Shapes(Task& task) {
  const toml::table* shapes = root_["shapes"].as_table();
  if (shapes == nullptr) return Fail(&root_, "missing [shapes] table");
  for (const auto& [key, list] : {std::pair{"dev", &task.dev_shapes}, {"eval", &task.eval_shapes}}) {
    const toml::array* array = (*shapes)[key].as_array();
    if (array == nullptr || array->empty()) {
      return Fail(shapes, "[shapes] needs a non-empty '{}' array", key);
    }
    for (const auto& item : *array) {
      auto shape = Shape(item, task);
      if (!shape.ok()) return shape.error();
      list->push_back(std::move(shape.value()));
    }
  }
  const toml::node* bench = shapes->get("bench");
  if (bench == nullptr) return Fail(shapes, "[shapes] needs a 'bench' shape for timing");
  auto shape = Shape(*bench, task);
  if (!shape.ok()) return shape.error();
  task.bench_shape = std::move(shape.value());
  if (const toml::node* random = shapes->get("random")) {
    if (!random->is_boolean()) return Fail(random, "[shapes] random must be true or false");
    task.random_shapes = random->as_boolean()->get();
  }
  return {};
}

// The optional [cuda] table: a GPU reference and shapes sized for a GPU. The CPU [shapes] stay
// what the cpu backend uses; a GPU needs far larger shapes to be filled and timed meaningfully.
Status TaskReader::Cuda(Task& task) {
  const toml::node* node = root_.get("cuda");
  if (node == nullptr) return {};
  const toml::table* table = node->as_table();
  if (table == nullptr) return Fail(node, "[cuda] must be a table");
  CudaTaskSpec cuda;
  auto source = RequiredString(*table, "reference");
  if (!source.ok()) return source.error();
  cuda.reference_source = task.directory / *source;
  if (!fs::exists(cuda.reference_source)) {
    return Fail(table->get("reference"), "cuda reference source {} does not exist",
                cuda.reference_source.string());
  }
  auto function = RequiredString(*table, "reference_function");
  if (!function.ok()) return function.error();
  cuda.reference_function = *function;
  const toml::array* eval = (*table)["eval"].as_array();
  if (eval == nullptr || eval->empty()) return Fail(table, "[cuda] needs a non-empty 'eval' array");
  for (const auto& item : *eval) {
    auto shape = Shape(item, task);
    if (!shape.ok()) return shape.error();
    cuda.eval_shapes.push_back(std::move(shape.value()));
  }
  const toml::node* bench = table->get("bench");
  if (bench == nullptr) return Fail(table, "[cuda] needs a 'bench' shape for timing");
  auto shape = Shape(*bench, task);
  if (!shape.ok()) return shape.error();
  cuda.bench_shape = std::move(shape.value());
  task.cuda = std::move(cuda);
  return {};
}

Status TaskReader::Expressions(Task& task) {
  task.flops_expression = OptionalString(root_, "flops", "");
  const std::string counted = OptionalString(root_, "flops_counted", "minimum");
  if (counted != "minimum" && counted != "reference") {
    return Fail(root_.get("flops_counted"), "'flops_counted' is \"minimum\" (the work every correct kernel must do) or "
                "\"reference\" (counted from the reference's operators: reported, never a limit), not \"{}\"", counted);
  }
  task.flops_are_minimum = counted == "minimum";
  task.bytes_expression = OptionalString(root_, "bytes", "");
  task.accumulation_expression = OptionalString(root_, "accumulation", "1");
  for (const auto& [key, text] : {std::pair{"flops", task.flops_expression},
                                  {"bytes", task.bytes_expression},
                                  {"accumulation", task.accumulation_expression}}) {
    if (text.empty()) return Fail(&root_, "missing required key '{}'", key);
    std::vector<DimValues> shapes = task.eval_shapes;
    if (task.cuda) shapes.insert(shapes.end(), task.cuda->eval_shapes.begin(), task.cuda->eval_shapes.end());
    for (const auto& shape : shapes) {
      auto value = EvaluateExpression(text, shape);
      if (!value.ok()) return Fail(root_.get(key), "'{}': {}", key, value.error().message);
      if (*value < 0) return Fail(root_.get(key), "'{}' is negative at {}", key, task.FormatShape(shape));
    }
  }
  return {};
}

Status TaskReader::Sources(Task& task) {
  const toml::table* reference = root_["reference"].as_table();
  if (reference == nullptr) return Fail(&root_, "missing [reference] table");
  auto source = RequiredString(*reference, "source");
  if (!source.ok()) return source.error();
  task.reference_source = task.directory / *source;
  if (!fs::exists(task.reference_source)) {
    return Fail(reference->get("source"), "reference source {} does not exist",
                task.reference_source.string());
  }
  auto function = RequiredString(*reference, "function");
  if (!function.ok()) return function.error();
  task.reference_function = *function;

  if (const toml::table* baselines = root_["baseline"].as_table()) {
    for (const auto& [backend, node] : *baselines) {
      const toml::table* table = node.as_table();
      if (table == nullptr) return Fail(&node, "[baseline.{}] must be a table", backend.str());
      BaselineSpec baseline;
      auto baseline_source = RequiredString(*table, "source");
      if (!baseline_source.ok()) return baseline_source.error();
      baseline.source = task.directory / *baseline_source;
      if (!fs::exists(baseline.source)) {
        return Fail(table->get("source"), "baseline source {} does not exist",
                    baseline.source.string());
      }
      auto libraries = StringList(*table, "libraries", false);
      if (!libraries.ok()) return libraries.error();
      baseline.libraries = *libraries;
      baseline.description = OptionalString(*table, "description", "");
      auto readable = StringList(*table, "readable", false);
      if (!readable.ok()) return readable.error();
      for (const auto& folder : *readable) {
        if (!fs::path(folder).is_absolute()) {
          return Fail(table->get("readable"), "readable folder '{}' must be an absolute path", folder);
        }
        baseline.readable.emplace_back(folder);
      }
      task.baselines[std::string(backend.str())] = std::move(baseline);
    }
  }
  return Seeds(task);
}

// The optional [seed] table: `backend = "file"`, the kernel whose @tune knobs the tuner searches.
Status TaskReader::Seeds(Task& task) {
  const toml::node* node = root_.get("seed");
  if (node == nullptr) return {};
  const toml::table* seeds = node->as_table();
  if (seeds == nullptr) return Fail(node, "[seed] must be a table like {{ cpu = \"seed_cpu.cc\" }}");
  for (const auto& [backend, file] : *seeds) {
    if (!file.is_string()) return Fail(&file, "[seed] '{}' must be a file name", backend.str());
    const fs::path source = task.directory / file.as_string()->get();
    if (!fs::exists(source)) {
      return Fail(&file, "seed source {} does not exist", source.string());
    }
    task.seeds[std::string(backend.str())] = source;
  }
  return {};
}

Status TaskReader::Tolerances(Task& task) {
  const toml::table* tolerances = root_["tolerance"].as_table();
  if (tolerances == nullptr) return {};
  for (const auto& [dtype_name, node] : *tolerances) {
    auto dtype = ParseDType(dtype_name.str());
    if (!dtype.ok()) return Fail(&node, "{}", dtype.error().message);
    Tolerance tolerance;
    const toml::table* table = node.as_table();
    if (table == nullptr) return Fail(&node, "[tolerance.{}] must be a table", dtype_name.str());
    tolerance.norm = (*table)["norm"].value_or(tolerance.norm);
    tolerance.elem = (*table)["elem"].value_or(tolerance.elem);
    tolerance.noise = (*table)["noise"].value_or(tolerance.noise);
    if (!(tolerance.norm > 0) || !(tolerance.elem > 0)) {
      return Fail(&node, "tolerances must be positive");
    }
    if (!(tolerance.noise >= 0) || tolerance.noise > kMaxNoise) {
      return Fail(&node, "noise must be between 0 and {} (units of fp32 eps times max(1, the inputs' RMS))", kMaxNoise);
    }
    task.tolerances[*dtype] = tolerance;
  }
  return {};
}

Result<Task> TaskReader::Read() {
  Task task;
  task.toml_path = path_;
  task.directory = path_.parent_path();
  for (const auto& [key, field] : {std::pair{"name", &task.name}, {"category", &task.category},
                                   {"description", &task.description}}) {
    auto value = RequiredString(root_, key);
    if (!value.ok()) return value.error();
    *field = *value;
  }
  if (task.name != task.directory.filename().string()) {
    return Fail(root_.get("name"), "name '{}' must equal the folder name '{}'", task.name,
                task.directory.filename().string());
  }
  task.pytorch = OptionalString(root_, "pytorch", "");
  task.level = static_cast<int>(root_["level"].value_or(int64_t{1}));
  auto signature_text = RequiredString(root_, "signature");
  if (!signature_text.ok()) return signature_text.error();
  auto signature = ParseSignature(*signature_text);
  if (!signature.ok()) return Fail(root_.get("signature"), "{}", signature.error().message);
  task.signature = std::move(signature.value());

  auto inputs = Tensors("inputs");
  if (!inputs.ok()) return inputs.error();
  task.inputs = std::move(inputs.value());
  auto outputs = Tensors("outputs");
  if (!outputs.ok()) return outputs.error();
  task.outputs = std::move(outputs.value());
  if (auto status = BindParameters(task); !status.ok()) return status.error();
  if (auto status = Derived(task); !status.ok()) return status.error();
  if (auto status = Shapes(task); !status.ok()) return status.error();
  if (auto status = Cuda(task); !status.ok()) return status.error();
  if (auto status = Expressions(task); !status.ok()) return status.error();
  if (auto status = IntegerRanges(task); !status.ok()) return status.error();

  auto distributions = StringList(root_, "distributions", true);
  if (!distributions.ok()) return distributions.error();
  for (const auto& name : *distributions) {
    auto distribution = ParseDistribution(name);
    if (!distribution.ok()) return Fail(root_.get("distributions"), "{}", distribution.error().message);
    task.distributions.push_back(*distribution);
  }
  if (task.distributions.empty()) return Fail(root_.get("distributions"), "name at least one distribution");
  auto libraries = StringList(root_, "allowed_libraries", false);
  if (!libraries.ok()) return libraries.error();
  task.allowed_libraries = *libraries;
  if (auto status = Sources(task); !status.ok()) return status.error();
  if (auto status = Tolerances(task); !status.ok()) return status.error();
  return task;
}

}  // namespace

Result<Task> LoadTask(const fs::path& directory) {
  const fs::path path = directory / "task.toml";
  auto text = ReadFile(path, kMaxTaskFileBytes);
  if (!text.ok()) return text.error();
  toml::table root;
  try {
    root = toml::parse(*text, path.string());
  } catch (const toml::parse_error& error) {
    return MakeError(ErrorKind::kParse, "{}:{}:{}: {}", path.string(), error.source().begin.line,
                     error.source().begin.column, error.description());
  }
  return TaskReader(path, root).Read();
}

}  // namespace ksmith
