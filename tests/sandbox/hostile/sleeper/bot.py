"""Hostile bot: sleeps through its turns (an hour each), never answering."""

import json
import os
import time

from maag.clients import Bot, TurnResult, run_bot_blocking


class Probe(Bot):
    name = "sleeper"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        print("PROBE " + json.dumps({"probe": "sleep", "time_left_ms": limit.time_left_ms}), flush=True)
        time.sleep(3600)
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
