"""`maag bot search AGENT --positions FILE`: search given positions with a bundled agent
in-process, as `maag arena` calls it each turn, and print what each search did.

FILE holds one JSON object per line: `game`, `config` and `observation` (a seat's
observation as the referee sends it in `your_turn`); other keys are copied to the output.
For each line one JSON object is printed with `iterations`, `nodes` and `time_ms` of the
agent's search under `--budget-ms` (wall clock) or `--iterations`. `maag bench iterations`
uses it to search, in-process, the very positions a bot process searched through the
referee, so the two can be compared position by position.

A subcommand of `maag bot` (entry point group "maag.bot_commands"); also runnable as
`python -m maag.bots.cli_search`.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from typing import Any

from maag.engine import Game
from maag.engine import Observation as EngineObservation

from .agents import AgentError, make_agent


def register(bsub: Any) -> None:
    """Add `search` to the subparsers of `maag bot`."""
    p = bsub.add_parser("search", help="search positions from a file with a bundled agent, in-process",
                        description=__doc__.split("\n\n")[0] if __doc__ else None)
    _arguments(p)
    p.set_defaults(func=run_search)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", metavar="AGENT", help="agent name, or NAME:key=value,... as maag.bots parses it")
    p.add_argument("--positions", required=True, metavar="FILE",
                   help="JSON lines with game, config and observation ('-': standard input)")
    p.add_argument("--budget-ms", type=float, default=None, metavar="MS", help="search time per position")
    p.add_argument("--iterations", type=int, default=None, metavar="N", help="search iterations per position")
    p.add_argument("--seed", type=int, default=1, help="seed of the searches (position i: seed + i)")


@lru_cache(maxsize=16)
def _game(name: str, config_json: str) -> Game:
    return Game(name, json.loads(config_json))


def search_one(agent: Any, record: dict[str, Any], budget_ms: float | None, iterations: int | None,
               seed: int) -> dict[str, Any]:
    """Search one position; the record's keys other than the position, plus the search's
    `iterations`, `nodes` and `time_ms`."""
    game = _game(str(record["game"]), json.dumps(record.get("config") or {}, sort_keys=True))
    view = EngineObservation.from_json(game, dict(record["observation"]))
    agent.plan(view, budget_ms=budget_ms, iterations=iterations, seed=seed)
    stats = getattr(getattr(agent, "last", None), "stats", None)
    out = {k: v for k, v in record.items() if k not in ("observation", "config")}
    if stats is None:
        raise AgentError("this agent reports no search statistics")
    out.update(iterations=int(stats.iterations), nodes=int(stats.nodes),
               time_ms=round(float(stats.elapsed_ms), 3))
    return out


def run_search(args: argparse.Namespace) -> int:
    if args.budget_ms is None and args.iterations is None:
        print("maag bot search: give --budget-ms or --iterations", file=sys.stderr)
        return 2
    name, _, inline = args.agent.partition(":")
    try:
        agent = make_agent(name.strip(), *[s for s in inline.split(",") if s.strip()])
    except AgentError as e:
        print(f"maag bot search: {e}", file=sys.stderr)
        return 2
    src = sys.stdin if args.positions == "-" else open(args.positions, encoding="utf-8")
    with src:
        for n, line in enumerate(src, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or "observation" not in record or "game" not in record:
                    raise ValueError("a position needs 'game' and 'observation'")
                out = search_one(agent, record, args.budget_ms, args.iterations, args.seed + n)
            except (ValueError, KeyError, AgentError) as e:
                print(f"maag bot search: {args.positions}, line {n}: {e}", file=sys.stderr)
                return 2
            print(json.dumps(out), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m maag.bots.cli_search", description=__doc__)
    _arguments(p)
    return run_search(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
