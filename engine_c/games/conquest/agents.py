"""The conquest agents in C (conquest_search.c, conquest_pro.c; spec §7-§12): the thesis's
NE-MCTS, BB-MCTS and OEP, searching one move phase with per-territory decisions on a forward
model whose battles are the §7.3 estimate, and the baselines (the §9 playout heuristic,
TripleA's Easy, Fast and Hard AIs re-specified).

    >>> from maag.engine import Game
    >>> from maag.engine.games.conquest.agents import plan
    >>> s = Game("conquest").new_state(seed=1)
    >>> r = plan(s, "ne-mcts", iterations=84, seed=7)
    >>> r.plan[-1].to_dict()
    {'type': 'end_phase'}

maag.bots registers them as `conquest-<name>` (bots/conquest.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..._lowlevel import check, ffi, lib
from ...game import Action, State
from ...search import SearchResult, SearchStats

__all__ = ["AGENTS", "PARAMS", "SEARCHING", "defaults", "plan"]

AGENTS: dict[str, int] = {
    "ne-mcts": lib.CQ_AGENT_NE,
    "bb-mcts": lib.CQ_AGENT_BB,
    "oep": lib.CQ_AGENT_OEP,
    "heuristic": lib.CQ_AGENT_HEURISTIC,
    "easy": lib.CQ_AGENT_EASY,
    "fast": lib.CQ_AGENT_FAST,
    "hard": lib.CQ_AGENT_HARD,
}
# The agents that search (and take a budget); the others play one phase without search.
SEARCHING = ("ne-mcts", "bb-mcts", "oep")

# Fields of cq_agent_params and their Python types (budgets and the agent are separate).
PARAMS: dict[str, type] = {
    "max_phases": int, "win_base": float, "win_bonus": float, "unit_div": float, "c": float,
    "epsilon": float, "population": int, "survival": float, "mutation": float, "hard_runs": int,
    "max_nodes": int,
}


def _code(agent: str) -> int:
    if agent not in AGENTS:
        raise ValueError(f"unknown conquest agent {agent!r}; known: {', '.join(AGENTS)}")
    return AGENTS[agent]


def defaults(agent: str) -> dict[str, Any]:
    """The thesis's settings of `agent` (cq_agent_defaults), by field name."""
    p = ffi.new("cq_agent_params *")
    lib.cq_agent_defaults(_code(agent), p)
    return {name: typ(getattr(p, name)) for name, typ in PARAMS.items()}


def plan(state: State, agent: str, params: Mapping[str, Any] | None = None, *, budget_ms: float = 0.0,
         iterations: int = 0, seed: int | None = None) -> SearchResult:
    """The plan of `agent` for the current move phase of `state` (a conquest state or
    observation, unchanged): its moves, then end_phase. `iterations` counts MCTS iterations
    or OEP generations; with neither budget a search takes 1000 ms, as in the thesis. A fixed
    seed with an iteration budget and no time budget gives the same plan every time.
    ValueError for another game, an unknown agent or parameter; ConfigError for a value out
    of range; GameOverError for a finished game."""
    if state.game.name != "conquest":
        raise ValueError(f"the conquest agents play conquest, not {state.game.name}")
    p = ffi.new("cq_agent_params *")
    lib.cq_agent_defaults(_code(agent), p)
    for name, value in (params or {}).items():
        if name not in PARAMS:
            raise ValueError(f"unknown conquest agent parameter {name!r}; known: {', '.join(PARAMS)}")
        setattr(p, name, PARAMS[name](value))
    p.budget_ms = float(budget_ms)
    p.iterations = int(iterations)
    rng = ffi.new("mg_rng *")
    lib.mg_rng_seed(rng, (int.from_bytes(os.urandom(8), "little") if seed is None else seed) & (2**64 - 1))
    out = ffi.new("mg_action[]", lib.CQ_MAX_PLAN)
    n = ffi.new("int *")
    stats = ffi.new("cq_agent_stats *")
    rc = lib.cq_agent_plan(ffi.cast("cq_state *", state._buf), p, rng, out, n, stats)
    check(state.game.vt, rc, "bad conquest agent parameters" if rc == lib.MG_ERR_CONFIG else None)
    if agent not in SEARCHING:
        stop = "done"
    elif iterations and stats.iterations >= iterations:
        stop = "iterations"
    else:
        stop = "time"
    return SearchResult([Action(int(c), "conquest") for c in ffi.unpack(out, n[0])],
                        SearchStats(int(stats.iterations), int(stats.playouts), int(stats.nodes),
                                    float(stats.elapsed_ms), float(stats.value), stop,
                                    stats.playout_phases / max(1, stats.playouts)))
