"""A well-behaved package bot: plays a random legal action. The hostile bots' tests play it in
a match of its own beside each hostile one: its games must all finish normally."""

import os
import random

from maag.clients import Bot, TurnResult, run_bot_blocking


class Honest(Bot):
    name = "honest"
    want_legal = True
    games = (os.environ.get("MAAG_GAME", "nim"),)

    def choose_turn(self, observation, limit):
        return TurnResult([random.choice(observation.legal)])


run_bot_blocking(Honest, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
