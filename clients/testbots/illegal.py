"""A bot that only plays illegal actions (--bad: actions the game cannot even read)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments  # noqa: E402
from maag.clients import Bot, Limit, Observation, TurnResult, run_bot_blocking  # noqa: E402

ILLEGAL = {"type": "attack", "from": [0, 0], "to": [0, 0]}  # no unit attacks its own square
UNREADABLE = {"type": "fly", "to": "moon"}


def main() -> int:
    args = arguments(__doc__, extra=[("--bad", {"action": "store_true", "help": "unreadable actions"})])

    class Illegal(Bot):
        name = args.name or "illegal"

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            return TurnResult([UNREADABLE if args.bad else ILLEGAL])

    run_bot_blocking(Illegal, args.address, token=args.token, encoding=args.encoding)
    return 0


if __name__ == "__main__":
    sys.exit(main())
