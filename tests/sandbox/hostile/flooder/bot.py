"""Hostile bot: floods its output (standard output and standard error, 64 KiB at a time,
from a thread of its own) for as long as it runs, while it plays normally."""

import json
import os
import threading

from maag.clients import Bot, TurnResult, run_bot_blocking

BLOCK = (b"flood " * 11000)[:65536]


def flood() -> None:
    while True:
        os.write(1, BLOCK)
        os.write(2, BLOCK)


print("PROBE " + json.dumps({"probe": "flood", "block": len(BLOCK)}), flush=True)
threading.Thread(target=flood, daemon=True).start()


class Probe(Bot):
    name = "flooder"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
