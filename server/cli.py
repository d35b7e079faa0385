"""The `maag` command line. Each subcommand lives in its own module with a
`register(subparsers)` function that adds its parser and sets `func`; this file only
assembles them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from maag.server import (
    cmd_arena,
    cmd_bench,
    cmd_bot,
    cmd_conformance,
    cmd_experiment,
    cmd_ladder,
    cmd_match,
    cmd_replay,
    cmd_serve,
    cmd_tournament,
)

# Subcommand modules, in the order `maag --help` lists them.
COMMANDS = [cmd_match, cmd_serve, cmd_bot, cmd_replay, cmd_tournament, cmd_ladder, cmd_conformance, cmd_bench,
            cmd_arena, cmd_experiment]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="maag",
        description="Referee server and bot suite for multi-action adversarial games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
