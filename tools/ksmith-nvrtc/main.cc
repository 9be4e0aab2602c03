// ksmith-nvrtc: compiles one NVRTC-form candidate's device code to a cubin (backends/cuda/nvrtc_form.h).
//
// A process of its own, run by the build like nvcc is: under Landlock and the build's limits,
// so that the candidate's text, which NVRTC reads and follows (#include), reaches only the
// system's and the toolkit's headers, and a compiler that crashes or runs away ends only this.
//
//   ksmith-nvrtc --version
//   ksmith-nvrtc --source FILE --cubin OUT --kernels OUT [--name EXPRESSION]... [--option OPTION]...
//
// Prints NVRTC's log; writes the cubin and, per --name, "EXPRESSION\tMANGLED NAME\n" lines.
// Exit status: 0 compiled, 1 the source did not compile, 2 a usage or file error.
#include <nvrtc.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

int Usage(const std::string& message) {
  std::cerr << "ksmith-nvrtc: error: " << message
            << "\nusage: ksmith-nvrtc --source FILE --cubin OUT --kernels OUT [--name EXPR]... [--option OPT]...\n";
  return 2;
}

bool Check(nvrtcResult result, const char* what) {
  if (result == NVRTC_SUCCESS) return true;
  std::cerr << "ksmith-nvrtc: error: " << what << ": " << nvrtcGetErrorString(result) << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string source_path, cubin_path, kernels_path;
  std::vector<std::string> names, options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--version") {
      int major = 0, minor = 0;
      if (!Check(nvrtcVersion(&major, &minor), "nvrtcVersion")) return 2;
      std::cout << "NVRTC " << major << "." << minor << "\n";
      return 0;
    }
    if (i + 1 >= argc) return Usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--source") source_path = value;
    else if (flag == "--cubin") cubin_path = value;
    else if (flag == "--kernels") kernels_path = value;
    else if (flag == "--name") names.push_back(value);
    else if (flag == "--option") options.push_back(value);
    else return Usage("unknown flag " + flag);
  }
  if (source_path.empty() || cubin_path.empty() || kernels_path.empty()) {
    return Usage("--source, --cubin and --kernels are required");
  }
  std::ifstream in(source_path, std::ios::binary);
  if (!in) return Usage("cannot read " + source_path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();

  nvrtcProgram program = nullptr;
  if (!Check(nvrtcCreateProgram(&program, source.c_str(), source_path.c_str(), 0, nullptr, nullptr),
             "nvrtcCreateProgram")) {
    return 2;
  }
  for (const auto& name : names) {
    if (!Check(nvrtcAddNameExpression(program, name.c_str()), "nvrtcAddNameExpression")) return 2;
  }
  std::vector<const char*> option_pointers;
  for (const auto& option : options) option_pointers.push_back(option.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(program, static_cast<int>(option_pointers.size()), option_pointers.data());
  size_t log_bytes = 0;
  nvrtcGetProgramLogSize(program, &log_bytes);
  std::string log(log_bytes, '\0');
  if (log_bytes > 0) nvrtcGetProgramLog(program, log.data());
  if (!log.empty() && log.back() == '\0') log.pop_back();
  std::cout << log;
  if (!log.empty() && log.back() != '\n') std::cout << "\n";
  if (compiled != NVRTC_SUCCESS) {
    std::cout << "ksmith-nvrtc: " << nvrtcGetErrorString(compiled) << "\n";
    return 1;
  }

  std::string table;
  for (const auto& name : names) {
    const char* mangled = nullptr;
    if (!Check(nvrtcGetLoweredName(program, name.c_str(), &mangled), name.c_str())) return 1;
    table += name + "\t" + mangled + "\n";
  }
  size_t cubin_bytes = 0;
  if (!Check(nvrtcGetCUBINSize(program, &cubin_bytes), "nvrtcGetCUBINSize")) return 2;
  if (cubin_bytes == 0) {
    std::cerr << "ksmith-nvrtc: error: NVRTC gave no cubin: pass a real architecture (-arch=sm_XY)\n";
    return 2;
  }
  std::string cubin(cubin_bytes, '\0');
  if (!Check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN")) return 2;
  nvrtcDestroyProgram(&program);
  std::ofstream cubin_out(cubin_path, std::ios::binary);
  cubin_out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  std::ofstream kernels_out(kernels_path, std::ios::binary);
  kernels_out << table;
  if (!cubin_out.good() || !kernels_out.good()) return Usage("cannot write " + cubin_path + " or " + kernels_path);
  return 0;
}
