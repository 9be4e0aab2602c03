// Measures the sandbox's fixed costs: starting a worker (spawn, walls, loading a kernel) and
// one request round trip on a one-element case. Run: build/ksmith_bench_sandbox [repetitions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/cpu/compiler.h"
#include "backends/cpu/cpu_backend.h"
#include "core/files.h"
#include "eval/cases.h"
#include "sandbox/shared_memory.h"
#include "sandbox/supervisor.h"
#include "task/registry.h"

namespace {

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double MicrosecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ksmith;
  const int repetitions = argc > 1 ? std::atoi(argv[1]) : 20;
  auto task = TaskRegistry(TaskRegistry::DefaultRoot()).Find("vector_add");
  auto cache = CacheDirectory();
  if (!task.ok() || !cache.ok()) return 1;
  auto compiler = CpuCompiler::Create(*cache);
  auto source = ReadFile(std::string(KSMITH_SOURCE_DIR) + "/tests/kernels/honest/vector_add_slow.cpp");
  if (!compiler.ok() || !source.ok()) return 1;
  auto build = compiler->Build(*task, {*source, "vector_add_slow.cpp", KernelRole::kCandidate, {}});
  if (!build.ok() || !build->compiled) return 1;
  ScopedTempDir scratch("bench-sandbox");
  CaseSpec spec{{{"n", 1}}, Distribution::kNormal, 1, "n=1"};
  PreparedCase prepared = PrepareCase(*task, spec, 256);
  Message run;
  run.header = prepared.layout.ToJson();
  run.header["type"] = "run";
  run.header["target"] = "candidate";
  Message announce;
  announce.header = prepared.layout.ToJson();
  announce.header["type"] = "arena";

  for (bool sandbox : {true, false}) {
    std::vector<double> start_us, round_trip_us;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = Clock::now();
      auto worker = WorkerProcess::Start({DefaultCpuWorkerExecutable(), scratch.path(), 1});
      if (!worker.ok()) return 1;
      Message setup;
      setup.header = {{"type", "setup"}, {"candidate", build->shared_object.string()},
                      {"baseline", ""}, {"sandbox", sandbox}, {"scratch", scratch.path().string()},
                      {"readable", {build->shared_object.parent_path().string()}},
                      {"limits", nlohmann::json::object()}};
      auto ready = (*worker)->Request(setup, "ready", std::chrono::seconds(30), "setup");
      if (!ready || ready->type() != "ready") return 1;
      start_us.push_back(MicrosecondsSince(start));
      auto memory = SharedMemory::Create(GuardedArena::RequiredBytes(prepared.layout));
      if (!memory.ok()) return 1;
      GuardedArena arena(prepared.layout, (*memory)->data());
      if (!arena.Prepare(prepared.inputs, 0x5a5a5a5a).ok()) return 1;
      auto shared = (*worker)->Request(announce, "arena_ready", std::chrono::seconds(10), "arena", (*memory)->fd());
      if (!shared || shared->type() != "arena_ready") return 1;
      for (int i = 0; i < 10; ++i) {
        const auto sent = Clock::now();
        auto reply = (*worker)->Request(run, "result", std::chrono::seconds(10), "run");
        if (!reply) return 1;
        round_trip_us.push_back(MicrosecondsSince(sent));
      }
    }
    std::printf("sandbox %-3s  worker start to ready: median %.0f us   one-element round trip: median %.0f us"
                "  (%d starts, %zu round trips)\n",
                sandbox ? "on" : "off", Median(start_us), Median(round_trip_us), repetitions,
                round_trip_us.size());
  }
  return 0;
}
