"""A bot for the fleet tests, written with the SDK: one uniformly random legal action per
`your_turn`, after a pause of --delay-ms (wall time, no CPU: many games stay in progress for
a while on a small machine); it reconnects on its own for up to --reconnect seconds.

    python tests/e2e/pacing_bot.py HOST:PORT [--concurrency N] [--delay-ms MS] [--reconnect S] [--game G]

The token is read from $MAAG_TOKEN. Every game's end is logged (`game N over: ...`)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys

from maag.clients import Bot, Limit, Observation, TurnResult, run_bot


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("address")
    p.add_argument("--concurrency", type=int, default=1)
    p.add_argument("--delay-ms", type=float, default=50.0)
    p.add_argument("--reconnect", type=float, default=60.0)
    p.add_argument("--game", default="heroes", help="the game it plays (default heroes)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")

    class Pacing(Bot):
        name = "pacing"
        want_legal = True
        games = (args.game,)

        async def choose_turn(self, observation: Observation, limit: Limit) -> TurnResult:
            await asyncio.sleep(args.delay_ms / 1000)
            assert observation.legal is not None
            return TurnResult([random.choice(observation.legal)])

    asyncio.run(run_bot(Pacing, args.address, token=os.environ["MAAG_TOKEN"], concurrency=args.concurrency,
                        reconnect_s=args.reconnect))
    return 0


if __name__ == "__main__":
    sys.exit(main())
