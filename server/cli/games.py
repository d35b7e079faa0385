"""`maag games`: the registered games and their options (from the registry: games.def and
each game's folder)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("games", help="list the registered games and their options", description=__doc__)
    p.add_argument("game", nargs="?", default=None, help="show only this game")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from maag.engine import registry

    names = registry.names() if args.game is None else [args.game]
    try:
        specs = [registry.get(n) for n in names]
    except ValueError as e:
        print(f"maag games: {e}")
        return 2
    if args.json:
        print(json.dumps({s.name: {"summary": s.summary, "options": [
            {"name": o.name, "type": o.type.__name__, "default": o.default, "choices": o.choices,
             "help": o.help}
            for o in s.options]} for s in specs}))
        return 0
    for s in specs:
        print(f"{s.name}: {s.summary}")
        for o in s.options:
            default = "derived" if o.default is None else json.dumps(o.default)
            choices = f" ({', '.join(map(str, o.choices))})" if o.choices else ""
            print(f"  -o {o.name}=...  {o.help}{choices}; default {default}")
    return 0
