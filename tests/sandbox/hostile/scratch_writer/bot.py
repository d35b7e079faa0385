"""Hostile bot: before it connects, tries to write 2 GiB into each of its writable places
(/scratch, $TMPDIR, $HOME: one capped space in the sandbox), 1 MiB at a time, stopping at the
first error. Reports what it wrote and why it stopped as a `PROBE {...}` line, then plays on
with its space full."""

import errno
import json
import os

from maag.clients import Bot, TurnResult, run_bot_blocking

BLOCK = b"\x5a" * (1 << 20)
GOAL = 2 * 1024**3
FILE = 256 * 1024**2


def fill(folder: str) -> dict[str, int | str | None]:
    written, n, why = 0, 0, None
    while written < GOAL and why is None:
        try:
            with open(os.path.join(folder, f"fill-{os.getpid()}-{n}"), "wb", buffering=0) as f:
                n += 1
                for _ in range(FILE // len(BLOCK)):
                    written += f.write(BLOCK)
        except OSError as e:
            why = errno.errorcode.get(e.errno or 0, str(e))
    return {"bytes": written, "stopped": why}


result = {d: fill(d) for d in ("/scratch", os.environ.get("TMPDIR", "/tmp"), os.environ.get("HOME", "/"))}
print("PROBE " + json.dumps({"probe": "scratch", "written": result,
                             "total": sum(int(r["bytes"] or 0) for r in result.values())}), flush=True)


class Probe(Bot):
    name = "scratch-writer"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
