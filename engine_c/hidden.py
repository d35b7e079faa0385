"""The engine-facing half of the determinized agents: the C kernels of mg_hidden.h (PIMC,
ISMCTS, OEP with determinized rollout fitness) run from an observation.

    >>> from maag.engine import Game, Observation
    >>> from maag.engine.hidden import pimc, ismcts
    >>> obs = Observation.of(Game("heroes").new_state(seed=1))
    >>> r = pimc(obs, "mcts", {}, k=4, iterations=400, seed=7)
    >>> r = ismcts(obs, {"rollout_turns": 2}, iterations=400, seed=7)

Each takes an `Observation`. Experiments that measure what hidden information costs call
the `*_on_state` forms with the true state (maag.bots.cheating): the same kernels then
search the true position, since determinizing a full state gives the state itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ._lowlevel import check, ffi, lib
from .game import Action, State
from .observation import Observation, strategy_code
from .search import VALUE_SCALE, SearchResult, SearchStats, _algo, _fill

__all__ = ["COMBINES", "pimc", "ismcts", "oep_hidden", "run_on_state"]

COMBINES: dict[str, int] = {"vote": lib.MG_COMBINE_VOTE, "sum": lib.MG_COMBINE_SUM}
_STOPS = ["done", "time", "iterations", "memory"]
KERNELS = ("pimc", "ismcts", "oep-hidden")


def _params(root: State, algo: str, params: Mapping[str, Any], budget_ms: float, iterations: int) -> Any:
    p = ffi.new("mg_search_params *")
    lib.mg_search_defaults(_algo(algo), p)
    p.value_scale = VALUE_SCALE.get(root.game.name, 1.0)
    _fill(p, params)
    p.budget_ms = float(budget_ms)
    p.iterations = int(iterations)
    return p


def _det(k: int, det: str, combine: str) -> Any:
    if combine not in COMBINES:
        raise ValueError(f"combine must be one of {', '.join(COMBINES)}, not {combine!r}")
    d = ffi.new("mg_det_params *")
    d.k = k
    d.mode = strategy_code(det)
    d.combine = COMBINES[combine]
    return d


def run_on_state(kernel: str, root: State, algo: str, params: Mapping[str, Any], *, k: int = 1,
                 det: str = "uniform", combine: str = "vote", budget_ms: float = 0.0, iterations: int = 0,
                 seed: int | None = None) -> SearchResult:
    """Run `kernel` (pimc, ismcts or oep-hidden) from `root`: an observation state (the
    honest search) or a full state (the search sees the truth). `algo` is PIMC's inner
    kernel (ignored by the others); `params` are mg_search_params fields by name."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown determinized kernel {kernel!r}; known: {', '.join(KERNELS)}")
    p = _params(root, algo if kernel == "pimc" else ("oep" if kernel == "oep-hidden" else "mcts"),
                params, budget_ms, iterations)
    d = _det(k, det, combine)
    rng = ffi.new("mg_rng *")
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    lib.mg_rng_seed(rng, seed & (2**64 - 1))
    plan = ffi.new("mg_action[]", lib.MG_SEARCH_MAX_PLAN)
    n = ffi.new("int *")
    stats = ffi.new("mg_search_stats *")
    err = ffi.new("char[]", lib.MG_ERR_LEN)
    vt = root.game.vt
    fn = {"pimc": lib.mg_search_pimc, "ismcts": lib.mg_search_ismcts, "oep-hidden": lib.mg_search_oep_hidden}
    rc = fn[kernel](vt, root._buf, p, d, rng, plan, n, stats, err)
    check(vt, rc, ffi.string(err).decode() or None)
    name = root.game.name
    return SearchResult(
        [Action(int(c), name) for c in ffi.unpack(plan, n[0])],
        SearchStats(int(stats.iterations), int(stats.evaluations), int(stats.nodes),
                    float(stats.elapsed_ms), float(stats.value), _STOPS[stats.stop]),
    )


def pimc(obs: Observation, algo: str, params: Mapping[str, Any] | None = None, *, k: int = 8,
         det: str = "uniform", combine: str = "vote", budget_ms: float = 0.0, iterations: int = 0,
         seed: int | None = None) -> SearchResult:
    """Perfect-information Monte Carlo: kernel `algo` (mcts, oep, greedy-turn, ...) on `k`
    determinizations (strategy `det`), plans combined by `combine` ("vote" or "sum"). The
    budgets are those of the whole call, split over the determinizations."""
    return run_on_state("pimc", obs._root(), algo, params or {}, k=k, det=det, combine=combine,
                        budget_ms=budget_ms, iterations=iterations, seed=seed)


def ismcts(obs: Observation, params: Mapping[str, Any] | None = None, *, det: str = "uniform",
           budget_ms: float = 0.0, iterations: int = 0, seed: int | None = None) -> SearchResult:
    """Single-observer information-set MCTS (MCTS parameters: c, policy, rollout_turns, ...);
    one determinization (strategy `det`) per iteration."""
    return run_on_state("ismcts", obs._root(), "mcts", params or {}, det=det, budget_ms=budget_ms,
                        iterations=iterations, seed=seed)


def oep_hidden(obs: Observation, params: Mapping[str, Any] | None = None, *, det: str = "uniform",
               budget_ms: float = 0.0, iterations: int = 0, seed: int | None = None) -> SearchResult:
    """OEP whose rollout fitness (fitness_rollouts > 0) is the mean over rollouts from fresh
    determinizations of the opponent's reply."""
    return run_on_state("oep-hidden", obs._root(), "oep", params or {}, det=det, budget_ms=budget_ms,
                        iterations=iterations, seed=seed)
