"""Issue 53's hostile bots against the kernel itself: the keyring the host shares with its
processes, namespaces and mounts of the bot's own (a tmpfs past the scratch cap),
capabilities, and the kernel's debugging and tracing interfaces. Each hostile package is
played through `maag match PACKAGE random` on nim in the sandbox beside a companion match,
as in test_hostile_bots.py (`aftermath` checks the match, the host and the companion), and
reports what it saw (`PROBE {...}`); the last test runs the same probes outside the sandbox,
where each must find its way (a probe that could not see a breach would prove nothing).

The host's key: a canary key in the test's process keyring, linked into a fresh session
keyring that `maag match` runs in (the session keyring every process inherits, as maag
inherits its login's)."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from maag.server.sandbox import keyring, seccomp
from maag.server.sandbox.cgroups import Cgroups
from maag.server.sandbox.jail import SANDBOX_UID_BASE, SANDBOX_UIDS

from .conftest import HOSTILE, MAAG, NONCE, Companion, HostState, Match, command_line, launch, play
from .test_hostile_bots import aftermath, verdicts

pytestmark = pytest.mark.timeout(300)

KEYCTL_GET_KEYRING_ID, KEYCTL_SETPERM, KEYCTL_SEARCH, KEYCTL_READ, KEYCTL_INVALIDATE = 0, 5, 10, 11, 21
KEY_SPEC_PROCESS_KEYRING, KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -2, -4, -5
NR_KEYCTL = seccomp.syscall_number("keyctl")
NR_ADD_KEY = seccomp.syscall_number("add_key")
_libc = ctypes.CDLL(None, use_errno=True)


def _call(nr: int | None, *args: int | bytes | None) -> int:
    assert nr is not None
    cargs = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = int(_libc.syscall(ctypes.c_long(nr), *cargs))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def _keyring_ids(ring: int) -> list[int]:
    buf = ctypes.create_string_buffer(4096)
    n = _call(NR_KEYCTL, KEYCTL_READ, ring, ctypes.addressof(buf), 4096)
    return list(ctypes.cast(buf, ctypes.POINTER(ctypes.c_int32))[:n // 4])


@dataclass
class Canary:
    """A user key the host holds: in this process's own keyring (so the test reads it after
    the match), readable by its possessor and by root."""

    desc: str
    value: bytes
    key: int

    def read(self) -> bytes:
        buf = ctypes.create_string_buffer(4096)
        n = _call(NR_KEYCTL, KEYCTL_READ, self.key, ctypes.addressof(buf), 4096)
        return buf.raw[:n]


@pytest.fixture
def canary() -> Iterator[Canary]:
    desc, value = f"maag-canary-{NONCE}-{os.urandom(3).hex()}", f"host secret {os.urandom(8).hex()}".encode()
    key = _call(NR_ADD_KEY, b"user", desc.encode(), value, len(value), KEY_SPEC_PROCESS_KEYRING)
    _call(NR_KEYCTL, KEYCTL_SETPERM, key, 0x3F3F0000)  # its possessor and its owner (root): everything
    try:
        yield Canary(desc, value, key)
    finally:
        _call(NR_KEYCTL, KEYCTL_INVALIDATE, key)


IN_SESSION = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
nr, key = ctypes.c_long(int(sys.argv[1])), ctypes.c_long(int(sys.argv[2]))
# KEYCTL_JOIN_SESSION_KEYRING (a new one), then KEYCTL_LINK the canary into it (KEY_SPEC_SESSION_KEYRING)
if libc.syscall(nr, 1, None) < 0 or libc.syscall(nr, 8, key, ctypes.c_long(-3)) < 0:
    sys.exit("the canary's session keyring: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[3], sys.argv[3:])
"""


def in_session(c: Canary) -> tuple[str, ...]:
    """A command prefix: what follows runs in a new session keyring holding the canary."""
    return (sys.executable, "-c", IN_SESSION, str(NR_KEYCTL), str(c.key))


def user_keyrings(uid: int) -> dict[str, list[int]]:
    """The keys in `uid`'s user keyring and user session keyring, read by a process of that uid
    (root cannot read another user's keyrings)."""
    r, w = os.pipe()

    def as_uid() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        user = _call(NR_KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
        out = {"user": _keyring_ids(KEY_SPEC_USER_KEYRING),  # (the user session keyring links the user's)
               "user_session": [k for k in _keyring_ids(KEY_SPEC_USER_SESSION_KEYRING) if k != user]}
        os.write(w, json.dumps(out).encode())

    try:
        subprocess.run(["true"], preexec_fn=as_uid, pass_fds=[w], check=True)
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as f:
        return json.loads(f.read())  # type: ignore[no-any-return]


@pytest.fixture
def before(sandbox: Cgroups, tmp_path: Path) -> HostState:
    return HostState.now(sandbox, tmp_path)


def probe(m: Match, bot: str) -> dict[str, Any]:
    (p,) = m.probes(bot)
    return p


# -- the keyring ------------------------------------------------------------------------------------

def test_keyring_reader_neither_reads_nor_changes_the_hosts_key(sandbox: Cgroups, companion: Companion,
                                                                tmp_path: Path, before: HostState,
                                                                canary: Canary) -> None:
    leave = f"maag-left-{NONCE}"
    r = launch(tmp_path, "keyring_reader", targets={"description": canary.desc, "leave": leave},
               prefix=in_session(canary))
    m = r.finish()
    aftermath(m, "keyring-reader", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    p = probe(m, "keyring-reader")
    assert not p["breached"], p
    assert p["attempts"] == {"search": "EPERM", "request": "EPERM", "session": "EPERM", "leave": "EPERM"}, p
    assert verdicts(m) == [None]
    assert canary.read() == canary.value  # unchanged
    uid = p["uid"]
    assert isinstance(uid, int) and SANDBOX_UID_BASE <= uid < SANDBOX_UID_BASE + SANDBOX_UIDS, uid
    assert user_keyrings(uid) == {"user": [], "user_session": []}  # nothing left for the uid's next bot


def test_a_fresh_session_keyring_holds_nothing_of_its_parents(canary: Canary) -> None:
    """What the sandbox's process does before bubblewrap runs (keyring.fresh_session_keyring):
    a child that joins a new session keyring no longer finds its parent's keys (a child that
    does not, does)."""
    search = ("import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
              f"r = libc.syscall(ctypes.c_long({NR_KEYCTL}), {KEYCTL_SEARCH}, ctypes.c_long(-3), b'user', "
              "sys.argv[1].encode(), 0); print('found' if r > 0 else 'errno %d' % ctypes.get_errno())")
    parent = ("import subprocess, sys; from maag.server.sandbox import keyring; "
              "subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2]], check=True, "
              "preexec_fn=keyring.fresh_session_keyring() if sys.argv[3] == 'fresh' else None)")
    for how, expect in (("inherited", "found"), ("fresh", "errno 126")):  # ENOKEY
        out = subprocess.run([*in_session(canary), sys.executable, "-c", parent, search, canary.desc, how],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip() == expect, (how, out)


def test_a_uids_user_keyrings_are_emptied() -> None:
    """keyring.clear_user_keyrings, as a jail calls it before and after each use of its uid."""
    import asyncio

    uid = SANDBOX_UID_BASE - 1  # a uid no sandbox uses
    r, w = os.pipe()

    def leave_keys() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        rings = {"user": KEY_SPEC_USER_KEYRING, "user_session": KEY_SPEC_USER_SESSION_KEYRING}
        keys = {name: _call(NR_ADD_KEY, b"user", f"left-{name}".encode(), b"x", 1, ring)
                for name, ring in rings.items()}
        os.write(w, json.dumps(keys).encode())

    try:
        subprocess.run(["true"], preexec_fn=leave_keys, pass_fds=[w], check=True)
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as f:
        keys = json.loads(f.read())
    left = user_keyrings(uid)
    assert keys["user"] in left["user"] and keys["user_session"] in left["user_session"], (keys, left)
    assert asyncio.run(keyring.clear_user_keyrings(uid)) is True
    assert user_keyrings(uid) == {"user": [], "user_session": []}


# -- namespaces, capabilities, the kernel's interfaces ---------------------------------------------------

def test_namespace_maker_makes_no_namespace_and_mounts_nothing(sandbox: Cgroups, companion: Companion,
                                                               tmp_path: Path, before: HostState) -> None:
    m = play(tmp_path, "namespace_maker")
    aftermath(m, "namespace-maker", games=1, sandbox=sandbox, before=before, tmp=tmp_path,
              companion=companion)
    p = probe(m, "namespace-maker")
    assert not p["breached"], p
    attempts = p["attempts"]
    assert isinstance(attempts, dict)
    for k in ("unshare CLONE_NEWUSER", "unshare CLONE_NEWUSER|CLONE_NEWNS", "clone CLONE_NEWUSER|CLONE_NEWNS",
              "mount tmpfs"):
        assert attempts[k] == "EPERM", (k, p)
    for k in ("unshare -Ur", "unshare -Urm, mount tmpfs"):
        assert attempts[k].startswith("refused") and "Operation not permitted" in attempts[k], (k, p)
    assert p["before"] == p["after"], p  # still in its own user namespace, its mount table as it was
    assert verdicts(m) == [None]


def test_cap_reporter_holds_no_capability(sandbox: Cgroups, companion: Companion, tmp_path: Path,
                                          before: HostState) -> None:
    m = play(tmp_path, "cap_reporter")
    aftermath(m, "cap-reporter", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    p = probe(m, "cap-reporter")
    assert not p["breached"], p
    assert p["status"] == {"CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16, "CapBnd": "0" * 16,
                           "CapAmb": "0" * 16, "NoNewPrivs": "1", "Seccomp": "2"}, p
    assert verdicts(m) == [None]


def test_kernel_caller_is_refused_tracing_bpf_perf_and_userfaultfd(sandbox: Cgroups, companion: Companion,
                                                                   tmp_path: Path, before: HostState) -> None:
    m = play(tmp_path, "kernel_caller")
    aftermath(m, "kernel-caller", games=1, sandbox=sandbox, before=before, tmp=tmp_path, companion=companion)
    p = probe(m, "kernel-caller")
    assert not p["breached"], p
    assert p["attempts"] == {k: "EPERM" for k in ("ptrace TRACEME", "ptrace ATTACH", "bpf", "perf_event_open",
                                                  "userfaultfd", "process_vm_readv")}, p
    others = {"personality ADDR_NO_RANDOMIZE": "EPERM", "personality query": "ok",
              "clone3": "ENOSYS"}  # so that the C library falls back to clone, which the filter can read
    if platform.machine() == "x86_64":
        others["x32"] = "signal 31"  # another ABI's system call: SIGSYS, the process killed
    assert p["others"] == others, p
    assert verdicts(m) == [None]


# -- the probes can tell -----------------------------------------------------------------------------------

def test_outside_the_sandbox_each_kernel_probe_finds_its_way(tmp_path: Path, canary: Canary) -> None:
    """The same probes as command lines outside the sandbox (as root, as maag): each finds what
    it looks for, and plays its illegal action. The keyring probe reads and overwrites the
    canary, and leaves a key in root's user keyring (removed here)."""
    leave = f"maag-left-outside-{NONCE}"
    targets: dict[str, dict[str, str]] = {"namespace_maker": {}, "cap_reporter": {}, "kernel_caller": {},
                                          "keyring_reader": {"description": canary.desc, "leave": leave}}
    running = {name: launch(tmp_path / name, command_line(tmp_path, name, t),
                            prefix=in_session(canary) if name == "keyring_reader" else ())
               for name, t in targets.items()}
    found: dict[str, dict[str, Any]] = {}
    left: int | None = None
    try:
        for name, r in running.items():
            m = r.finish()
            assert m.returncode == 0, m.describe()
            found[name] = probe(m, m.games[0]["seat1"])
            assert found[name]["breached"], (name, found[name])
            assert [v["kind"] for v in verdicts(m)] == ["illegal"], (name, m.games)
    finally:
        with contextlib.suppress(OSError):  # ENOKEY: not left
            left = _call(NR_KEYCTL, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, b"user", leave.encode(), 0)
            _call(NR_KEYCTL, KEYCTL_INVALIDATE, left)
    assert found["keyring_reader"]["attempts"] == {
        "search": "ok", "request": "ok", "read": "ok:" + canary.value.decode(), "update": "ok",
        "session": "ok:1 keys", "leave": "ok"}, found["keyring_reader"]
    assert canary.read() == b"overwritten by a bot"  # the host would see a changed key
    assert left is not None  # and the key left on the uid is there after the game
    attempts = found["namespace_maker"]["attempts"]
    assert isinstance(attempts, dict) and set(attempts.values()) <= {"made", "mounted"}, attempts
    status = found["cap_reporter"]["status"]
    assert isinstance(status, dict) and int(status["CapEff"], 16) != 0, status
    assert set(found["kernel_caller"]["attempts"].values()) == {"ok"}, found["kernel_caller"]


def test_without_libseccomp_no_bot_starts(tmp_path: Path) -> None:
    """A host where pyseccomp finds no libseccomp (a module first on the path that fails as
    pyseccomp does then): `maag match` with a package refuses to start, saying what to
    install, and `maag sandbox check` reports the filter as a missing required mechanism."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyseccomp.py").write_text('raise RuntimeError("Unable to find libseccomp")\n')
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    cmd = [*MAAG, "match", str(HOSTILE / "cap_reporter"), "random", "--game", "nim", "--games", "1",
           "--db", str(tmp_path / "match.sqlite3")]
    m = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert m.returncode != 0 and "apt-get install libseccomp2" in m.stderr, m
    assert "PROBE" not in m.stdout + m.stderr
    c = subprocess.run([*MAAG, "sandbox", "check"], env=env, capture_output=True, text=True, timeout=120)
    assert c.returncode != 0, c
    assert any(line.startswith("MISSING system call filter (seccomp)") for line in c.stdout.splitlines()), c
