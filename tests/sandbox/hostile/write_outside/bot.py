"""Hostile bot: writes outside its folder: into the host's folders named in targets.json,
into its own package (/bot, read-only) and the system's folders; it also changes its
package's files' modes. Every file it manages to create it removes again. Prints each
attempt's outcome as a `PROBE {...}` line; if any write worked, it plays an illegal action.
Its private space (/scratch) must take a write: that attempt is reported apart."""

import json
import os
from pathlib import Path

from maag.clients import Bot, TurnResult, run_bot_blocking

here = Path(__file__).parent
targets = json.loads((here / "targets.json").read_text()) if (here / "targets.json").exists() else {}


def try_write(path: str) -> str:
    try:
        with open(path, "x") as f:
            f.write("hostile bot was here\n")
    except OSError as e:
        return type(e).__name__
    os.unlink(path)
    return "written"


attempts = {p: try_write(p) for p in targets.get("paths", [])}
for p in targets.get("chmod", []):
    try:
        os.chmod(p, 0o777)
        attempts[f"chmod {p}"] = "written"
    except OSError as e:
        attempts[f"chmod {p}"] = type(e).__name__
own = None
if targets.get("own"):
    own = try_write(os.path.join(os.environ.get("TMPDIR", "/tmp"), "hostile-own-space"))
BREACHED = any(v == "written" for v in attempts.values())
print("PROBE " + json.dumps({"probe": "write", "attempts": attempts, "own_space": own,
                             "breached": BREACHED}), flush=True)


class Probe(Bot):
    name = "write-outside"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([{"type": "take", "pile": 0, "count": 99} if BREACHED else observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
