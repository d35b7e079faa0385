"""Hostile bot: makes namespaces of its own and mounts in them, the way to a tmpfs with no
size cap (past its scratch space's) and to capabilities inside a new user namespace. Each
attempt runs in a child process: unshare(CLONE_NEWUSER), unshare(CLONE_NEWUSER|CLONE_NEWNS),
a raw clone with CLONE_NEWUSER|CLONE_NEWNS, `unshare -Ur`, `unshare -Urm` then mount a tmpfs
and write to it, and mount(2) of a tmpfs (in a private mount namespace if it can make one).
It also notes its own user namespace and mount table before and after. Prints each outcome
(`made`/`mounted`, or the error) as a `PROBE {...}` line; if any worked, it plays an illegal
action."""

import ctypes
import errno
import json
import os
import platform
import subprocess

from maag.clients import Bot, TurnResult, run_bot_blocking

CLONE_NEWNS, CLONE_NEWUSER, SIGCHLD = 0x00020000, 0x10000000, 17
MS_REC, MS_PRIVATE = 0x4000, 0x40000
NR_CLONE = {"x86_64": 56, "aarch64": 220}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
scratch = os.environ.get("TMPDIR", "/tmp")


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


def unshare(flags: int) -> str:
    return "made" if libc.unshare(flags) == 0 else err()


def raw_clone() -> str:
    # clone(flags, stack 0, ...): the child goes on on a copy of this stack, like fork.
    flags = ctypes.c_long(CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD)
    pid = libc.syscall(ctypes.c_long(NR_CLONE), flags, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    if pid < 0:
        return err()
    os.waitpid(pid, 0)
    return "made"


def command(args: list[str]) -> str:
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{type(e).__name__}: {e}"
    if p.returncode == 0:
        return p.stdout.strip() or "made"
    return f"refused (exit {p.returncode}): {p.stderr.strip()[-200:]}"


def mount_here() -> str:
    # In a mount namespace of its own if it can make one, all of it private (as `unshare -m`
    # does): where that works (outside a sandbox), the host's mount table never sees the tmpfs.
    libc.unshare(CLONE_NEWNS)
    libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)
    target = os.path.join(scratch, "probe-mount")
    os.makedirs(target, exist_ok=True)
    try:
        if libc.mount(b"none", target.encode(), b"tmpfs", 0, b"size=1g") == 0:
            libc.umount2(target.encode(), 2)
            return "mounted"
        return err()
    finally:
        os.rmdir(target)


def mounts() -> int:
    with open("/proc/self/mountinfo") as f:
        return len(f.readlines())


target = os.path.join(scratch, "probe-ns-mount")
before = {"user_ns": os.readlink("/proc/self/ns/user"), "mounts": mounts()}
attempts = {
    "unshare CLONE_NEWUSER": in_child(lambda: unshare(CLONE_NEWUSER)),
    "unshare CLONE_NEWUSER|CLONE_NEWNS": in_child(lambda: unshare(CLONE_NEWUSER | CLONE_NEWNS)),
    "clone CLONE_NEWUSER|CLONE_NEWNS": in_child(raw_clone),
    "unshare -Ur": command(["unshare", "-Ur", "true"]),
    # The way past the scratch space's cap: a tmpfs of one's own, written to (1 MB is proof enough).
    "unshare -Urm, mount tmpfs": command(["unshare", "-Urm", "sh", "-c",
                                          f"mkdir -p {target} && mount -t tmpfs -o size=1g none {target} && "
                                          f"head -c 1000000 /dev/zero > {target}/big && echo mounted"]),
    "mount tmpfs": in_child(mount_here),
}
if os.path.isdir(target):
    os.rmdir(target)
after = {"user_ns": os.readlink("/proc/self/ns/user"), "mounts": mounts()}
BREACHED = any(v in ("made", "mounted") for v in attempts.values()) or before != after
print("PROBE " + json.dumps({"probe": "namespaces", "attempts": attempts, "before": before, "after": after,
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "namespace-maker"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
