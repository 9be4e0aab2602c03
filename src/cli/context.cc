#include "cli/context.h"

#include "cli/commands.h"
#include "core/files.h"

namespace ksmith {

Result<CpuContext> LoadCpuContext(bool refresh_machine) {
  auto cache = CacheDirectory();
  if (!cache.ok()) return cache.error();
  auto compiler = CpuCompiler::Create(*cache);
  if (!compiler.ok()) return compiler.error();
  auto machine = LoadMachineFacts(*compiler, *cache, refresh_machine);
  if (!machine.ok()) return machine.error();
  return CpuContext{*cache, std::move(compiler.value()), std::move(machine.value())};
}

}  // namespace ksmith
