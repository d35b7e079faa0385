"""`maag conformance FILE.jsonl`: check the engine against recorded reference traces."""

from __future__ import annotations

import argparse
from typing import Any

from maag.server.kit import conformance


def register(sub: Any) -> None:
    p = sub.add_parser("conformance", help="replay reference traces and compare every step",
                       description=conformance.__doc__)
    p.add_argument("file", help="a .jsonl trace file (see ../shared/conformance/README.md)")
    p.add_argument("--game", default=None, help="the game of the traces (default: from the file name)")
    p.add_argument("--show", type=int, default=5, metavar="N",
                   help="print the first N mismatches (default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return conformance.run(args.file, game=args.game, max_report=args.show)
    except ValueError as e:
        print(f"maag conformance: {e}")
        return 2
