#include "cli/device_flags.h"

#include "cli/setting_ranges.h"
#include "eval/backend_registry.h"

namespace ksmith {

void AddDeviceOptions(CLI::App& app, DeviceFlags& flags, const std::string& backend_help) {
  app.add_option("--backend,-b", flags.backend, backend_help)
      ->check(CLI::IsMember(BackendRegistry::Global().Names()))
      ->capture_default_str();
  app.add_option("--devices", flags.devices, "GPUs to evaluate on, each with --jobs workers (e.g. --devices 0,1)")
      ->delimiter(',');
  app.add_option("--jobs,-j", flags.jobs, "Evaluations at once per device (default: 3 on a GPU, 1 on the cpu)")
      ->check(RangeCheck("eval_jobs"));
  app.add_option("--arch", flags.arch, "cuda: GPU architecture to build for (default: the GPU found)");
}

}  // namespace ksmith
