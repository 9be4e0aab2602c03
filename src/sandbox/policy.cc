#include "sandbox/policy.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "core/landlock.h"
#include "core/result.h"
#include "sandbox/call_watch.h"

namespace ksmith {
namespace {

Status ApplyRlimits(const SandboxLimits& limits, bool gpu) {
  const uint64_t address_space = gpu ? RLIM_INFINITY : limits.memory_bytes;
  const std::pair<int, uint64_t> settings[] = {
      {RLIMIT_CPU, limits.cpu_seconds}, {RLIMIT_AS, address_space},
      {RLIMIT_FSIZE, limits.file_bytes}, {RLIMIT_NPROC, limits.processes}, {RLIMIT_CORE, 0}};
  for (const auto& [resource, value] : settings) {
    const rlimit limit{value, value};
    if (::setrlimit(resource, &limit) != 0) {
      return MakeError(ErrorKind::kIo, "setrlimit({}) failed: {}", resource, std::strerror(errno));
    }
  }
  return {};
}

Result<int> ApplyLandlock(const SandboxPolicy& policy) {
  // /dev/urandom gives nothing getrandom(2) does not; torch refuses to start without it (an
  // imported KernelBench task's baseline runs torch in the worker), and reads /proc/cpuinfo to
  // learn the CPU it picks kernels for (what cpuid tells any process).
  std::vector<std::filesystem::path> readable = {"/usr", "/lib", "/lib64", "/etc/ld.so.cache",
                                                 "/sys/devices/system/cpu", "/proc/cpuinfo", "/dev/null",
                                                 "/dev/urandom"};
  readable.insert(readable.end(), policy.readable.begin(), policy.readable.end());
  if (!policy.scratch.empty()) readable.push_back(policy.scratch);
  std::vector<std::filesystem::path> writable;
  if (policy.scratch_writable && !policy.scratch.empty()) writable.push_back(policy.scratch);
  if (policy.gpu) {
    readable.insert(readable.end(), {"/proc", "/sys", "/dev/nvidia-caps", "/etc/nvidia"});
    writable.insert(writable.end(), {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"});
    for (int device = 0; device < 16; ++device) writable.push_back(fmt::format("/dev/nvidia{}", device));
  }
  auto ruleset = LandlockRuleset::Create(readable, {}, writable);
  if (!ruleset.ok()) return ruleset.error();
  if (!LandlockRuleset::RestrictSelf(ruleset->fd())) {
    return MakeError(ErrorKind::kIo, "landlock_restrict_self failed: {}", std::strerror(errno));
  }
  return ruleset->abi();
}

// As root the worker would keep every capability (clock_settime, sethostname, iopl...): drop
// them all, from the bounding set too, so that nothing it execs or becomes can regain them.
Status DropCapabilities() {
  for (int capability = 0; capability <= 63; ++capability) {
    if (::prctl(PR_CAPBSET_READ, capability, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, capability, 0, 0, 0);
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, data) != 0) {
    return MakeError(ErrorKind::kIo, "capset failed: {}", std::strerror(errno));
  }
  return {};
}

// With `notify`, the calls only code that means to leave the walls makes go to the evaluator
// (sandbox/call_watch.h), which answers EPERM: returns the listener. Else -1, all refused quietly.
Result<int> ApplySeccomp(bool allow_write_opens, bool allow_tree_changes, bool allow_truncation, bool notify) {
  scmp_filter_ctx filter = ::seccomp_init(SCMP_ACT_ALLOW);
  if (filter == nullptr) return MakeError(ErrorKind::kIo, "seccomp_init failed");
  const auto deny = SCMP_ACT_ERRNO(EPERM);
  const auto attempt = notify ? SCMP_ACT_NOTIFY : deny;
  int failures = 0;
  auto rule = [&](uint32_t action, int syscall_number, unsigned count = 0,
                  scmp_arg_cmp comparison = {}) {
    const int rc = count == 0 ? ::seccomp_rule_add(filter, action, syscall_number, 0)
                              : ::seccomp_rule_add(filter, action, syscall_number, 1, comparison);
    if (rc != 0) ++failures;
  };
  // No new processes and no other programs: threads (CLONE_THREAD) stay allowed for OpenMP.
  for (int number : {SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat)}) {
    rule(attempt, number);
  }
  rule(attempt, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  // clone3 passes its flags in memory that seccomp cannot read; ENOSYS makes glibc use clone
  // (fork and posix_spawn then reach the rule above; pthread_create, quietly, the allowed one).
  rule(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3));
  // No network, no new kinds of descriptors, no profiling: refused quietly, as libraries probe
  // them and go on without (glibc's user lookups ask nscd over a socket, libffi tries
  // memfd_create for its trampolines), so an honest candidate's call into one may reach them.
  for (int number :
       {SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(perf_event_open), SCMP_SYS(io_uring_setup),
        SCMP_SYS(personality), SCMP_SYS(userfaultfd), SCMP_SYS(memfd_create)}) {
    rule(deny, number);
  }
  // No inspecting or steering other processes, no kernel state changes.
  for (int number :
       {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(mount),
        SCMP_SYS(umount2), SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(chroot),
        SCMP_SYS(pivot_root), SCMP_SYS(bpf), SCMP_SYS(kexec_load),
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(reboot),
        SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(tkill),
        SCMP_SYS(setsid), SCMP_SYS(setpgid), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal),
        SCMP_SYS(pidfd_getfd)}) {
    rule(attempt, number);
  }
  // Signals only to itself.
  const auto self = static_cast<scmp_datum_t>(::getpid());
  rule(attempt, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rule(attempt, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, self));
  rule(attempt, SCMP_SYS(rt_sigqueueinfo), 1, SCMP_A0(SCMP_CMP_NE, self));
  rule(attempt, SCMP_SYS(rt_tgsigqueueinfo), 1, SCMP_A0(SCMP_CMP_NE, self));
  // Files: read-only. Opening for writing or creating, and every call that changes the tree.
  for (scmp_datum_t flag : {scmp_datum_t{O_WRONLY}, scmp_datum_t{O_RDWR}, scmp_datum_t{O_CREAT},
                            scmp_datum_t{O_TRUNC}, scmp_datum_t{O_APPEND}}) {
    if (allow_write_opens && flag != O_CREAT && flag != O_TRUNC && flag != O_APPEND) continue;
    // Truncation is Landlock's to confine only from its ABI 3: below, it stays refused here.
    if (allow_tree_changes && (flag != O_TRUNC || allow_truncation)) continue;
    rule(SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, flag, flag));
    rule(SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  rule(SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat2));
  // Landlock confines these to the scratch where it allows them (SandboxPolicy::scratch_writable).
  if (!allow_tree_changes) {
    for (int number : {SCMP_SYS(creat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
                       SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir)}) {
      rule(SCMP_ACT_ERRNO(EACCES), number);
    }
  }
  for (int number :
       {SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(link),
        SCMP_SYS(linkat), SCMP_SYS(chmod), SCMP_SYS(fchmodat), SCMP_SYS(chown),
        SCMP_SYS(fchownat), SCMP_SYS(lchown), SCMP_SYS(truncate), SCMP_SYS(mknod),
        SCMP_SYS(mknodat), SCMP_SYS(setrlimit), SCMP_SYS(prlimit64), SCMP_SYS(fchmod),
        SCMP_SYS(fchown), SCMP_SYS(utimensat), SCMP_SYS(utimes), SCMP_SYS(utime),
        SCMP_SYS(futimesat), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
        SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
        SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at)}) {
    rule(SCMP_ACT_ERRNO(EACCES), number);
  }
  // Every thread of the process, should one exist already (a CUDA worker's driver threads do):
  // with a listener, this takes Linux 5.7 (TSYNC_ESRCH), which libseccomp uses where it can.
  if (::seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1) != 0) ++failures;
  const int loaded = failures == 0 ? ::seccomp_load(filter) : -1;
  const int listener = loaded == 0 && notify ? ::seccomp_notify_fd(filter) : -1;
  ::seccomp_release(filter);
  if (failures > 0) return MakeError(ErrorKind::kIo, "{} seccomp rules could not be added", failures);
  if (loaded != 0) return MakeError(ErrorKind::kIo, "seccomp_load failed: {}", std::strerror(-loaded));
  if (notify && listener < 0) return MakeError(ErrorKind::kIo, "the seccomp filter gave no listener");
  return listener;
}

}  // namespace

nlohmann::json Protections::ToJson() const {
  return {{"rlimits", rlimits},           {"no_new_privs", no_new_privs},
          {"capabilities_dropped", capabilities_dropped},
          {"seccomp", seccomp},           {"attempts_reported", attempts_reported},
          {"landlock_abi", landlock_abi},
          {"network_namespace", network_namespace}, {"notes", notes}};
}

std::string Protections::Summary() const {
  return fmt::format("seccomp {}, landlock {}, network namespace {}, rlimits {}",
                     seccomp ? (attempts_reported ? "on (attempts reported)" : "on") : "off",
                     landlock_abi > 0 ? "abi " + std::to_string(landlock_abi) : "off",
                     network_namespace ? "on" : "off", rlimits ? "on" : "off");
}

Protections Protections::FromJson(const nlohmann::json& json) {
  Protections protections;
  protections.rlimits = json.value("rlimits", false);
  protections.no_new_privs = json.value("no_new_privs", false);
  protections.capabilities_dropped = json.value("capabilities_dropped", false);
  protections.seccomp = json.value("seccomp", false);
  protections.attempts_reported = json.value("attempts_reported", false);
  protections.landlock_abi = json.value("landlock_abi", 0);
  protections.network_namespace = json.value("network_namespace", false);
  protections.notes = json.value("notes", std::vector<std::string>{});
  return protections;
}

SandboxPolicy PolicyFromSetup(const nlohmann::json& setup, int report_fd) {
  SandboxPolicy policy;
  const nlohmann::json limits = setup.value("limits", nlohmann::json::object());
  policy.limits.cpu_seconds = limits.value("cpu_seconds", policy.limits.cpu_seconds);
  policy.limits.memory_bytes = limits.value("memory_bytes", policy.limits.memory_bytes);
  policy.limits.file_bytes = limits.value("file_bytes", policy.limits.file_bytes);
  for (const auto& path : setup.value("readable", std::vector<std::string>{})) policy.readable.emplace_back(path);
  policy.scratch = setup.value("scratch", std::string());
  policy.report_fd = report_fd;
  return policy;
}

Protections ApplySandbox(const SandboxPolicy& policy) {
  Protections protections;
  // Made first: the filter refuses memfd_create.
  int page_fd = -1;
  if (policy.report_fd >= 0) {
    if (auto created = CreateCodeWindowPage(); created.ok()) {
      page_fd = *created;
    } else {
      protections.notes.push_back("forbidden calls are refused quietly: " + created.error().message);
    }
  }
  if (::unshare(CLONE_NEWNET) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
    protections.network_namespace = true;
  } else {
    protections.notes.push_back(fmt::format("no network namespace: {}", std::strerror(errno)));
  }
  if (auto status = ApplyRlimits(policy.limits, policy.gpu); status.ok()) {
    protections.rlimits = true;
  } else {
    protections.notes.push_back(status.error().message);
  }
  if (auto status = DropCapabilities(); status.ok()) {
    protections.capabilities_dropped = true;
  } else {
    protections.notes.push_back(status.error().message);
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
    protections.no_new_privs = true;
  } else {
    protections.notes.push_back(fmt::format("no_new_privs failed: {}", std::strerror(errno)));
  }
  if (auto abi = ApplyLandlock(policy); abi.ok()) {
    protections.landlock_abi = *abi;
  } else {
    protections.notes.push_back(abi.error().message);
  }
  // Opening files read-write is left to Landlock only where Landlock holds.
  const bool allow_write_opens = (policy.gpu || policy.scratch_writable) && protections.landlock_abi > 0;
  const bool allow_tree_changes = policy.scratch_writable && protections.landlock_abi > 0;
  const bool allow_truncation = allow_tree_changes && protections.landlock_abi >= 3;
  if (policy.gpu && !allow_write_opens) {
    protections.notes.push_back("no Landlock: the GPU driver cannot open its device files read-write");
  }
  if (policy.scratch_writable && !allow_tree_changes) {
    protections.notes.push_back("no Landlock: nothing may be written, the scratch folder included");
  }
  auto listener = ApplySeccomp(allow_write_opens, allow_tree_changes, allow_truncation, page_fd >= 0);
  if (!listener.ok() && page_fd >= 0) {
    // An older kernel (no listener beside TSYNC before 5.7), or a listener already above this
    // process (a container's): the same walls, each call refused quietly.
    protections.notes.push_back("forbidden calls are refused quietly: " + listener.error().message);
    listener = ApplySeccomp(allow_write_opens, allow_tree_changes, allow_truncation, false);
  }
  if (listener.ok()) {
    protections.seccomp = true;
  } else {
    protections.notes.push_back(listener.error().message);
  }
  if (listener.ok() && *listener >= 0) {
    // Once the evaluator holds the listener, nothing of the watch is left here to close or replace.
    if (auto status = HandOverCallWatch(policy.report_fd, *listener, page_fd); status.ok()) {
      protections.attempts_reported = true;
    } else {
      protections.notes.push_back("forbidden calls are refused quietly: " + status.error().message);
    }
  } else {
    if (page_fd >= 0) ::close(page_fd);
    if (policy.report_fd >= 0) ::close(policy.report_fd);  // the evaluator's watch sees the end
  }
  return protections;
}

}  // namespace ksmith
