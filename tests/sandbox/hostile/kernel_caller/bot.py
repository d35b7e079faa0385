"""Hostile bot: calls into the parts of the kernel a bot has no use for: ptrace (on itself,
on its own child), eBPF (a map), perf_event_open (a software counter on itself), userfaultfd
(user-mode only, which needs no privilege), process_vm_readv (its own memory), personality
with ADDR_NO_RANDOMIZE; also personality's query, clone3 and (on x86_64) a system call of the
x32 ABI. Each runs in a child process. Prints each outcome (`ok`, the error's name, or the
signal that killed the child) as a `PROBE {...}` line; if any of the first six worked, it
plays an illegal action."""

import ctypes
import errno
import json
import os
import platform
import signal
import struct
import time

from maag.clients import Bot, TurnResult, run_bot_blocking

MACHINE = platform.machine()
NR = {"x86_64": {"bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "clone3": 435},
      "aarch64": {"bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "clone3": 435}}[MACHINE]
libc = ctypes.CDLL(None, use_errno=True)
libc.personality.argtypes = [ctypes.c_ulong]


def err() -> str:
    e = ctypes.get_errno()
    return errno.errorcode.get(e, str(e))


def in_child(fn) -> str:
    """fn() run in a forked child; its answer, or how the child died."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = fn()
        except BaseException as e:  # noqa: BLE001 (reported, whatever it is)
            out = f"{type(e).__name__}: {e}"
        os.write(w, out.encode()[:4000])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    return out or (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "no answer")


def fd_or_err(r: int) -> str:
    if r < 0:
        return err()
    os.close(r)
    return "ok"


def traceme() -> str:
    return "ok" if libc.ptrace(0, 0, None, None) == 0 else err()


def attach() -> str:
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    try:
        if libc.ptrace(16, child, None, None) != 0:  # PTRACE_ATTACH
            return err()
        os.waitpid(child, 0)
        libc.ptrace(17, child, None, None)  # PTRACE_DETACH
        return "ok"
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def bpf_map() -> str:
    attr = ctypes.create_string_buffer(struct.pack("=IIII", 2, 4, 4, 1), 72)  # an array map of one entry
    return fd_or_err(libc.syscall(ctypes.c_long(NR["bpf"]), 0, attr, 72))  # BPF_MAP_CREATE


def perf() -> str:
    # PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, disabled, exclude_kernel and _hv (as any user may)
    attr = ctypes.create_string_buffer(struct.pack("=IIQQQQQ", 1, 64, 0, 0, 0, 0, 1 | 1 << 5 | 1 << 6), 64)
    return fd_or_err(libc.syscall(ctypes.c_long(NR["perf_event_open"]), attr, 0, -1, -1, 0))


def uffd() -> str:
    return fd_or_err(libc.syscall(ctypes.c_long(NR["userfaultfd"]), os.O_CLOEXEC | 1))  # UFFD_USER_MODE_ONLY


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def vm_read() -> str:
    src = ctypes.create_string_buffer(b"mine", 16)
    dst = ctypes.create_string_buffer(16)
    local, remote = IoVec(ctypes.addressof(dst), 16), IoVec(ctypes.addressof(src), 16)
    n = libc.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    return "ok" if n == 16 else err()


def personality(value: int) -> str:
    return "ok" if libc.personality(value) != -1 else err()


def clone3() -> str:
    return "ok" if libc.syscall(ctypes.c_long(NR["clone3"]), None, 0) >= 0 else err()


def x32() -> str:
    r = libc.syscall(ctypes.c_long(0x40000000 | 39))  # getpid in the x32 ABI
    return "ok" if r >= 0 else err()


attempts = {
    "ptrace TRACEME": in_child(traceme),
    "ptrace ATTACH": in_child(attach),
    "bpf": in_child(bpf_map),
    "perf_event_open": in_child(perf),
    "userfaultfd": in_child(uffd),
    "process_vm_readv": in_child(vm_read),
}
others = {
    "personality ADDR_NO_RANDOMIZE": in_child(lambda: personality(0x0040000)),
    "personality query": in_child(lambda: personality(0xFFFFFFFF)),
    "clone3": in_child(clone3),
}
if MACHINE == "x86_64":
    others["x32"] = in_child(x32)
BREACHED = any(v == "ok" for v in attempts.values())
print("PROBE " + json.dumps({"probe": "kernel", "attempts": attempts, "others": others,
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "kernel-caller"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
