// The flags that choose where jobs run, as `ksmith serve` and `ksmith worker` declare them.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ksmith {

struct DeviceFlags {
  std::string backend = "cuda";
  std::vector<std::string> devices;
  int jobs = 0;  // per device; 0: the backend's default
  std::string arch;
};

/// --backend, --devices, --jobs and --arch; `backend_help` says whose backend it is.
void AddDeviceOptions(CLI::App& app, DeviceFlags& flags, const std::string& backend_help);

}  // namespace ksmith
