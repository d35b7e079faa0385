"""`maag protocol schema`: the protocol's JSON Schema (2020-12), every message of both sides
with the registered games' actions, observations and grouped actions (docs/protocol.md).
Validate a bot's messages against it, or generate types from it."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("protocol", help="the protocol's machine-readable contract (JSON Schema)",
                       description=__doc__)
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    s = what.add_parser("schema", help="print the JSON Schema of every message",
                        description="Print the JSON Schema (2020-12) of one protocol message, either side.")
    s.add_argument("--game", action="append", default=None, metavar="NAME",
                   help="only this game's actions and observations (repeatable; default: every game)")
    s.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of standard output")
    s.set_defaults(func=run_schema)


def run_schema(args: argparse.Namespace) -> int:
    import json

    from maag.server.referee.schema import game_schema

    try:
        schema = game_schema(args.game)
    except ValueError as e:
        print(f"maag protocol schema: {e}", file=sys.stderr)
        return 2
    text = json.dumps(schema, indent=1, ensure_ascii=False) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
