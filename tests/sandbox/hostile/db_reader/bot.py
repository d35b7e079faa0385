"""Hostile bot: opens the host's database file (the path the host gave `maag match --db`,
written to targets.json by the test: the worst case, a bot that knows it) and other files of
the host's: maag's default database, /etc/shadow. Prints what each attempt got as a
`PROBE {...}` line; if any file could be read, it plays an illegal action."""

import json
import os
from pathlib import Path

from maag.clients import Bot, TurnResult, run_bot_blocking

here = Path(__file__).parent
targets = json.loads((here / "targets.json").read_text()) if (here / "targets.json").exists() else {}
paths = [*targets.get("paths", []), "/root/.local/share/maag/maag.sqlite3", "/etc/shadow"]

attempts = {}
for p in paths:
    try:
        with open(p, "rb") as f:
            head = f.read(16)
        kind = " (an SQLite database)" if head.startswith(b"SQLite") else ""
        attempts[p] = f"read {len(head)} bytes{kind}"
    except OSError as e:
        attempts[p] = type(e).__name__
    try:
        attempts[p + " (folder)"] = f"listed {len(os.listdir(os.path.dirname(p)))} entries"
    except OSError as e:
        attempts[p + " (folder)"] = type(e).__name__
BREACHED = any(v.startswith("read") for v in attempts.values())
print("PROBE " + json.dumps({"probe": "db", "attempts": attempts, "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "db-reader"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
