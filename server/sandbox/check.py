"""`maag sandbox check`: which of the sandbox's mechanisms work on this machine, each tried
for real (a process started in bubblewrap's namespaces, a control group made and removed),
and what a host lacking one must do."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

from maag.server.sandbox import cgroups, seccomp

__all__ = ["Mechanism", "sandbox_check"]


@dataclass(frozen=True, slots=True)
class Mechanism:
    name: str
    active: bool
    detail: str
    required: bool = True

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "active": self.active, "detail": self.detail, "required": self.required}


def _bwrap_works() -> tuple[bool, str]:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap is not installed: apt-get install bubblewrap"
    args = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--die-with-parent",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "true"]
    if os.geteuid() != 0:
        args[1:1] = ["--unshare-user"]
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"bubblewrap could not run: {e}"
    if r.returncode != 0:
        return False, (f"bubblewrap failed ({r.stderr.strip()[:200]}): namespaces are not allowed here; run "
                       "maag in a VM or a privileged container, not an unprivileged Docker container")
    return True, f"{subprocess.run([bwrap, '--version'], capture_output=True, text=True).stdout.strip()}: " \
                 "pid, network, ipc, uts and mount namespaces"


def _filter_works(bwrap_ok: bool) -> tuple[bool, str]:
    """The system call filter built, then loaded by bubblewrap for a process that reads its
    own status (`Seccomp: 2`: a filter is in force)."""
    try:
        fd = seccomp.bpf_fd()
    except seccomp.SeccompUnavailable as e:
        return False, str(e)
    try:
        bwrap = shutil.which("bwrap")
        if not bwrap_ok or bwrap is None:
            return False, "built, but not tried: bubblewrap does not work here"
        args = [bwrap, "--unshare-pid", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink",
                "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                "--proc", "/proc", "--seccomp", str(fd), "cat", "/proc/self/status"]
        if os.geteuid() != 0:
            args[1:1] = ["--unshare-user"]
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=20, pass_fds=[fd])
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, f"bubblewrap could not run with the filter: {e}"
    finally:
        os.close(fd)
    status = dict(line.split(":", 1) for line in r.stdout.splitlines() if ":" in line)
    mode = status.get("Seccomp", "").strip()
    if r.returncode != 0 or mode != "2":
        why = r.stderr.strip()[:200] or f"Seccomp: {mode or '?'}"
        return False, f"bubblewrap did not apply the filter ({why}): the kernel needs CONFIG_SECCOMP_FILTER"
    refused = sum(seccomp.syscall_number(name) is not None for name in seccomp.REFUSED)
    return True, (f"libseccomp's filter through bubblewrap: {refused} system calls refused "
                  "(keyring, ptrace, bpf, perf, mounts, namespaces, modules, clock...), clone with a "
                  "namespace flag refused, clone3 answered ENOSYS")


def sandbox_check() -> list[Mechanism]:
    """Every mechanism, tried."""
    out: list[Mechanism] = []
    ok, detail = _bwrap_works()
    out.append(Mechanism("namespaces (bubblewrap)", ok, detail))
    ok, detail = _filter_works(ok)
    out.append(Mechanism("system call filter (seccomp)", ok, detail))
    root = os.geteuid() == 0
    setpriv = shutil.which("setpriv")
    out.append(Mechanism("an unprivileged uid per bot", root and setpriv is not None,
                         "maag runs as root: each sandbox gets a uid of its own (from "
                         "$MAAG_SANDBOX_UID_BASE, default 61000) through setpriv" if root and setpriv else
                         ("setpriv (util-linux) is missing" if root else
                          "maag is not root: bots keep maag's uid inside a user namespace (process limits "
                          "then count all of that user's processes); run the host as root in a VM for a "
                          "uid per bot"), required=False))
    cg, problems = cgroups.probe()
    if cg is None:
        out.append(Mechanism("cgroups", False, "; ".join(problems) or "no cgroup hierarchy found",
                             required=False))
    else:
        try:
            g = cg.new_group()
            g.remove()
            made = "a group made and removed"
        except OSError as e:
            made = f"a group could not be made: {e}"
        ctl = ", ".join(sorted(cg.controllers))
        out.append(Mechanism(f"cgroups v{cg.version}", "could not" not in made,
                             f"{ctl} under {', '.join(sorted({str(p) for p in cg.parents.values()}))}; {made}"
                             + (f" ({'; '.join(problems)})" if problems else ""), required=False))
    have = set(cg.controllers) if cg else set()
    for name, ctl, fallback in (("memory limit", "memory", "RLIMIT_AS per process"),
                                ("process limit", "pids", "RLIMIT_NPROC per uid"),
                                ("CPU quota", "cpu", "none: a bot may use every core"),
                                ("freezing off turn", "freezer", "SIGSTOP to each process"),
                                ("CPU time per turn", "cpuacct", "summed from /proc")):
        on = ctl in have
        out.append(Mechanism(name, True, f"cgroup {ctl} controller" if on else f"fallback: {fallback}",
                             required=False))
    psi = os.path.exists("/proc/pressure/cpu")
    out.append(Mechanism("overload detection", True, "CPU pressure (PSI) and the referee's lag" if psi else
                         "load average and the referee's lag (no PSI)", required=False))
    return out
