#include "kernelbench/shim.h"

#include <fmt/format.h>

#include "kernelbench/scripts.h"

namespace ksmith {
namespace {

// What every shim shares: load the recorded libpython, start the interpreter once per process,
// and call the ksmith_kb package's shim.ksmith_call under the GIL. The CPython API is reached
// through dlsym so that the shim needs neither Python's headers nor a link flag that names a
// Python version.
constexpr const char* kEmbedding = R"cc(
namespace {

using Object = void*;
struct Python {
  int (*IsInitialized)();
  void (*InitializeEx)(int);
  void* (*SaveThread)();
  int (*GILStateEnsure)();
  void (*GILStateRelease)(int);
  Object (*ImportAddModule)(const char*);
  Object (*ModuleGetDict)(Object);
  Object (*RunStringFlags)(const char*, int, Object, Object, void*);
  Object (*ObjectGetAttrString)(Object, const char*);
  Object (*LongFromVoidPtr)(void*);
  Object (*LongFromLongLong)(long long);
  Object (*UnicodeFromString)(const char*);
  const char* (*UnicodeAsUTF8)(Object);
  Object (*TupleNew)(long);
  int (*TupleSetItem)(Object, long, Object);
  Object (*ObjectCallObject)(Object, Object);
  void (*IncRef)(Object);
  void (*DecRef)(Object);
  void (*ErrPrint)();
  void (*ErrClear)();
  Object None;  // Py_None
};

[[noreturn]] void Fail(const char* what, const char* detail) {
  std::fprintf(stderr, "ksmith: error: the %s of task %s failed: %s%s%s\n", kRole, kTaskName, what, detail,
               kCandidate ? ""
                          : "; re-import the problem with `ksmith import kernelbench` on this machine, with a "
                            "python3 that has torch");
  std::abort();
}

template <typename Function>
void Bind(void* library, Function& function, const char* name) {
  function = reinterpret_cast<Function>(::dlsym(library, name));
  if (function == nullptr) Fail("libpython lacks ", name);
}

const Python& Api() {
  static const Python api = [] {
    // RTLD_GLOBAL: torch's extension modules resolve the interpreter's symbols from it.
    void* library = ::dlopen(kLibPython, RTLD_NOW | RTLD_GLOBAL);
    if (library == nullptr) Fail("cannot load ", kLibPython);
    Python bound{};
    Bind(library, bound.IsInitialized, "Py_IsInitialized");
    Bind(library, bound.InitializeEx, "Py_InitializeEx");
    Bind(library, bound.SaveThread, "PyEval_SaveThread");
    Bind(library, bound.GILStateEnsure, "PyGILState_Ensure");
    Bind(library, bound.GILStateRelease, "PyGILState_Release");
    Bind(library, bound.ImportAddModule, "PyImport_AddModule");
    Bind(library, bound.ModuleGetDict, "PyModule_GetDict");
    Bind(library, bound.RunStringFlags, "PyRun_StringFlags");
    Bind(library, bound.ObjectGetAttrString, "PyObject_GetAttrString");
    Bind(library, bound.LongFromVoidPtr, "PyLong_FromVoidPtr");
    Bind(library, bound.LongFromLongLong, "PyLong_FromLongLong");
    Bind(library, bound.UnicodeFromString, "PyUnicode_FromString");
    Bind(library, bound.UnicodeAsUTF8, "PyUnicode_AsUTF8");
    Bind(library, bound.TupleNew, "PyTuple_New");
    Bind(library, bound.TupleSetItem, "PyTuple_SetItem");
    Bind(library, bound.ObjectCallObject, "PyObject_CallObject");
    Bind(library, bound.IncRef, "Py_IncRef");
    Bind(library, bound.DecRef, "Py_DecRef");
    Bind(library, bound.ErrPrint, "PyErr_Print");
    Bind(library, bound.ErrClear, "PyErr_Clear");
    bound.None = ::dlsym(library, "_Py_NoneStruct");
    if (bound.None == nullptr) Fail("libpython lacks ", "_Py_NoneStruct");
    // Several shims may share a process (the evaluator loads one reference per task): a lock on
    // libpython's own file, taken by every shim, lets exactly one of them start the interpreter.
    const int lock = ::open(kLibPython, O_RDONLY | O_CLOEXEC);
    if (lock >= 0) ::flock(lock, LOCK_EX);
    if (!bound.IsInitialized()) {
      ::setenv("PYTHONHOME", kPythonHome, 1);
      ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
      bound.InitializeEx(0);  // 0: leave the process's signal handlers alone
      bound.SaveThread();
    }
    if (lock >= 0) {
      ::flock(lock, LOCK_UN);
      ::close(lock);
    }
    return bound;
  }();
  return api;
}

// The package's module `name` (a new reference), served from kPackageModules by embedded.py,
// which runs once per process in a module of its own. The package is named by its texts' hash, so
// that shims of other ksmith versions in one process each import their own.
Object PackageModule(const Python& api, const char* name) {
  Object loader = api.ImportAddModule(kLoaderModule);
  if (loader == nullptr) return nullptr;
  Object install = api.ObjectGetAttrString(loader, "install");
  if (install == nullptr) {
    api.ErrClear();  // the AttributeError of the first look
    Object globals = api.ModuleGetDict(loader);
    Object result = api.RunStringFlags(kLoader, 257 /* Py_file_input */, globals, globals, nullptr);
    if (result == nullptr) return nullptr;
    api.DecRef(result);
    install = api.ObjectGetAttrString(loader, "install");
    if (install == nullptr) return nullptr;
  }
  constexpr long kCount = sizeof(kPackageModules) / sizeof(kPackageModules[0]);
  Object sources = api.TupleNew(kCount);
  for (long i = 0; i < kCount; ++i) api.TupleSetItem(sources, i, api.UnicodeFromString(kPackageModules[i]));
  Object arguments = api.TupleNew(3);
  api.TupleSetItem(arguments, 0, api.UnicodeFromString(kPackage));
  api.TupleSetItem(arguments, 1, api.UnicodeFromString(name));
  api.TupleSetItem(arguments, 2, sources);
  Object module = api.ObjectCallObject(install, arguments);
  api.DecRef(arguments);
  api.DecRef(install);
  return module;
}

// The spec the runner reads. A candidate's shim is compiled once per task and copied beside each
// candidate's build, whose spec (its source, its extensions) is in a file there: read once, from
// the folder of the file this shim was loaded from.
const char* SpecText() {
  if (!kCandidate) return kSpec;
  static const std::string text = [] {
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&SpecText), &self) == 0 || self.dli_fname == nullptr) {
      Fail("finding its own file ", "(dladdr)");
    }
    // Through a link to it (a profile's replay folder), to the file the shim was placed as.
    char* real = ::realpath(self.dli_fname, nullptr);
    std::string path = real != nullptr ? real : self.dli_fname;
    std::free(real);
    path = path.substr(0, path.rfind('/') + 1) + kCandidateSpecFile;
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) Fail("reading the candidate's spec ", path.c_str());
    std::string contents;
    char buffer[1 << 16];
    for (size_t read; (read = std::fread(buffer, 1, sizeof buffer, file)) > 0;) contents.append(buffer, read);
    std::fclose(file);
    return contents;
  }();
  return text.c_str();
}

Object RunnerCall(const Python& api) {
  Object shim = PackageModule(api, "shim");
  if (shim == nullptr) return nullptr;
  Object call = api.ObjectGetAttrString(shim, "ksmith_call");
  api.DecRef(shim);  // sys.modules keeps it
  return call;
}

// A candidate's runner (candidate.py) raises nothing across the shim: an exception of the
// candidate's comes back as its entry's result, JSON {"at", "message"}, and waits here until the
// worker takes it (ksmith_candidate_raised), the first one only. The trusted roles' entries return
// None; what they raise still aborts (it is ksmith's fault, not a candidate's).
std::string& PendingRaised() {
  static std::string pending;
  return pending;
}

void KeepRaised(const Python& api, Object result) {
  if (!kCandidate || result == api.None) return;
  const char* text = api.UnicodeAsUTF8(result);
  if (text == nullptr) {
    api.ErrClear();
    text = R"({"at": "call", "message": "its call returned something other than ksmith's report"})";
  }
  if (PendingRaised().empty()) PendingRaised() = text;
}

Object Addresses(const Python& api, const void* const* pointers, long count) {
  Object tuple = api.TupleNew(count);
  for (long i = 0; i < count; ++i) api.TupleSetItem(tuple, i, api.LongFromVoidPtr(const_cast<void*>(pointers[i])));
  return tuple;
}

// Where the reference (the oracle, called in the evaluator's own process) runs Python: one thread,
// made on the first call and kept for the process's life, whose Python thread state is never
// deleted. The evaluator calls its reference from short-lived threads (each case is prepared on
// one); a thread state made and deleted for each of those calls was now and then deleted twice
// inside torch's own GIL handling of a tensor's deallocation, and the evaluator crashed (SIGSEGV
// in tstate_delete_common, about 1 eval in 20 beside other evals on a 2-core machine). The timed
// roles, and the GPU reference in its worker, stay on their caller's thread (the worker's one
// thread), so no hand-off is timed.
class PythonThread {
 public:
  static PythonThread& Get() {
    static PythonThread* const thread = new PythonThread();  // never destroyed: it outlives main()
    return *thread;
  }

  void Run(const std::function<void()>& work) {
    const std::lock_guard<std::mutex> one_caller(callers_);
    std::unique_lock<std::mutex> lock(mutex_);
    work_ = &work;
    changed_.notify_all();
    changed_.wait(lock, [this] { return work_ == nullptr; });
  }

 private:
  PythonThread() { std::thread([this] { Loop(); }).detach(); }

  void Loop() {
    // This thread runs the reference in the evaluator's process, which forks workers while other
    // jobs' references run. OpenBLAS's fork handler tears its thread pool down in the forking
    // thread, and a reference inside a threaded dgemm then waits for its helpers for ever (seen
    // with two CPU jobs at once under `ksmith serve`): here, BLAS runs on this thread alone. Loaded
    // now, before torch is, so that torch gets this same library; workers keep their own settings.
    if (void* blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL)) {
      if (auto set = reinterpret_cast<void (*)(int)>(dlsym(blas, "openblas_set_num_threads"))) set(1);
    }
    // Pins this thread's state: every later GILStateRelease leaves the count above zero.
    const Python& api = Api();
    api.GILStateEnsure();
    api.SaveThread();
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return work_ != nullptr; });
      (*work_)();
      work_ = nullptr;
      changed_.notify_all();
    }
  }

  std::mutex callers_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* work_ = nullptr;
};

void CallModelHere(const void* const* inputs, long input_count, void* const* outputs, long output_count,
                   const int64_t* dims, long dim_count, void* stream) {
  const Python& api = Api();
#ifdef _OPENMP
  // torch sets OpenMP's thread count for its own use; the caller's stays as it was.
  const int threads = omp_get_max_threads();
  const int dynamic = omp_get_dynamic();
#endif
  const int state = api.GILStateEnsure();
  static Object call = nullptr;
  if (call == nullptr) call = RunnerCall(api);
  // Made once and kept: decoded inside every timed call, the spec (the problem's source, and in a
  // candidate's shim its source too) cost the candidate's side more than the baseline's.
  static Object strings[3] = {api.UnicodeFromString(kRunnerKey), api.UnicodeFromString(SpecText()),
                              api.UnicodeFromString(kRole)};
  bool ok = call != nullptr && strings[0] != nullptr && strings[1] != nullptr && strings[2] != nullptr;
  if (ok) {
    Object arguments = api.TupleNew(7);
    for (long i = 0; i < 3; ++i) {
      api.IncRef(strings[i]);  // the tuple takes a reference; the static one stays
      api.TupleSetItem(arguments, i, strings[i]);
    }
    api.TupleSetItem(arguments, 3, Addresses(api, inputs, input_count));
    api.TupleSetItem(arguments, 4, Addresses(api, const_cast<const void* const*>(outputs), output_count));
    Object dim_tuple = api.TupleNew(dim_count);
    for (long i = 0; i < dim_count; ++i) api.TupleSetItem(dim_tuple, i, api.LongFromLongLong(dims[i]));
    api.TupleSetItem(arguments, 5, dim_tuple);
    api.TupleSetItem(arguments, 6, api.LongFromVoidPtr(stream));
    Object result = api.ObjectCallObject(call, arguments);
    api.DecRef(arguments);
    ok = result != nullptr;
    if (ok) {
      KeepRaised(api, result);
      api.DecRef(result);
    }
  }
  if (!ok) api.ErrPrint();
  api.GILStateRelease(state);
#ifdef _OPENMP
  omp_set_num_threads(threads);
  omp_set_dynamic(dynamic);
#endif
  if (!ok) Fail("the model raised an exception", " (its traceback is above)");
}

void CallModel(const void* const* inputs, long input_count, void* const* outputs, long output_count,
               const int64_t* dims, long dim_count, void* stream) {
  if (!kOnPythonThread) return CallModelHere(inputs, input_count, outputs, output_count, dims, dim_count, stream);
  PythonThread::Get().Run([&] { CallModelHere(inputs, input_count, outputs, output_count, dims, dim_count, stream); });
}

// The package's `module`.`name`(key, stream) under the GIL, looked up once: the worker calls
// these after every timed call.
void CallByKey(Object& function, const char* module_name, const char* name, void* stream, const char* what) {
  const Python& api = Api();
  const int state = api.GILStateEnsure();
  if (function == nullptr) {
    Object module = PackageModule(api, module_name);
    function = module != nullptr ? api.ObjectGetAttrString(module, name) : nullptr;
    if (module != nullptr) api.DecRef(module);
  }
  bool ok = function != nullptr;
  if (ok) {
    Object arguments = api.TupleNew(2);
    api.TupleSetItem(arguments, 0, api.UnicodeFromString(kRunnerKey));
    api.TupleSetItem(arguments, 1, api.LongFromVoidPtr(stream));
    Object result = api.ObjectCallObject(function, arguments);
    api.DecRef(arguments);
    ok = result != nullptr;
    if (ok) {
      KeepRaised(api, result);
      api.DecRef(result);
    }
  }
  if (!ok) api.ErrPrint();
  api.GILStateRelease(state);
  if (!ok) Fail(what, " (its traceback is above)");
}

// torch imported (shim.py's ksmith_warm), before any call: see kKernelWarmSymbol. Only a head
// start: what fails here is cleared, and the first call meets it again and reports it.
void WarmCall() {
  const Python& api = Api();
  const int state = api.GILStateEnsure();
  Object module = PackageModule(api, "shim");
  Object warm = module != nullptr ? api.ObjectGetAttrString(module, "ksmith_warm") : nullptr;
  if (module != nullptr) api.DecRef(module);
  if (warm != nullptr) {
    Object arguments = api.TupleNew(2);
    api.TupleSetItem(arguments, 0, api.UnicodeFromString(kRunnerKey));
    // A candidate's spec is read at its first call, not here (the worker warms baselines only).
    api.TupleSetItem(arguments, 1, api.UnicodeFromString(kCandidate ? "{}" : kSpec));
    Object result = api.ObjectCallObject(warm, arguments);
    api.DecRef(arguments);
    if (result != nullptr) api.DecRef(result);
    api.DecRef(warm);
  }
  api.ErrClear();
  api.GILStateRelease(state);
}

// The outputs into ksmith's buffers, after the timed call (runner.py's finish()).
void FinishCall(void* stream) {
  static Object finish = nullptr;
  CallByKey(finish, "shim", "ksmith_finish", stream, "copying the outputs failed");
}

}  // namespace
)cc";

// Only a candidate's shim reports what its Python changed of the process (candidate.py's
// ksmith_state_changes, undone already) and what it raised to the worker, which fails the
// candidate for either.
constexpr const char* kStateReport = R"cc(
namespace {

// A candidate's report of the process state its Python changed (candidate.py), as JSON. Its
// function is looked up once, as the other entries are: the sources' tuple that PackageModule
// makes would otherwise be made and freed at every report.
std::string StateChanges() {
  const Python& api = Api();
  const int state = api.GILStateEnsure();
  std::string text = "[]";
  static Object report = nullptr;
  if (report == nullptr) {
    Object module = PackageModule(api, "candidate");
    report = module != nullptr ? api.ObjectGetAttrString(module, "ksmith_state_changes") : nullptr;
    if (module != nullptr) api.DecRef(module);
  }
  if (report != nullptr) {
    Object arguments = api.TupleNew(1);
    api.TupleSetItem(arguments, 0, api.UnicodeFromString(kRunnerKey));
    Object result = api.ObjectCallObject(report, arguments);
    api.DecRef(arguments);
    const char* utf8 = result != nullptr ? api.UnicodeAsUTF8(result) : nullptr;
    if (utf8 != nullptr) text = utf8;
    if (result != nullptr) api.DecRef(result);
  }
  api.ErrClear();
  api.GILStateRelease(state);
  return text;
}

}  // namespace

// The candidate's guard (candidate.py: process state restored, no thread left running), which
// the worker also runs after each of the baseline's timed calls, so that every timed call of
// either side follows the same untimed work.
extern "C" __attribute__((visibility("default"))) void ksmith_restore_state() {
  static Object guard = nullptr;
  CallByKey(guard, "candidate", "ksmith_guard", nullptr, "its process-state guard failed");
}

extern "C" __attribute__((visibility("default"))) const char* ksmith_state_changes() {
  static std::string text;
  text = StateChanges();
  return text.c_str();
}

// What the candidate's Python raised since the worker last looked (KeepRaised), taken: "" if
// nothing. No Python runs here, so the worker may look after every request.
extern "C" __attribute__((visibility("default"))) const char* ksmith_candidate_raised() {
  static std::string taken;
  taken.swap(PendingRaised());
  PendingRaised().clear();
  return taken.c_str();
}
)cc";

std::string RawLiteral(std::string_view text) { return fmt::format("R\"ksmith_text({})ksmith_text\"", text); }

}  // namespace

Result<std::string> RenderShim(const ShimSpec& spec) {
  constexpr std::string_view kQuoteEnd = ")ksmith_text\"";
  const bool candidate = spec.role.ends_with("candidate");
  if (!candidate && spec.spec_json.find(kQuoteEnd) != std::string::npos) {
    return MakeError(ErrorKind::kInvalidArgument, "the problem's text contains ')ksmith_text\"', which the "
                     "generated C++ uses to quote it");
  }
  if (spec.package_modules.empty()) return MakeError(ErrorKind::kInvalidArgument, "a shim embeds modules of ksmith_kb");
  const std::string_view loader = KernelBenchModuleText("embedded");
  // name, text, name, text...: what embedded.py's install() takes.
  std::string modules;
  for (const auto& name : spec.package_modules) {
    const std::string_view text = KernelBenchModuleText(name);
    if (text.empty()) return MakeError(ErrorKind::kInvalidArgument, "ksmith_kb has no module {}", name);
    for (std::string_view quoted : {text, loader}) {
      if (quoted.find(kQuoteEnd) != std::string_view::npos) {
        return MakeError(ErrorKind::kInvalidArgument, "a module of ksmith_kb contains ')ksmith_text\"'");
      }
    }
    modules += fmt::format("    \"{}\", {},\n", name, RawLiteral(text));
  }
  std::string inputs, outputs, dims;
  for (const auto& name : spec.input_names) inputs += (inputs.empty() ? "" : ", ") + name;
  for (const auto& name : spec.output_names) outputs += (outputs.empty() ? "" : ", ") + name;
  for (const auto& name : spec.dim_names) dims += (dims.empty() ? "" : ", ") + name;
  // shim.py reads the role from it.
  const std::string runner_key = spec.task_name + "/" + spec.role;
  return fmt::format(
      "// Generated by ksmith from {source}: the {role} of task {task}.\n"
      "// Trusted code. It embeds CPython ({libpython}) and runs {model} through\n"
      "// the ksmith_kb package's runner.py (below) {how}.\n"
      "#include <dlfcn.h>\n#include <fcntl.h>\n#include <sys/file.h>\n#include <unistd.h>\n\n"
      "#include <condition_variable>\n#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n"
      "#include <functional>\n#include <mutex>\n#include <string>\n#include <thread>\n{includes}\n"
      "namespace {{\n"
      "constexpr const char* kTaskName = \"{task}\";\n"
      "constexpr const char* kRole = \"{role}\";\n"
      "constexpr bool kCandidate = {is_candidate};\n"
      "constexpr bool kOnPythonThread = {on_python_thread};\n"
      "constexpr const char* kRunnerKey = \"{runner_key}\";\n"
      "constexpr const char* kPackage = \"ksmith_kb_{package_hash}\";\n"
      "constexpr const char* kLoaderModule = \"ksmith_kb_{package_hash}_embedded\";\n"
      "constexpr const char* kLibPython = {libpython_literal};\n"
      "constexpr const char* kPythonHome = {home_literal};\n"
      "constexpr const char* kSpec = {spec_literal};\n"
      "constexpr const char* kCandidateSpecFile = \"{spec_file}\";\n"
      "constexpr const char* kLoader = {loader_literal};\n"
      "// The package's modules this role runs: name, text, name, text...\n"
      "constexpr const char* kPackageModules[] = {{\n{modules}}};\n"
      "}}  // namespace\n"
      "{embedding}\n"
      "extern \"C\" void {function}({parameters}) {{\n"
      "  const void* const inputs[] = {{{inputs}}};\n"
      "  void* const outputs[] = {{{outputs}}};\n"
      "  const int64_t dims[] = {{{dims}}};\n"
      "  CallModel(inputs, {input_count}, outputs, {output_count}, dims, {dim_count}, {stream});\n"
      "}}\n"
      "{finish}{state_report}",
      fmt::arg("source", spec.source_file), fmt::arg("role", spec.role), fmt::arg("task", spec.task_name),
      fmt::arg("libpython", spec.libpython), fmt::arg("how", spec.how), fmt::arg("runner_key", runner_key),
      fmt::arg("package_hash", spec.package_hash), fmt::arg("libpython_literal", RawLiteral(spec.libpython)),
      fmt::arg("home_literal", RawLiteral(spec.python_home)), fmt::arg("spec_literal", RawLiteral(candidate ? std::string() : spec.spec_json)),
      fmt::arg("spec_file", kCandidateSpecFile),
      fmt::arg("loader_literal", RawLiteral(loader)), fmt::arg("modules", modules),
      fmt::arg("is_candidate", candidate ? "true" : "false"),
      fmt::arg("on_python_thread", spec.role == "reference" ? "true" : "false"),
      fmt::arg("model", candidate ? "the candidate's ModelNew (untrusted Python)" : "the problem's Model"), fmt::arg("embedding", kEmbedding),
      fmt::arg("function", spec.function), fmt::arg("parameters", spec.parameters), fmt::arg("inputs", inputs),
      fmt::arg("outputs", outputs), fmt::arg("dims", dims.empty() ? "0" : dims),
      fmt::arg("input_count", spec.input_names.size()), fmt::arg("output_count", spec.output_names.size()),
      fmt::arg("dim_count", spec.dim_names.size()),
      fmt::arg("includes", spec.cuda ? "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
                                     : "#ifdef _OPENMP\n#include <omp.h>\n#endif\n"),
      fmt::arg("stream", spec.cuda ? "static_cast<void*>(stream)" : "nullptr"),
      fmt::arg("finish", !spec.role.ends_with("reference")
                             ? "\n// Called by the worker after each timed call: the outputs land in ksmith's buffers\n"
                               "// outside the time measured (kKernelFinishSymbol).\n"
                               "extern \"C\" __attribute__((visibility(\"default\"))) void ksmith_finish(void* stream) {\n"
                               "  FinishCall(stream);\n}\n"
                               "\n// Called by the CUDA worker before its walls go up (kKernelWarmSymbol).\n"
                               "extern \"C\" __attribute__((visibility(\"default\"))) void ksmith_warm() {\n"
                               "  WarmCall();\n}\n"
                             : ""),
      fmt::arg("state_report", candidate ? kStateReport : ""));
}

}  // namespace ksmith
