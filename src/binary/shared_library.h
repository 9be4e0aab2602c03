// A loaded shared object (dlopen), closed on destruction.
#pragma once

#include <vector>
#include <cstdint>

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ksmith {

/// The entry every built kernel exports: parameters in signature order; `pointers[i]` holds the
/// i-th parameter when it is a tensor, `scalars[i]` when it is a dim.
using KernelEntry = void (*)(void* const* pointers, const int64_t* scalars);
inline constexpr const char* kKernelEntrySymbol = "ksmith_entry";
/// Optional in a trusted baseline: called after each of its timed calls, outside the time
/// measured, to put its outputs where ksmith reads them (an imported task's torch eager writes
/// tensors of its own). `stream` is the CUDA stream of the call, null on the CPU. A candidate's
/// is looked up only where ksmith generated the candidate's shim (EvalOptions::candidate_finish).
using KernelFinish = void (*)(void* stream);
inline constexpr const char* kKernelFinishSymbol = "ksmith_finish";
/// Optional in a generated Python shim (a KernelBench baseline's): starts its interpreter and
/// imports torch, launching nothing. The CUDA worker calls it before its walls go up, while the
/// candidate builds, so that the first timed or checked call of either side does not pay it.
using KernelWarm = void (*)();
inline constexpr const char* kKernelWarmSymbol = "ksmith_warm";
/// A generated KernelBench candidate shim's report, valid until the next call: JSON
/// {"changes": [...], "restored": [...], "calls": n, "calls_without_custom_code": k}, the
/// process-wide state its Python changed (each undone after the change; "restored": settings only
/// its own calls read, reported without failing it) and how many of its model's calls ran none of
/// its own compiled code (an extension or a Triton kernel).
using StateChangesReport = const char* (*)();
inline constexpr const char* kStateChangesSymbol = "ksmith_state_changes";
/// The same shim's guard of process state (restore, no thread left running): the worker calls it
/// after the baseline's timed calls too, so that both sides' calls follow the same untimed work.
using StateRestore = void (*)();
inline constexpr const char* kStateRestoreSymbol = "ksmith_restore_state";

/// The same shim's exception report, taken (the next look finds "" until its Python raises again):
/// the candidate's Python raises nothing across the shim, whose calls return with their outputs
/// unwritten. JSON {"at": "build" (importing or constructing ModelNew, binding Model's
/// parameters) or "call", "message": ...}; "" when nothing was raised.
using CandidateRaisedReport = const char* (*)();
inline constexpr const char* kCandidateRaisedSymbol = "ksmith_candidate_raised";

/// What `report` says, as {"at": "build"|"call", "message": ...} for a worker's reply (its key
/// "candidate_raised"); null when nothing was raised. A text that is not of that form (a
/// candidate's Python can reach it) is still an exception of the candidate's, in a call.
nlohmann::json TakeCandidateRaised(CandidateRaisedReport report);

struct CandidateReport {
  std::vector<std::string> changes;   // each as "its Python <change>": these fail the candidate
  std::vector<std::string> restored;  // the same, for changes that are reported only
  int64_t calls = 0;
  int64_t calls_without_custom_code = 0;

  nlohmann::json CustomCodeJson() const;
};

/// What `report` says; what is not of the expected types (a candidate's Python can reach the code
/// that writes it) is left out.
CandidateReport ReadCandidateReport(StateChangesReport report);

class SharedLibrary {
 public:
  /// RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: nothing in it can interpose on symbols of the loading program.
  static Result<std::unique_ptr<SharedLibrary>> Open(const std::filesystem::path& path);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  Result<void*> Symbol(const std::string& name) const;
  Result<KernelEntry> Entry() const;

 private:
  explicit SharedLibrary(void* handle) : handle_(handle) {}
  void* handle_;
};

}  // namespace ksmith
