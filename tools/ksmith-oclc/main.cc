// ksmith-oclc: the OpenCL backend's build helper. ksmith runs it in the build sandbox, where a
// runtime may run its own compiler and linker (PoCL runs ld), so that the worker, walled in,
// only loads the binary.
//   ksmith-oclc devices                   every OpenCL device, as JSON (ksmith doctor, facts)
//   ksmith-oclc build --device D [--identity I] --source S --contract C --out O
// `build` prints {"log": ..., "problem": ...} and exits 0 when built, 1 when the source did not
// build or breaks the contract (problem says how), 2 when OpenCL itself failed.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/opencl/runtime/cl_runtime.h"
#include "core/files.h"

namespace {

using ksmith::ClProgram;

int Print(const nlohmann::json& reply, int code) {
  std::printf("%s\n", reply.dump().c_str());
  return code;
}

std::string KernelArgText(cl_kernel kernel, cl_uint index, cl_kernel_arg_info what) {
  size_t size = 0;
  if (clGetKernelArgInfo(kernel, index, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  clGetKernelArgInfo(kernel, index, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// Whether `kernel`'s arguments are the contract's ("arguments": [{name, type, pointer}]); the
// problem where not. Without argument information (a runtime that keeps none), only the count.
std::string CheckArguments(cl_kernel kernel, const std::string& name, const nlohmann::json& expected) {
  cl_uint count = 0;
  clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(count), &count, nullptr);
  if (count != expected.size()) {
    return "__kernel " + name + " takes " + std::to_string(count) + " arguments; the task's signature has " +
           std::to_string(expected.size());
  }
  for (cl_uint i = 0; i < count; ++i) {
    const auto& want = expected[i];
    const bool pointer = want.at("pointer").get<bool>();
    cl_kernel_arg_address_qualifier address = 0;
    if (clGetKernelArgInfo(kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(address), &address, nullptr) != CL_SUCCESS) {
      continue;
    }
    std::string type = KernelArgText(kernel, i, CL_KERNEL_ARG_TYPE_NAME);
    const std::string wanted_type = want.at("type").get<std::string>() + (pointer ? "*" : "");
    const bool global = address == CL_KERNEL_ARG_ADDRESS_GLOBAL;
    if (pointer != global || (!type.empty() && type != wanted_type)) {
      return "argument " + std::to_string(i) + " of __kernel " + name + " is " + (global ? "__global " : "") + type +
             "; the task's '" + want.at("name").get<std::string>() + "' is " + (pointer ? "__global " : "") + wanted_type;
    }
  }
  return {};
}

int Build(const std::string& device_index, const std::string& identity, const std::string& source_path,
          const std::string& contract_path, const std::string& out_path) {
  auto source = ksmith::ReadFile(source_path);
  auto contract_text = ksmith::ReadFile(contract_path);
  if (!source.ok() || !contract_text.ok()) return Print({{"problem", "cannot read the source or the contract"}}, 2);
  const nlohmann::json contract = nlohmann::json::parse(*contract_text);
  auto device = ksmith::PickDevice(device_index, identity);
  if (!device.ok()) return Print({{"problem", device.error().message}}, 2);
  auto context = ksmith::ClContext::Create(*device);
  if (!context.ok()) return Print({{"problem", context.error().message}}, 2);
  std::string log;
  auto program = ClProgram::FromSource(**context, *source, contract.value("options", std::string()), &log);
  if (!program.ok()) {
    const bool compile_error = program.error().message.find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos ||
                               program.error().message.find("CL_INVALID_BUILD_OPTIONS") != std::string::npos;
    return Print({{"log", log}, {"problem", compile_error ? "the OpenCL C source did not build" : program.error().message}},
                 compile_error ? 1 : 2);
  }
  for (const auto& name : contract.at("kernels")) {
    auto kernel = (*program)->Kernel(name.get<std::string>());
    if (!kernel.ok()) return Print({{"log", log}, {"problem", kernel.error().message}}, 1);
    if (auto problem = CheckArguments(*kernel, name.get<std::string>(), contract.at("arguments")); !problem.empty()) {
      return Print({{"log", log}, {"problem", problem}}, 1);
    }
  }
  auto binary = (*program)->Binary();
  if (!binary.ok()) return Print({{"log", log}, {"problem", binary.error().message}}, 2);
  if (auto written = ksmith::WriteFileAtomic(out_path, *binary); !written.ok()) {
    return Print({{"log", log}, {"problem", written.error().message}}, 2);
  }
  return Print({{"log", log}, {"binary_bytes", binary->size()}}, 0);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string command = argc > 1 ? argv[1] : "";
    if (command == "devices") return Print(ksmith::DevicesJson(), 0);
    if (command == "build") {
      std::string device;
      std::string identity;
      std::string source;
      std::string contract;
      std::string out;
      for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--device") device = argv[i + 1];
        if (flag == "--identity") identity = argv[i + 1];
        if (flag == "--source") source = argv[i + 1];
        if (flag == "--contract") contract = argv[i + 1];
        if (flag == "--out") out = argv[i + 1];
      }
      if (!source.empty() && !contract.empty() && !out.empty()) return Build(device, identity, source, contract, out);
    }
    std::fprintf(stderr,
                 "ksmith-oclc is run by ksmith's OpenCL backend.\n"
                 "usage: ksmith-oclc devices\n"
                 "       ksmith-oclc build [--device N] [--identity PLATFORM/NAME] --source FILE --contract FILE --out FILE\n");
    return 2;
  } catch (const std::exception& error) {
    return Print({{"problem", std::string("internal error: ") + error.what()}}, 2);
  }
}
