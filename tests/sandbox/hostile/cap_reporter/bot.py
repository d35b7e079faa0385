"""Hostile bot: reports what it holds: its capability sets (inheritable, permitted,
effective, bounding, ambient), no_new_privs and its seccomp mode, from /proc/self/status, as
a `PROBE {...}` line. Any capability, or no_new_privs off, is a breach: it then plays an
illegal action."""

import json
import os

from maag.clients import Bot, TurnResult, run_bot_blocking

FIELDS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
status = {}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        if key in FIELDS:
            status[key] = value.strip()
BREACHED = any(int(status[k], 16) != 0 for k in FIELDS if k.startswith("Cap")) or status["NoNewPrivs"] != "1"
print("PROBE " + json.dumps({"probe": "capabilities", "status": status, "uid": os.getuid(),
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "cap-reporter"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
