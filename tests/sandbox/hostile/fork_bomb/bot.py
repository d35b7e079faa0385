"""Hostile bot: before it connects, tries 2000 forks (children that sleep forever, all kept),
reports how many worked and how the others failed as a `PROBE {...}` line, then plays with
its children still there (its `choose_turn` is async: it needs no thread of its own)."""

import errno
import json
import os
import signal
import time
from collections import Counter

from maag.clients import Bot, TurnResult, run_bot_blocking

ATTEMPTS = 2000
children: list[int] = []
failures: Counter[str] = Counter()


def bomb() -> None:
    t0 = time.monotonic()
    for _ in range(ATTEMPTS):
        try:
            pid = os.fork()
        except OSError as e:
            failures[errno.errorcode.get(e.errno or 0, str(e.errno))] += 1
            continue
        if pid == 0:
            try:
                while True:
                    signal.pause()
            finally:
                os._exit(0)
        children.append(pid)
    print("PROBE " + json.dumps({"probe": "fork", "attempts": ATTEMPTS, "forked": len(children),
                                 "failures": dict(failures), "seconds": round(time.monotonic() - t0, 2)}),
          flush=True)


bomb()


class Probe(Bot):
    name = "fork-bomb"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    async def choose_turn(self, observation, limit):
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
