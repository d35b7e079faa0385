"""The kernel keyring and the sandbox. A process inherits its parent's session keyring, and
every uid has a user keyring that outlives its processes: a bot could read the host's keys
(maag's session keyring) or leave keys for the next bot on its uid. The system call filter
(seccomp.py) refuses keyctl, add_key and request_key; besides, each sandbox starts in a fresh
anonymous session keyring of its own (so the host's is out of reach even if a call got
through), and a sandbox uid's user keyrings are emptied before and after each use.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import os
import shutil
from collections.abc import Callable

from maag.server.sandbox.seccomp import syscall_number

__all__ = ["fresh_session_keyring", "clear_user_keyrings"]

KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5
TRUE = shutil.which("true") or "/bin/true"

_libc = ctypes.CDLL(None, use_errno=True)


def _keyctl() -> Callable[..., int]:
    """keyctl(2) through libc's syscall(), its number from libseccomp's table (the C library
    has no wrapper: libkeyutils does, and is not always installed)."""
    nr = syscall_number("keyctl")
    if nr is None:
        raise RuntimeError("this architecture has no keyctl system call")
    call = _libc.syscall

    def keyctl(*args: int | None) -> int:
        return int(call(ctypes.c_long(nr), *(ctypes.c_long(a) if a is not None else None for a in args)))

    return keyctl


def fresh_session_keyring() -> Callable[[], None]:
    """A function to call in a child between fork and exec (plain system calls only), which
    makes the child join a new anonymous session keyring: nothing of its parent's is in it."""
    keyctl = _keyctl()

    def join() -> None:
        if keyctl(KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
            err = ctypes.get_errno()
            if err != errno.ENOSYS:  # a kernel without keyrings: nothing to keep apart
                raise OSError(err, f"a fresh session keyring: {os.strerror(err)}")

    return join


async def clear_user_keyrings(uid: int) -> bool:
    """Empty the user keyring and the user session keyring of `uid` (only a process of that
    uid may: no capability lets root into another user's keyring); whether both were. A
    short-lived child switches to the uid, clears both, and runs `true`."""
    keyctl = _keyctl()

    def as_uid() -> None:  # between fork and exec: plain system calls only
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        failed = [ring for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING)
                  if keyctl(KEYCTL_CLEAR, ring) < 0 and ctypes.get_errno() != errno.ENOSYS]
        if failed:
            os._exit(1)  # exec'ing `true` would report success

    proc = await asyncio.create_subprocess_exec(TRUE, preexec_fn=as_uid, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, env={})
    return await proc.wait() == 0
