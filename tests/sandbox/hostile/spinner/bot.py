"""Hostile bot: before it connects, starts one thread per core of the machine, each spinning
for ever on work that runs outside Python's lock (hashing), so that together they could use
every core, through its own turns and the opponent's alike. It declares one thread in its
manifest. It plays each turn at once."""

import hashlib
import json
import os
import threading

from maag.clients import Bot, TurnResult, run_bot_blocking

DATA = b"x" * (1 << 22)


def spin() -> None:
    while True:
        hashlib.sha256(DATA).digest()  # releases the GIL: threads really run in parallel


threads = os.cpu_count() or 1
for _ in range(threads):
    threading.Thread(target=spin, daemon=True).start()
print("PROBE " + json.dumps({"probe": "spin", "threads": threads,
                             "affinity": sorted(os.sched_getaffinity(0))}), flush=True)


class Probe(Bot):
    name = "spinner"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
