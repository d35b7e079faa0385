"""A bot that stops answering: after --after turns it never replies to `your_turn`."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import arguments  # noqa: E402
from maag.clients import Bot, Limit, Observation, TurnResult, run_bot_blocking  # noqa: E402


def main() -> int:
    args = arguments(__doc__, extra=[("--after", {"type": int, "default": 0, "help": "turns played first"})])
    forever = threading.Event()

    class Sleeping(Bot):
        name = args.name or "sleeping"
        want_legal = True
        turns = 0

        def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            Sleeping.turns += 1
            if Sleeping.turns > args.after:
                forever.wait()  # in a worker thread: the connection itself stays alive
            assert observation.legal is not None
            return TurnResult([{"type": "end_turn"}])

    run_bot_blocking(Sleeping, args.address, token=args.token, encoding=args.encoding)
    return 0


if __name__ == "__main__":
    sys.exit(main())
