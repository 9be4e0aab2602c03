// Where a run of many verdicts ran, for the bench.json it writes (`ksmith bench`, `ksmith
// kernelbench run`): speedups mean little without the machine they were measured on.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "service/eval_service.h"

namespace ksmith {

/// {"cpu", "cores", "memory_bandwidth_gbs", "fp32_gflops"} and the backend's device name under
/// its BackendTraits::device_key ("gpu", "opencl_device"), each when known: the CPU's facts from
/// the cache, or probed (the model and cores only) before any verdict starts, so that the
/// verdicts find them cached instead of measuring them beside each other; the device's name from
/// `service`, which measures its facts once. Nothing here fails the run; what cannot
/// be read is left out.
nlohmann::json DescribeThisMachine(const std::string& backend, EvalService& service);

}  // namespace ksmith
