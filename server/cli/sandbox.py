"""`maag sandbox check`: which sandbox mechanisms work here (docs/hosting.md)."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("sandbox", help="the sandbox for hosted bots: check what this machine provides",
                       description=__doc__)
    s = p.add_subparsers(dest="sandbox_command", required=True)
    c = s.add_parser("check", help="try each mechanism and say which are active")
    c.add_argument("--json", action="store_true", help="one JSON object")
    c.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from maag.server.sandbox.check import sandbox_check

    found = sandbox_check()
    usable = all(m.active for m in found if m.required)
    if args.json:
        print(json.dumps({"usable": usable, "mechanisms": [m.to_dict() for m in found]}))
    else:
        for m in found:
            print(f"{'ok  ' if m.active else 'MISSING'} {m.name}: {m.detail}")
        print("the sandbox can run here" if usable else
              "the sandbox cannot run here: hosted bots (packages, --sandbox) are refused")
    return 0 if usable else 1
