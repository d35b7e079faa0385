"""The `maag` command line. Commands register themselves: each is an entry point of the
group "maag.commands" (pyproject.toml) naming a `register(subparsers)` function that adds
its parser and sets `func`; `maag bot`'s subcommands are the group "maag.bot_commands".
So a command may live in any part of maag (`maag arena` is the lab's, `maag bot run` the
bots'), this package imports none of them by name, and a command loads only its own module:
`maag bot add` builds only `bot`'s parser, and loads neither the C core nor an agent.
`maag --help` loads every command's module to list them.

Modules: `common` (what several commands share: the database, the game and its options,
the time control, policies, the web view, logging) and one module per command of the
server: `match`, `serve`, `bot` (add, list), `replay`, `tournament`, `ladder`,
`conformance`, `bench`, `games`, `protocol` (the schema), `sandbox` (check), `submissions`
(`maag bot submit|versions|process`), `upload` (`maag bot upload`), `govern` (`maag game
show|void|rulings`, `maag bot pardon`: the host's rulings)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

# The order `maag --help` lists the commands in; others follow by name.
ORDER = ["match", "serve", "bot", "replay", "tournament", "ladder", "conformance", "bench", "arena",
         "experiment", "games", "game", "protocol"]


def commands(group: str) -> list[EntryPoint]:
    """The registered commands of an entry-point group, in ORDER."""
    eps = {ep.name: ep for ep in entry_points(group=group)}
    ranked = sorted(eps, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    return [eps[n] for n in ranked]


_argv: list[str] = []  # the command line being parsed, for register_group


def register_group(group: str, sub: Any, level: int = 0, local: Collection[str] = ()) -> None:
    """Add the commands of `group` to `sub`: only the one the command line names at word
    `level` (0: `maag NAME`, 1: `maag bot NAME`), if it names one, so that only its module
    is imported; none if it names one of the caller's own `local` subcommands; else all
    (for help, and for argparse's list of choices)."""
    eps = commands(group)
    words = [a for a in _argv if not a.startswith("-")]
    named = words[level] if len(words) > level else None
    if named in local:
        return
    chosen = [ep for ep in eps if ep.name == named]
    for ep in chosen or eps:
        ep.load()(sub)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    global _argv
    _argv = list(argv)
    parser = argparse.ArgumentParser(
        prog="maag",
        description="Referee server and bot suite for multi-action adversarial games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    register_group("maag.commands", sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_in)
    args = parser.parse_args(args_in)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if getattr(args, "resolve_db", False):  # common.add_db_argument's --db: one resolution for all
        from maag.server.cli.common import resolve_db_argument

        refused = resolve_db_argument(args)
        if refused:
            print(f"maag: {refused}", file=sys.stderr)
            return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
