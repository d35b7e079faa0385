"""Ends every turn at once (the baseline of `maag bench ponder`)."""

import os

from maag.clients import Bot, TurnResult, run_bot_blocking


class Quiet(Bot):
    name = "quiet"
    games = (os.environ.get("MAAG_GAME", "heroes"),)

    def choose_turn(self, observation, limit):  # type: ignore[no-untyped-def]
        return TurnResult([{"type": "end_turn"}])


if __name__ == "__main__":
    run_bot_blocking(Quiet, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
