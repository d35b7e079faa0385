"""`maag conformance FILE.jsonl`: check the engine against recorded reference traces."""

from __future__ import annotations

import argparse
from typing import Any

from maag.engine import conformance

DESCRIPTION = """`maag conformance FILE.jsonl`: replay recorded reference traces step by step, through
the replayer of the trace's game (its registry entry's `conformance`): each record is one
step, and every difference between the recorded and the engine's result is reported."""


def register(sub: Any) -> None:
    p = sub.add_parser("conformance", help="replay reference traces and compare every step",
                       description=DESCRIPTION)
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
