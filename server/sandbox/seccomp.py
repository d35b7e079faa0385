"""The sandbox's system call filter (seccomp), built with libseccomp (through pyseccomp) and
handed to bubblewrap (`--seccomp FD`), which loads it right before it runs the bot's command.

Everything is allowed but what a bot has no use for and what reaches the kernel's shared
state: the kernel keyring, tracing other processes, eBPF and perf, namespaces and mounts,
kernel modules, rebooting, the clock, swap, accounting, quotas, file handles, the kernel's
log, io_uring, and a `personality` other than the usual ones. Those fail with EPERM; `clone`
with any CLONE_NEW* flag too; `clone3` fails with ENOSYS (its flags are in memory the filter
cannot read), so that the C library falls back to `clone`, as under Docker's default
profile. The filter is for the machine's own architecture only: a system call of another
ABI (32-bit x86, x32) kills the process (libseccomp's bad-architecture action).

The filter stays in force after bubblewrap's command, which (maag as root) is `setpriv`
dropping to the sandbox's uid: setresuid, setgroups, capset and prctl stay allowed.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["REFUSED", "NAMESPACE_FLAGS", "SeccompUnavailable", "bpf", "bpf_fd", "syscall_number"]

REFUSED: tuple[str, ...] = (
    # the kernel keyring: shared with the host through the session and per-uid keyrings
    "keyctl", "add_key", "request_key",
    # other processes' memory and state
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp",
    "move_pages", "migrate_pages",
    # large kernel attack surface a bot does not need
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "modify_ldt", "uselib", "ustat", "sysfs", "_sysctl", "vm86", "vm86old", "nfsservctl",
    "fanotify_init", "lookup_dcookie",
    # namespaces and mounts (the sandbox's own are made before the filter applies)
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
    # the machine's administration
    "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "syslog",
    # the clock
    "settimeofday", "stime", "clock_settime", "clock_adjtime", "adjtimex",
)
"""Refused with EPERM, whatever their arguments."""

NAMESPACE_FLAGS: dict[str, int] = {
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
"""The flags that make `clone` refused (CLONE_NEWTIME is only taken by clone3 and unshare,
both refused whole: in clone's flags its bit is part of the exit signal's byte)."""

PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""personality() arguments allowed (Docker's list): PER_LINUX, PER_LINUX32, their UNAME26
variants, and the query. ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and the rest are refused."""

IOCTLS_REFUSED = {"TIOCSTI": 0x5412, "TIOCLINUX": 0x541C}
"""Typing into a terminal (the sandbox has none: it runs in a new session, but this is cheap)."""

_U64 = (1 << 64) - 1
_cache: bytes | None = None


class SeccompUnavailable(RuntimeError):
    """libseccomp (or pyseccomp) is missing or refuses the filter: no bot may be started."""


def _lib() -> Any:
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as e:  # pyseccomp raises RuntimeError without libseccomp
        raise SeccompUnavailable(
            f"the sandbox's system call filter cannot be built ({e}): it needs libseccomp "
            "(Debian: apt-get install libseccomp2) and the Python package pyseccomp (pip install "
            "pyseccomp); without the filter maag starts no sandboxed bot") from e
    return pyseccomp


def syscall_number(name: str) -> int | None:
    """The machine's number of system call `name` (libseccomp's table), None where it has none."""
    sc = _lib()
    nr = int(sc.resolve_syscall(sc.Arch.NATIVE, name))
    return nr if nr >= 0 else None


def _blocks(lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Aligned blocks (mask, value) that cover [lo, hi] exactly: `arg & mask == value` for one
    of them is `lo <= arg <= hi` (libseccomp takes one comparison per argument per rule)."""
    while lo <= hi:
        size = lo & -lo if lo else 1 << 64
        while size > hi - lo + 1:
            size >>= 1
        yield _U64 & ~(size - 1), lo
        lo += size


def _build() -> bytes:
    sc = _lib()
    eperm = sc.ERRNO(errno.EPERM)
    try:
        f = sc.SyscallFilter(sc.ALLOW)
        # A thread killed alone would leave the rest of the bot running half-broken: the
        # whole process dies on a system call of another architecture (x32, 32-bit x86).
        f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        # A binary tree of system call numbers, not a list: every allowed call of the bot
        # goes through the filter (libseccomp before 2.5 lacks the attribute: a list then).
        with contextlib.suppress(OSError):
            f.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
        for name in REFUSED:
            nr = int(sc.resolve_syscall(sc.Arch.NATIVE, name))
            if nr >= 0:  # negative: not a system call on this architecture
                f.add_rule(eperm, nr)
        # clone's flags are its first argument, but its second on s390.
        flags_arg = 1 if sc.system_arch() in (sc.Arch.S390, sc.Arch.S390X) else 0
        for bit in NAMESPACE_FLAGS.values():
            f.add_rule(eperm, "clone", sc.Arg(flags_arg, sc.MASKED_EQ, bit, bit))
        f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        allowed = sorted(PERSONALITIES)
        for lo, hi in zip([0, *(a + 1 for a in allowed)], [*(a - 1 for a in allowed), _U64], strict=True):
            for mask, value in _blocks(lo, hi):
                f.add_rule(eperm, "personality", sc.Arg(0, sc.MASKED_EQ, mask, value))
        for request in IOCTLS_REFUSED.values():
            f.add_rule(eperm, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
        with open(os.memfd_create("maag-seccomp-build", os.MFD_CLOEXEC), "w+b") as out:
            f.export_bpf(out)
            out.seek(0)
            return out.read()
    except OSError as e:
        raise SeccompUnavailable(f"libseccomp refused the sandbox's system call filter: {e}") from e


def bpf() -> bytes:
    """The filter as a BPF program (built once per process)."""
    global _cache
    if _cache is None:
        _cache = _build()
    return _cache


def bpf_fd() -> int:
    """A fresh descriptor (close-on-exec: pass it with pass_fds) of an in-memory file holding
    the filter, read from its start: bubblewrap's `--seccomp FD` reads it to its end."""
    program = bpf()
    fd = os.memfd_create("maag-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd
