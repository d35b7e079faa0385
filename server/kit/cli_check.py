"""`maag bot check COMMAND`: the conformance kit. Runs the bot's command as a process and
plays it through scripted situations on a real referee (registered under `maag bot`
through the entry point group "maag.bot_commands")."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from maag.server.cli.common import add_game_option_arguments, game_config
from maag.server.printable import printable


def register(bsub: Any) -> None:
    """Add `check` to the subparsers of `maag bot`."""
    c = bsub.add_parser("check", help="conformance kit: play a bot through scripted situations",
                        description=_check_doc(), formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND",
                   help="the bot's command line (one quoted string, or the words after --)")
    c.add_argument("--tc", default="1s", help="time control of the situations (default 1s)")
    add_game_option_arguments(c)
    c.add_argument("--situation", action="append", default=None, metavar="NAME",
                   help="run only this situation (repeatable)")
    c.add_argument("--connect-timeout", type=float, default=20.0, metavar="S",
                   help="seconds the bot may take to log in (default 20)")
    c.add_argument("--seed", type=int, default=1, help="seed of the situations' deals (default 1)")
    c.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    c.set_defaults(func=run_check_command)


def _check_doc() -> str:
    from maag.server.kit import check

    return check.__doc__ or ""


def run_check_command(args: argparse.Namespace) -> int:
    from maag.server.kit.check import run_check

    command = [c for c in args.command if c != "--"] if args.command[:1] == ["--"] else list(args.command)
    if not command:
        print("maag bot check: give the bot's command line, e.g. maag bot check -- python my_bot.py "
              "{connect} {token}", file=sys.stderr)
        return 2

    def log(line: str) -> None:
        if not args.json:
            print(printable(line), flush=True)

    report = asyncio.run(run_check(command, tc=args.tc, game=args.game, game_config=game_config(args),
                                   seed=args.seed,
                                   connect_timeout_s=args.connect_timeout, situations=args.situation,
                                   log=log))
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        for p in report.problems:
            print(f"problem: {printable(p)}")
        if report.bot_stderr.strip() and not report.ok:
            print("the bot's last stderr lines:")
            for line in printable(report.bot_stderr.strip()).split("\n")[-10:]:  # the bot's output
                print(f"  {line}")
        n_ok = sum(s.ok for s in report.situations)
        print(f"{'PASS' if report.ok else 'FAIL'}: {n_ok}/{len(report.situations)} situations ok, "
              f"{len(report.problems)} other problem(s)")
    return 0 if report.ok else 1
