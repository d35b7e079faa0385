"""A bot that dies mid-game: exits with code 3 at its (--after + 1)-th `your_turn`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments, log  # noqa: E402
from maag.clients import Bot, Limit, Observation, TurnResult, run_bot_blocking  # noqa: E402


def main() -> int:
    args = arguments(__doc__, extra=[("--after", {"type": int, "default": 0, "help": "turns played first"})])

    class Crashing(Bot):
        name = args.name or "crashing"
        want_legal = True
        turns = 0

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            Crashing.turns += 1
            if Crashing.turns > args.after:
                log("crashing", "exiting with code 3 in the middle of a turn")
                os._exit(3)
            return TurnResult([{"type": "end_turn"}])

    run_bot_blocking(Crashing, args.address, token=args.token, encoding=args.encoding)
    return 0


if __name__ == "__main__":
    sys.exit(main())
