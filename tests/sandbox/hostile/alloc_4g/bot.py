"""Hostile bot: on its first turn, allocates 4 GB (and touches every page of it, 64 MiB at a
time), printing its progress as `PROBE {...}` lines. In the sandbox the kernel kills it at
its memory limit; if it ever got all 4 GB, it says so and plays on."""

import json
import os

from maag.clients import Bot, TurnResult, run_bot_blocking

CHUNK = 64 * 1024 * 1024
hoard: list[bytearray] = []


def report(**what: object) -> None:
    print("PROBE " + json.dumps({"probe": "alloc", **what}), flush=True)


class Probe(Bot):
    name = "alloc-4g"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        if not hoard:
            report(start=True)
            while len(hoard) * CHUNK < 4 * 1000**3:
                hoard.append(bytearray(b"\x01") * CHUNK)  # written, so really in memory
                if len(hoard) % 4 == 0:
                    report(allocated=len(hoard) * CHUNK)
            report(allocated=len(hoard) * CHUNK, done=True)
        return TurnResult([observation.legal[0]])


run_bot_blocking(Probe, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
