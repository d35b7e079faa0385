"""`maag bot run AGENT` and `maag bot check COMMAND` (added to `maag bot` by
maag.server.cmd_bot through `register_bot`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Any

from ._client import Client
from ._errors import BotError
from .agent_bot import DEFAULT_MARGIN_MS, agent_bot


def register_bot(bsub: Any) -> None:
    """Add `run` and `check` to the subparsers of `maag bot`."""
    r = bsub.add_parser("run", help="play a bundled agent of maag.bots on a referee",
                        description="Connect AGENT (random, greedy-action, greedy-turn, mcts, ne-mcts, "
                                    "bb-mcts, oep, ... as `maag.bots` names them) to a referee and play "
                                    "every game it is given, until the referee closes the connection.")
    r.add_argument("agent", metavar="AGENT", help="agent name, or NAME:key=value,... as maag.bots parses it")
    r.add_argument("--param", "-p", action="append", default=[], metavar="KEY=VALUE",
                   help="an agent parameter (repeatable), e.g. --param rollout_turns=2")
    r.add_argument("--connect", required=True, metavar="HOST:PORT", help="the referee's address")
    r.add_argument("--token", required=True, help="the bot's token (from `maag bot add NAME`)")
    r.add_argument("--name", default=None, help="name shown to opponents (default: the agent's name)")
    r.add_argument("--json-lines", action="store_true", help="use the JSON-lines framing (default msgpack)")
    r.add_argument("--concurrency", type=int, default=1, metavar="N", help="games at once (default 1)")
    r.add_argument("--games", type=int, default=None, metavar="N",
                   help="stop after N games (default: play until the referee closes)")
    r.add_argument("--budget-ms", type=float, default=None, metavar="MS",
                   help="thinking time per turn (default: 90%% of what the clock leaves)")
    r.add_argument("--margin-ms", type=float, default=DEFAULT_MARGIN_MS, metavar="MS",
                   help=f"time kept back for transport (default {DEFAULT_MARGIN_MS})")
    r.add_argument("--seed", type=int, default=None, help="seed of the agent's searches")
    r.add_argument("-v", "--verbose", action="count", default=0, help="-v: games, -vv: every message")
    r.set_defaults(func=run_agent)

    c = bsub.add_parser("check", help="conformance kit: play a bot through scripted situations",
                        description=_check_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND",
                   help="the bot's command line (one quoted string, or the words after --)")
    c.add_argument("--tc", default="1s", help="time control of the situations (default 1s)")
    c.add_argument("--map", default="a", help="heroes map (default a)")
    c.add_argument("--situation", action="append", default=None, metavar="NAME",
                   help="run only this situation (repeatable)")
    c.add_argument("--connect-timeout", type=float, default=20.0, metavar="S",
                   help="seconds the bot may take to log in (default 20)")
    c.add_argument("--seed", type=int, default=1, help="seed of the situations' deals (default 1)")
    c.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    c.set_defaults(func=run_check_command)


def _check_doc() -> str:
    from . import check

    return check.__doc__ or ""


def _setup_logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s",
                        stream=sys.stderr)


def run_agent(args: argparse.Namespace) -> int:
    _setup_logging(args.verbose)
    name, _, inline = args.agent.partition(":")
    params = [s for s in inline.split(",") if s.strip()] + list(args.param)
    try:
        bot = agent_bot(name.strip(), params, budget_ms=args.budget_ms, margin_ms=args.margin_ms,
                        seed=args.seed)
        client = Client(bot, token=args.token, name=args.name or name.strip(),
                        encoding="json" if args.json_lines else "msgpack", concurrency=args.concurrency,
                        stop_after=args.games)
    except BotError as e:
        print(f"maag bot run: {e}", file=sys.stderr)
        return 2

    async def main() -> int:
        await client.connect(args.connect)
        stats = await client.run()
        score = sum(r.score for r in stats.games)
        print(f"maag bot run: {len(stats.games)} game(s), score {score:g}", file=sys.stderr)
        return 0

    try:
        return asyncio.run(main())
    except BotError as e:
        print(f"maag bot run: {e}", file=sys.stderr)
        return 1


def run_check_command(args: argparse.Namespace) -> int:
    from .check import run_check

    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else list(args.command)
    if not command:
        print("maag bot check: give the bot's command line, e.g. maag bot check -- python my_bot.py "
              "{address} {token}", file=sys.stderr)
        return 2

    logging.getLogger("maag.clients").setLevel(logging.ERROR)  # the kit's own opponent is quiet

    def log(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    report = asyncio.run(run_check(command, tc=args.tc, game_config={"map": args.map}, seed=args.seed,
                                   connect_timeout_s=args.connect_timeout, situations=args.situation,
                                   log=log))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        for p in report.problems:
            print(f"problem: {p}")
        if report.bot_stderr.strip() and not report.ok:
            print("the bot's last stderr lines:")
            for line in report.bot_stderr.strip().splitlines()[-10:]:
                print(f"  {line}")
        n_ok = sum(s.ok for s in report.situations)
        print(f"{'PASS' if report.ok else 'FAIL'}: {n_ok}/{len(report.situations)} situations ok, "
              f"{len(report.problems)} other problem(s)")
    return 0 if report.ok else 1
