"""Burns every core of the machine, all game long (on its opponent's turns too), and ends
every turn at once: the hostile side of `maag bench ponder`."""

import multiprocessing
import os

from maag.clients import Bot, TurnResult, run_bot_blocking


def spin() -> None:
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


class Spinner(Bot):
    name = "spinner"
    games = (os.environ.get("MAAG_GAME", "heroes"),)

    def choose_turn(self, observation, limit):  # type: ignore[no-untyped-def]
        return TurnResult([{"type": "end_turn"}])


if __name__ == "__main__":
    for _ in range(os.cpu_count() or 2):
        multiprocessing.Process(target=spin, daemon=True).start()
    run_bot_blocking(Spinner, os.environ["MAAG_CONNECT"], token=os.environ["MAAG_TOKEN"])
