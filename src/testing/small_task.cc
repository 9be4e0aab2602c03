#include "testing/small_task.h"

#include "core/files.h"
#include "task/task_loader.h"

namespace ksmith::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSmallTask = R"TOML(name = "vector_add"
category = "elementwise"
description = "c = a + b"
signature = "void vector_add(const float* a, const float* b, float* c, int64_t n)"
flops = "n"
bytes = "12*n"
accumulation = "1"
distributions = ["normal", "large"]

[[inputs]]
name = "a"
dtype = "fp32"
shape = ["n"]

[[inputs]]
name = "b"
dtype = "fp32"
shape = ["n"]

[[outputs]]
name = "c"
dtype = "fp32"
shape = ["n"]

[shapes]
dev = [ { n = 8 } ]
eval = [ { n = 1 }, { n = 7 }, { n = 33 }, { n = 1000 } ]
bench = { n = 4096 }

[reference]
source = "reference.cc"
function = "vector_add_reference"

[baseline.cpu]
source = "baseline_cpu.cc"
libraries = ["dnnl"]
description = "oneDNN binary add, as the built-in vector_add task"
)TOML";

}  // namespace

Result<Task> WriteSmallVectorAdd(const fs::path& root) {
  const fs::path builtin = fs::path(KSMITH_SOURCE_DIR) / "tasks" / "elementwise" / "vector_add";
  const fs::path folder = root / "elementwise" / "vector_add";
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return MakeError(ErrorKind::kIo, "cannot create {}: {}", folder.string(), error.message());
  if (auto written = WriteFileAtomic(folder / "task.toml", kSmallTask); !written.ok()) return written.error();
  for (const char* file : {"reference.cc", "baseline_cpu.cc"}) {
    fs::copy_file(builtin / file, folder / file, fs::copy_options::overwrite_existing, error);
    if (error) return MakeError(ErrorKind::kIo, "cannot copy {}: {}", (builtin / file).string(), error.message());
  }
  return LoadTask(folder);
}

}  // namespace ksmith::testing
