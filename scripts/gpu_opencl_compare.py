"""One line of scripts/gpu_opencl.sh's tune summary: both backends' best kernels at one shape."""
import json
import sys


def point(path):
    try:
        first = json.load(open(path))["points"][0]
        return first.get("status"), first.get("candidate_us"), first.get("baseline_us")
    except (OSError, ValueError, KeyError, IndexError):
        return "unreadable", None, None


task, opencl, cuda = sys.argv[1], point(sys.argv[2]), point(sys.argv[3])
ratio = f"{cuda[1] / opencl[1]:.3f}" if opencl[1] and cuda[1] else "n/a"
print(f"tune {task}: opencl best {opencl[0]} {opencl[1]} us (opencl baseline {opencl[2]} us); "
      f"cuda best {cuda[0]} {cuda[1]} us (cuda baseline {cuda[2]} us); opencl speed / cuda speed {ratio}")
