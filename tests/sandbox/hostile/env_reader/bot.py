"""Hostile bot: looks for the host's database URLs, tokens and passwords in its environment
(its own, and its pid 1's). Prints what it found as a `PROBE {...}` line (names only, never
values); if it found any, it plays an illegal action, so the stored result shows it."""

import json
import os
import re

from maag.clients import Bot, TurnResult, run_bot_blocking

SUSPECT_NAME = re.compile(r"DB|DATABASE|SECRET|PASSW|TOKEN|KEY|CRED|AUTH|DSN", re.I)
OWN = {"MAAG_TOKEN"}  # the bot's own token to the referee: it is meant to have it


def suspicious(env: dict[str, str]) -> list[str]:
    return sorted(k for k, v in env.items()
                  if (SUSPECT_NAME.search(k) and k not in OWN) or "SECRET" in v.upper() or "://" in v)


def environ_of(pid: str) -> dict[str, str] | str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError as e:
        return type(e).__name__
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {k: v for k, _, v in pairs}


found = {"os.environ": suspicious(dict(os.environ))}
for pid in ("self", "1"):
    env = environ_of(pid)
    found[f"/proc/{pid}/environ"] = suspicious(env) if isinstance(env, dict) else []
BREACHED = any(found.values())
print("PROBE " + json.dumps({"probe": "env", "keys": sorted(os.environ), "suspicious": found,
                             "pid1_environ": "read" if isinstance(environ_of("1"), dict) else environ_of("1"),
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "env-reader"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
