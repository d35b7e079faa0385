"""Hostile bot: on its first turn, reads memory at address 0 (a real SIGSEGV, not a signal
sent to itself)."""

import ctypes
import json
import os

from maag.clients import Bot, TurnResult, run_bot_blocking


class Probe(Bot):
    name = "segfault"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        print("PROBE " + json.dumps({"probe": "segv"}), flush=True)
        ctypes.string_at(0)
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
