"""Search speed of maag's agents and OpenSpiel's on the same positions, one thread: each
agent plans from the same observations (the player to act's, in positions reached by
greedy-action against itself) with the same time budget, and its searches' iterations are
divided by their time. An iteration is one simulation of a tree search (maag's MCTS and
ISMCTS, OpenSpiel's); greedy-reply counts its greedy-turn searches' outcomes instead.

    python3 -m maag.lab.openspiel_speed --game heroes --positions 8 --budget-ms 100

(docs/results-heroes.md and docs/results-cards.md, "OpenSpiel's agents".)"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

from maag.bots.agents import make_agent, parse_agent
from maag.engine import Game, Observation

DEFAULT_AGENTS = ("ismcts", "mcts", "greedy-reply", "openspiel:ismcts", "openspiel:mcts",
                  "openspiel:ismcts,evaluator=heuristic", "openspiel:mcts,evaluator=heuristic")


def positions(game: Game, count: int, seed: int) -> list[Observation]:
    """`count` observations of the player to act, every few turns of greedy-action games."""
    out: list[Observation] = []
    greedy = make_agent("greedy-action")
    g = 0
    while len(out) < count:
        st = game.new_state(seed + g)
        g += 1
        turn = 0
        while not st.is_terminal and len(out) < count:
            if turn % 3 == 1 and len(st.legal_codes()) > 1:
                out.append(Observation.of(st))
            player = st.current_player
            for a in greedy.plan(Observation.of(st), iterations=1, seed=turn):
                st.apply(a)
                if st.is_terminal or st.current_player != player:
                    break
            turn += 1
    return out


def measure(spec: str, views: list[Observation], budget_ms: float) -> dict[str, Any]:
    """Iterations per second of agent `spec` over the positions (each plan's iterations over
    its search time), and the mean iterations per plan."""
    agent = parse_agent(spec)
    rates, counts = [], []
    for i, view in enumerate(views):
        agent.plan(view, budget_ms=budget_ms, seed=i + 1)
        stats = agent.last.stats if agent.last is not None else None
        if stats is None or stats.elapsed_ms <= 0:
            continue
        rates.append(stats.iterations / (stats.elapsed_ms / 1000))
        counts.append(stats.iterations)
    return {"agent": spec, "positions": len(rates), "iterations_per_s": statistics.median(rates),
            "iterations_per_plan": statistics.mean(counts)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="heroes")
    ap.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--positions", type=int, default=8)
    ap.add_argument("--budget-ms", type=float, default=100.0)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--agent", action="append", default=None, help="an agent spec (repeatable)")
    args = ap.parse_args(argv)
    game = Game(args.game, dict(kv.split("=", 1) for kv in args.option))
    views = positions(game, args.positions, args.seed)
    for spec in args.agent or DEFAULT_AGENTS:
        print(json.dumps(measure(spec, views, args.budget_ms)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
