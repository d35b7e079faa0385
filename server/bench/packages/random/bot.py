"""One random legal action per message (`maag bench sandbox`: the referee's CPU per message)."""

import os
import random

from maag.clients import Bot, TurnResult, run_bot_blocking


class Random(Bot):
    name = "random-package"
    games = (os.environ.get("MAAG_GAME", "heroes"),)
    want_legal = True

    def choose_turn(self, observation, limit):  # type: ignore[no-untyped-def]
        return TurnResult([random.choice(observation.legal)])


if __name__ == "__main__":
    run_bot_blocking(Random, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
