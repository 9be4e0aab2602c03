// Test support: an imported problem's analysis (the task folder's kernelbench.json) as the unit
// tests of the shims and builds read it, without importing anything.
#pragma once

#include <nlohmann/json.hpp>

namespace ksmith::testing {

/// Level 1 problem 19 (ReLU) as ksmith_kb/importer.py analyses it.
inline nlohmann::json ReluAnalysis() {
  return nlohmann::json::parse(R"({
    "name": "kb_l1_019_relu", "file": "/kb/level1/19_ReLU.py",
    "source": "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    "inputs": [{"name": "x", "dtype": "fp32", "shape": ["batch_size", "dim"], "kind": "input", "index": 0}],
    "outputs": [{"name": "y", "dtype": "fp32", "shape": ["batch_size", "dim"]}],
    "dims": ["batch_size", "dim"], "constant_dims": {"batch_size": "batch_size", "dim": "dim"},
    "scalars": [], "reference_dtype": "float64",
    "python": {"sys_path": [], "libpython": "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", "home": "/usr"}
  })");
}

}  // namespace ksmith::testing
