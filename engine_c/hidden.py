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

from collections.abc import Mapping
from typing import Any

from ._lowlevel import ffi, lib
from .game import State
from .observation import Observation, strategy_code
from .search import SearchResult, make_params, run_kernel

__all__ = ["COMBINES", "IsmctsTree", "pimc", "ismcts", "oep_hidden", "run_on_state"]

COMBINES: dict[str, int] = {"vote": lib.MG_COMBINE_VOTE, "sum": lib.MG_COMBINE_SUM,
                             "visits": lib.MG_COMBINE_VISITS}
KERNELS = ("pimc", "ismcts", "oep-hidden", "mcts-hidden", "reply-hidden")


def _det(k: int, det: str, combine: str) -> Any:
    if combine not in COMBINES:
        raise ValueError(f"combine must be one of {', '.join(COMBINES)}, not {combine!r}")
    d = ffi.new("mg_det_params *")
    d.k = k
    d.mode = strategy_code(det)
    d.combine = COMBINES[combine]
    return d


class IsmctsTree:
    """An ISMCTS tree kept from one search to the next (`ismcts(..., tree=...)`,
    mg_search_ismcts_reuse): a search from an information set the tree has searched before
    (the one the action played led to) goes on from its node; any other (another game or
    seat, other prune or max_nodes settings, no room left) empties it first. Which searches
    belong together is the caller's choice (a new tree for each new turn). One per game and
    seat; not for two threads at once. Its memory is freed with the object."""

    def __init__(self) -> None:
        ptr = lib.mg_ismcts_tree_new()
        if ptr == ffi.NULL:
            raise MemoryError("could not allocate an ISMCTS tree")
        self._ptr = ffi.gc(ptr, lib.mg_ismcts_tree_free)


def run_on_state(kernel: str, root: State, algo: str, params: Mapping[str, Any], *, k: int = 1,
                 det: str = "uniform", combine: str = "vote", budget_ms: float = 0.0, iterations: int = 0,
                 seed: int | None = None, tree: IsmctsTree | None = None) -> SearchResult:
    """Run `kernel` (pimc, ismcts, oep-hidden, mcts-hidden: MCTS's `threads` trees, each on
    its own determinization, or reply-hidden: greedy reply's answers on `k` sampled hands)
    from `root`: an observation state (the
    honest search) or a full state (the search sees the truth). `algo` is PIMC's inner
    kernel (ignored by the others); `params` are mg_search_params fields by name. `tree`
    (ismcts only) keeps the tree for the next search (IsmctsTree); stats.reused gives the
    root's visits it started with."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown determinized kernel {kernel!r}; known: {', '.join(KERNELS)}")
    if tree is not None and kernel != "ismcts":
        raise ValueError(f"a kept tree is for the ismcts kernel, not {kernel!r}")
    own = {"oep-hidden": "oep", "reply-hidden": "reply"}
    p = make_params(root, algo if kernel == "pimc" else own.get(kernel, "mcts"), params, budget_ms,
                    iterations)
    d = _det(k, det, combine)
    vt = root.game.vt
    kinds = {"pimc": lib.MG_HIDDEN_PIMC, "ismcts": lib.MG_HIDDEN_ISMCTS, "oep-hidden": lib.MG_HIDDEN_OEP,
             "mcts-hidden": lib.MG_HIDDEN_MCTS, "reply-hidden": lib.MG_HIDDEN_REPLY}
    kind = kinds[kernel]
    if tree is not None:
        kept = tree._ptr
        return run_kernel(root, seed, lambda rng, plan, n, stats, err:
                          lib.mg_search_ismcts_reuse(vt, root._buf, p, d, kept, rng, plan, n, stats, err))
    return run_kernel(root, seed, lambda rng, plan, n, stats, err:
                      lib.mg_search_hidden(kind, vt, root._buf, p, d, rng, plan, n, stats, err))


def pimc(obs: Observation, algo: str, params: Mapping[str, Any] | None = None, *, k: int = 8,
         det: str = "uniform", combine: str = "vote", budget_ms: float = 0.0, iterations: int = 0,
         seed: int | None = None) -> SearchResult:
    """Perfect-information Monte Carlo: kernel `algo` (mcts, oep, greedy-turn, ...) on `k`
    determinizations (strategy `det`), plans combined by `combine` ("vote" or "sum"). The
    budgets are those of the whole call, split over the determinizations."""
    return run_on_state("pimc", obs.as_state(), algo, params or {}, k=k, det=det, combine=combine,
                        budget_ms=budget_ms, iterations=iterations, seed=seed)


def ismcts(obs: Observation, params: Mapping[str, Any] | None = None, *, det: str = "uniform",
           budget_ms: float = 0.0, iterations: int = 0, seed: int | None = None,
           tree: IsmctsTree | None = None) -> SearchResult:
    """Single-observer information-set MCTS (MCTS parameters: c, policy, rollout_turns, ...);
    one determinization (strategy `det`) per iteration; with `tree`, on a kept tree."""
    return run_on_state("ismcts", obs.as_state(), "mcts", params or {}, det=det, budget_ms=budget_ms,
                        iterations=iterations, seed=seed, tree=tree)


def oep_hidden(obs: Observation, params: Mapping[str, Any] | None = None, *, det: str = "uniform",
               budget_ms: float = 0.0, iterations: int = 0, seed: int | None = None) -> SearchResult:
    """OEP whose rollout fitness (fitness_rollouts > 0) is the mean over rollouts from fresh
    determinizations of the opponent's reply."""
    return run_on_state("oep-hidden", obs.as_state(), "oep", params or {}, det=det, budget_ms=budget_ms,
                        iterations=iterations, seed=seed)
