"""The search parameters of issue 58 ("strength per simulation"), each on a small crafted
position: `forced` returns without searching when the turn leaves no choice, `solve`
(MCTS-Solver) finds and plays a won line with a budget where plain MCTS does not, stops once
the root is proven, and both leave the plans of the kernels unchanged when off."""

from __future__ import annotations

import pytest
from maag.bots import parse_agent
from maag.engine import Observation, State
from maag.engine.hidden import ismcts
from maag.engine.search import search

from .positions import TACTICS
from .test_search_tactics import WINNING_LINES, wins


def only_end_turn() -> State:
    """Heroes, player 0 to act with nothing left but END_TURN: its action points spent on
    the first moves of the lethal-strike line (three attacks, then whatever is legal)."""
    state = TACTICS["lethal-strike"]()
    while True:
        codes = state.legal_codes()
        if len(codes) == 1:
            return state
        # spend an action point on any action that keeps the game going
        for c in codes:
            nxt = state.clone()
            nxt.apply(c)
            if not nxt.is_terminal and nxt.current_player == state.current_player and c != codes[-1]:
                state = nxt
                break
        else:
            raise AssertionError("no position with END_TURN alone")


def test_the_crafted_position_leaves_only_end_turn() -> None:
    state = only_end_turn()
    assert not state.is_terminal and len(state.legal_codes()) == 1
    nxt = state.clone()
    nxt.apply(state.legal_codes()[0])
    assert nxt.current_player != state.current_player


@pytest.mark.parametrize("algo", ["mcts", "greedy-turn", "oep", "reply"])
def test_forced_returns_at_once_with_zero_iterations(algo: str) -> None:
    state = only_end_turn()
    off = search(state, algo, {}, iterations=200, seed=1)
    on = search(state, algo, {"forced": True}, iterations=200, seed=1)
    assert [a.code for a in on.plan] == state.legal_codes()
    assert on.stats.iterations == 0 and on.stats.evaluations == 0
    # the same plan as the search makes, which had to spend its budget to find it
    assert [a.code for a in off.plan] == [a.code for a in on.plan]


def test_forced_searches_as_before_when_there_is_a_choice() -> None:
    state = TACTICS["stomp"]()
    off = search(state, "mcts", {}, iterations=500, seed=3)
    on = search(state, "mcts", {"forced": True}, iterations=500, seed=3)
    assert on.stats.iterations == off.stats.iterations == 500
    assert [a.code for a in on.plan] == [a.code for a in off.plan]


def test_forced_on_an_observation_through_ismcts() -> None:
    state = only_end_turn()
    obs = Observation.of(state)
    res = ismcts(obs, {"forced": True}, iterations=300, seed=2)
    assert [a.code for a in res.plan] == state.legal_codes() and res.stats.iterations == 0
    assert ismcts(obs, {}, iterations=300, seed=2).stats.iterations == 300


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_solver_finds_the_win_plain_mcts_misses(seed: int, threads: int) -> None:
    """revive-then-attack: heal, then two attacks on the crystal. Non-exploring MCTS with
    1,000 iterations does not find it for any of these seeds; with the solver the terminal
    win, once expanded, proves the line back to the root and the line is played (with two
    trees too, where the merged final choice must take a win proven in either tree)."""
    state = TACTICS["revive-then-attack"]()
    plain, solver = f"ne-mcts:threads={threads}", f"ne-mcts:threads={threads},solve=true"
    assert not wins(state, parse_agent(plain).plan(state, iterations=1000, seed=seed))
    plan = parse_agent(solver).plan(state, iterations=1000, seed=seed)
    assert wins(state, plan), [a.to_dict() for a in plan]


@pytest.mark.parametrize("position", list(WINNING_LINES))
def test_the_solver_stops_once_the_root_is_proven(position: str) -> None:
    state = TACTICS[position]()
    params = {"c": 0.0, "policy": "greedy", "robust": True}
    on = search(state, "mcts", {**params, "solve": True}, iterations=20_000, seed=1)
    off = search(state, "mcts", params, iterations=20_000, seed=1)
    assert wins(state, on.plan)
    assert on.stats.stop == "done" and on.stats.iterations < 20_000
    assert on.stats.value == 1.0  # a proven win: every visit below it backed up a win
    assert off.stats.stop == "iterations" and off.stats.iterations == 20_000


@pytest.mark.parametrize("algo", ["mcts", "greedy-turn", "oep"])
def test_the_parameters_off_leave_the_plan_unchanged(algo: str) -> None:
    state = TACTICS["stomp"]()
    base = search(state, algo, {}, iterations=300, seed=7)
    off = search(state, algo, {"forced": False, "solve": False}, iterations=300, seed=7)
    assert [a.code for a in off.plan] == [a.code for a in base.plan]
    assert off.stats == base.stats or (off.stats.iterations, off.stats.nodes) == (
        base.stats.iterations, base.stats.nodes)
