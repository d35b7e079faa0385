"""The engine-facing half of the search agents: run one C search kernel (mg_search.h) on a
`State` and get back the plan for the rest of the turn plus what the search did.

    >>> from maag.engine import Game
    >>> from maag.engine.search import search
    >>> s = Game("heroes").new_state(seed=1)
    >>> r = search(s, "mcts", {"c": 0.0}, iterations=200, seed=7)
    >>> r.plan[-1].to_dict()
    {'type': 'end_turn'}

The kernel runs in C with the GIL released (cffi API mode), so searches in several threads
run in parallel. Parameters are the fields of `mg_search_params`; enumerated ones take
their names (policy "egreedy", select "robust")."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ._lowlevel import check, ffi, lib
from .game import Action, State

__all__ = ["ALGORITHMS", "POLICIES", "SELECTIONS", "MOVES", "POSTS", "PARAMS", "count_moves",
           "SearchStats", "SearchResult", "SearchTree",
           "default_params", "make_params", "run_kernel", "search"]

# Kernel names -> MG_ALGO_*.
ALGORITHMS: dict[str, int] = {
    "policy": lib.MG_ALGO_POLICY,
    "greedy-action": lib.MG_ALGO_GREEDY_ACTION,
    "greedy-turn": lib.MG_ALGO_GREEDY_TURN,
    "mcts": lib.MG_ALGO_MCTS,
    "oep": lib.MG_ALGO_OEP,
    "ucb": lib.MG_ALGO_UCB,
    "rmp": lib.MG_ALGO_RMP,
    "uct": lib.MG_ALGO_UCT,
    "emcts": lib.MG_ALGO_EMCTS,
    "reply": lib.MG_ALGO_REPLY,
}
POLICIES: dict[str, int] = {
    "random": lib.MG_POLICY_RANDOM,
    "meta": lib.MG_POLICY_META,
    "egreedy": lib.MG_POLICY_EGREEDY,
    "greedy": lib.MG_POLICY_GREEDY,
    "rap": lib.MG_POLICY_RAP,
    "rap-greedy": lib.MG_POLICY_RAP_GREEDY,
}
SELECTIONS: dict[str, int] = {
    "max-reward": lib.MG_SELECT_MAX,
    "robust": lib.MG_SELECT_ROBUST,
    "max-wins": lib.MG_SELECT_MAXWINS,
}
# Where flat UCB's arms come from, and UCT's post-Monte-Carlo completions (mg_search.h).
MOVES: dict[str, int] = {"sample": lib.MG_MOVES_SAMPLE, "dfs": lib.MG_MOVES_DFS}
POSTS: dict[str, int] = {"none": lib.MG_POST_NONE, "rap": lib.MG_POST_RAP, "rmp": lib.MG_POST_RMP,
                         "rmpmax": lib.MG_POST_RMPMAX}
STOPS = ["done", "time", "iterations", "memory"]

# Settable fields of mg_search_params and their Python types (budgets are separate).
PARAMS: dict[str, type] = {
    "value_scale": float, "prune": bool, "early_end": bool, "legal_order": bool,
    "policy": str, "epsilon": float, "p_card": float, "rollout_turns": int,
    "c": float, "transpositions": bool, "bridge_burning": bool, "collapse_k": int,
    "horizon_root": bool, "robust": bool,
    "complete": bool, "max_nodes": int, "threads": int,
    "population": int, "survival": float, "mutation": float, "history": bool,
    "fitness_rollouts": int, "islands": int, "migration_interval": int, "migrants": int,
    "arms": int, "select": str, "moves": str, "max_moves": int, "longest": bool, "post": str,
    "branching": int, "tree_depth": int, "horizon": int, "model_k": int, "backup_max": bool,
    "forced": bool, "solve": bool, "widen_k": float, "widen_alpha": float,
    "reply_share": float, "reply_quick": bool, "turn_widen": bool, "reply_widen": bool,
}
_ENUMS: dict[str, dict[str, int]] = {"policy": POLICIES, "select": SELECTIONS, "moves": MOVES, "post": POSTS}


@dataclass(frozen=True, slots=True)
class SearchStats:
    """What one search did. `iterations` is in the kernel's unit: MCTS iterations, OEP
    generations, EMCTS genomes, greedy-turn outcomes (distinct end-of-turn states), UCB
    pulls, or plan steps for the policy and greedy-action kernels."""

    iterations: int
    evaluations: int
    nodes: int
    elapsed_ms: float
    value: float
    stop: str  # done, time, iterations or memory
    playout_phases: float = 0.0  # conquest's agents: mean move phases per playout (up to 40)
    reused: int = 0  # a kept tree (SearchTree): the root's visits kept from the previous search


@dataclass(frozen=True, slots=True)
class SearchResult:
    plan: list[Action]
    stats: SearchStats


def default_params(algo: str) -> dict[str, Any]:
    """The C defaults of a kernel (mg_search_defaults), by field name."""
    p = ffi.new("mg_search_params *")
    lib.mg_search_defaults(_algo(algo), p)
    out: dict[str, Any] = {}
    for name, typ in PARAMS.items():
        v = getattr(p, name)
        if name in _ENUMS:
            out[name] = next(k for k, code in _ENUMS[name].items() if code == v)
        else:
            out[name] = typ(v)
    return out


def _algo(algo: str) -> int:
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown search kernel {algo!r}; known: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[algo]


def _fill(p: Any, params: Mapping[str, Any], state: State) -> None:
    for name, value in params.items():
        if name == "eval_net":  # an evaluation network (maag.engine.evalnet) or None
            if value is not None:
                value.check_game(state.game)
            p.eval_net = ffi.NULL if value is None else value.cdata
            continue
        if name not in PARAMS:
            raise ValueError(f"unknown search parameter {name!r}; known: {', '.join(PARAMS)}")
        if name in _ENUMS:
            if value not in _ENUMS[name]:
                raise ValueError(f"{name} must be one of {', '.join(_ENUMS[name])}, not {value!r}")
            value = _ENUMS[name][value]
        setattr(p, name, value)


def make_params(state: State, algo: str, params: Mapping[str, Any], budget_ms: float,
                iterations: int) -> Any:
    """An mg_search_params of kernel `algo`'s defaults with `params` (fields by name) and
    the budgets set. value_scale stays 0 (the game's own, mg_game_vt.value_scale) unless
    `params` sets it. `params["eval_net"]`, a maag.engine.evalnet.Network checked against
    the state's game, replaces the game's evaluation; the caller keeps it alive while the
    parameters are in use (the struct only points to it)."""
    p = ffi.new("mg_search_params *")
    lib.mg_search_defaults(_algo(algo), p)
    _fill(p, params, state)
    p.budget_ms = float(budget_ms)
    p.iterations = int(iterations)
    return p


def run_kernel(state: State, seed: int | None,
               call: Callable[[Any, Any, Any, Any, Any], int]) -> SearchResult:
    """Run one C search from `state`: `call(rng, plan, plan_len, stats, err)` is the kernel
    with everything else bound, returning its status code (checked here: ConfigError,
    GameOverError, ...). A None `seed` is drawn from the OS."""
    rng = ffi.new("mg_rng *")
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little")
    lib.mg_rng_seed(rng, seed & (2**64 - 1))
    plan = ffi.new("mg_action[]", lib.MG_SEARCH_MAX_PLAN)
    n = ffi.new("int *")
    stats = ffi.new("mg_search_stats *")
    err = ffi.new("char[]", lib.MG_ERR_LEN)
    rc = call(rng, plan, n, stats, err)
    check(state.game.vt, rc, ffi.string(err).decode() or None)
    name = state.game.name
    return SearchResult(
        [Action(int(c), name) for c in ffi.unpack(plan, n[0])],
        SearchStats(int(stats.iterations), int(stats.evaluations), int(stats.nodes),
                    float(stats.elapsed_ms), float(stats.value), STOPS[stats.stop],
                    reused=int(stats.reused)),
    )


class SearchTree:
    """An MCTS tree kept from one `search` to the next (`search(..., tree=...)`,
    mg_search_reuse): a search from the state an action of the previous root led to, within
    the turn and without chance, goes on in that action's subtree; any other state (another
    turn, a chance outcome, another game) empties it first. One per game and seat; not for two
    threads at once. Its memory is freed with the object."""

    def __init__(self) -> None:
        ptr = lib.mg_search_tree_new()
        if ptr == ffi.NULL:
            raise MemoryError("could not allocate a search tree")
        self._ptr = ffi.gc(ptr, lib.mg_search_tree_free)


def search(state: State, algo: str, params: Mapping[str, Any] | None = None, *,
           budget_ms: float = 0.0, iterations: int = 0, seed: int | None = None,
           tree: SearchTree | None = None) -> SearchResult:
    """Search from `state` (unchanged) for the player to act and return the plan for the
    rest of its turn (ending with end_turn unless the game ends first).

    `budget_ms` is the wall-clock budget and `iterations` the iteration budget (0 = none
    for either); the search stops at whichever comes first. `seed` drives every random
    choice: a fixed seed with an iteration budget and no time budget gives the same plan
    every time. Raises ConfigError for bad parameters and GameOverError for a finished
    game. With `tree` (kernel mcts on one thread, without bridge burning or collapse) the
    search keeps its tree there for the next call (SearchTree); stats.reused says how many
    visits of the root it started with."""
    p = make_params(state, algo, params or {}, budget_ms, iterations)
    vt = state.game.vt
    if tree is not None:
        return run_kernel(state, seed, lambda rng, plan, n, stats, err:
                          lib.mg_search_reuse(vt, state._buf, p, tree._ptr, rng, plan, n, stats, err))
    return run_kernel(state, seed, lambda rng, plan, n, stats, err:
                      lib.mg_search(vt, state._buf, p, rng, plan, n, stats, err))


def count_moves(state: State, max_moves: int = 10_000, *, prune: bool = False,
                seed: int = 0) -> tuple[int, int]:
    """The number of moves of the move tree at `state` that RMP and UCB's depth-first arms
    see (at most `max_moves`; states already reached skipped with `prune`), and the longest
    move's length (END_TURN included): the thesis's gen_moves (spec/cards.md §8.2)."""
    rng = ffi.new("mg_rng *")
    lib.mg_rng_seed(rng, seed & (2**64 - 1))
    longest = ffi.new("int *")
    n = lib.mg_count_moves(state.game.vt, state._buf, int(max_moves), int(prune), rng, longest)
    if n < 0:
        raise MemoryError("the move generation could not allocate its memory")
    return int(n), int(longest[0])
