"""`maag bot run AGENT`: a bundled agent of maag.bots as a bot process on a referee (a
subcommand of `maag bot`, registered through the entry point group "maag.bot_commands")."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import Any

from maag.clients import BotError, Client, parse_address

from .runner import DEFAULT_MARGIN_MS, agent_bot


def register(bsub: Any) -> None:
    """Add `run` to the subparsers of `maag bot`."""
    r = bsub.add_parser("run", help="play a bundled agent of maag.bots on a referee",
                        description="Connect AGENT (random, greedy-action, greedy-turn, mcts, ne-mcts, "
                                    "bb-mcts, oep, emcts, fh-emcts, openspiel:ismcts, ... as `maag.bots` "
                                    "names them) to a "
                                    "referee and play every game it is given, until the referee closes "
                                    "the connection. --param preset=paper gives the source paper's "
                                    "settings (mcts, ne-mcts, bb-mcts, oep, emcts, fh-emcts); other "
                                    "settings given with it still win.")
    r.add_argument("agent", metavar="AGENT", help="agent name, or NAME:key=value,... as maag.bots parses it")
    r.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="an agent parameter (repeatable), e.g. --param rollout_turns=2")
    r.add_argument("--connect", default=None, metavar="ADDRESS",
                   help="the referee's address: HOST:PORT, unix:PATH (a Unix socket) or fd:N (an "
                        "inherited, already connected socket); default: $MAAG_CONNECT")
    r.add_argument("--token", default=None,
                   help="the bot's token (from `maag bot add NAME`); default: $MAAG_TOKEN, which keeps "
                        "it off the command line that `ps` shows to every user")
    r.add_argument("--name", default=None, help="name shown to opponents (default: the agent's name)")
    r.add_argument("--json-lines", action="store_true", help="use the JSON-lines framing (default msgpack)")
    r.add_argument("--concurrency", type=int, default=1, metavar="N", help="games at once (default 1)")
    r.add_argument("--games", type=int, default=None, metavar="N",
                   help="stop after N games (default: play until the referee closes)")
    r.add_argument("--budget-ms", type=float, default=None, metavar="MS",
                   help="thinking time per turn (default: 98%% of what the clock leaves, less the margin)")
    r.add_argument("--margin-ms", type=float, default=DEFAULT_MARGIN_MS, metavar="MS",
                   help=f"time kept back for sending the plan (default {DEFAULT_MARGIN_MS})")
    r.add_argument("--seed", type=int, default=None, help="seed of the agent's searches")
    r.add_argument("--reconnect", type=float, default=10.0, metavar="S",
                   help="when the connection is lost with games running, connect again for up to S "
                        "seconds and go on with them (default 10, the referee's default --grace; 0: exit)")
    r.add_argument("-v", "--verbose", action="count", default=0, help="-v: games, -vv: every message")
    r.set_defaults(func=run_agent)


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stderr)


def run_agent(args: argparse.Namespace) -> int:
    _setup_logging(args.verbose)
    token = args.token or os.environ.get("MAAG_TOKEN")
    if not token:
        print("maag bot run: no token: set MAAG_TOKEN (or pass --token)", file=sys.stderr)
        return 2
    address = args.connect or os.environ.get("MAAG_CONNECT")
    if not address:
        print("maag bot run: no address: pass --connect (or set MAAG_CONNECT)", file=sys.stderr)
        return 2
    try:
        parse_address(address)
    except BotError as e:
        print(f"maag bot run: {e}", file=sys.stderr)
        return 2
    name, _, inline = args.agent.partition(":")
    params = [s for s in inline.split(",") if s.strip()] + list(args.param)
    try:
        bot = agent_bot(name.strip(), params, budget_ms=args.budget_ms, margin_ms=args.margin_ms,
                        seed=args.seed)
        client = Client(bot, token=token, name=args.name or name.strip(),
                        encoding="json" if args.json_lines else "msgpack", concurrency=args.concurrency,
                        stop_after=args.games, reconnect_s=args.reconnect)
    except BotError as e:
        print(f"maag bot run: {e}", file=sys.stderr)
        return 2

    async def main() -> int:
        await client.connect(address)
        stats = await client.run()
        scored = [r.score for r in stats.games if r.score is not None]
        aborted = len(stats.games) - len(scored)
        print(f"maag bot run: {len(scored)} game(s), score {sum(scored):g}"
              + (f", {aborted} aborted" if aborted else ""), file=sys.stderr)
        return 0

    try:
        return asyncio.run(main())
    except BotError as e:
        print(f"maag bot run: {e}", file=sys.stderr)
        return 1
