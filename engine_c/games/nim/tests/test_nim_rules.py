"""Nim's own rules (README.md beside the game): legal lists, each refusal with the state
unchanged, the turn flow, normal and misère wins, the turn-limit draw, the JSON forms and
their errors, and the search kernels on a won position. The invariants every game shares
are in tests/engine/test_every_game.py."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.engine import ConfigError, Game, IllegalActionError, StateError
from maag.engine.search import search


def take(pile: int, count: int) -> dict[str, Any]:
    return {"type": "take", "pile": pile, "count": count}


END = {"type": "end_turn"}


def position(**fields: Any) -> Any:
    base = {"piles": [3, 4, 5], "current": 1, "ap": 2, "taken": [False, False, False], "turn": 1,
            "terminal": False, "winner": 0}
    base.update(fields)
    return Game("nim", {}).state_from_json(base)


def dicts(state: Any) -> list[dict[str, Any]]:
    return [a.to_dict() for a in state.legal_actions()]


def test_the_opening_lists_every_take_by_pile_then_count_then_end_turn() -> None:
    s = Game("nim", {"piles": "1,2"}).new_state(seed=1)
    assert dicts(s) == [take(0, 1), take(1, 1), take(1, 2), END]


def test_a_pile_taken_from_this_turn_and_empty_piles_offer_nothing() -> None:
    s = position(piles=[0, 2, 1], taken=[False, True, False], ap=1)
    assert dicts(s) == [take(2, 1), END]
    s = position(ap=0, taken=[True, True, False])
    assert dicts(s) == [END]


@pytest.mark.parametrize(("action", "rule"), [
    (take(3, 1), "no such pile"),
    (take(1, 5), "fewer objects"),
    (take(0, 1), "already taken"),
])
def test_illegal_takes_are_refused_with_their_rule_and_change_nothing(action: dict[str, Any],
                                                                      rule: str) -> None:
    s = position(taken=[True, False, False], ap=1)
    before = s.to_bytes()
    with pytest.raises(IllegalActionError, match=rule):
        s.apply(action)
    assert s.to_bytes() == before


def test_no_take_without_action_points() -> None:
    s = position(ap=0, taken=[True, True, False])
    with pytest.raises(IllegalActionError, match="no action points"):
        s.apply(take(2, 1))


def test_malformed_actions_name_the_field() -> None:
    g = Game("nim", {})
    for bad, field in [({"type": "take", "pile": 0}, "count"),
                       ({"type": "take", "pile": -1, "count": 1}, "pile"),
                       ({"type": "jump"}, "type"), ({"type": "end_turn", "x": 1}, "x")]:
        with pytest.raises(ValueError, match=field):
            g.action(bad)


def test_a_turn_ends_and_the_other_player_gets_fresh_action_points() -> None:
    s = position()
    s.apply(take(0, 1))
    assert s.to_json()["ap"] == 1 and s.current_player == 0
    s.apply(END)
    j = s.to_json()
    assert (j["current"], j["ap"], j["taken"], j["turn"]) == (2, 2, [False, False, False], 2)


def test_taking_the_last_object_wins_at_once_in_the_middle_of_a_turn() -> None:
    s = position(piles=[0, 0, 2])
    s.apply(take(2, 2))
    assert s.is_terminal and s.winner == 0 and s.legal_actions() == []
    assert s.evaluate(0) == 1.0 and s.evaluate(1) == -1.0


def test_in_misere_taking_the_last_object_loses() -> None:
    s = Game("nim", {"misere": True}).state_from_json(
        {"piles": [1], "current": 2, "ap": 2, "taken": [False], "turn": 2, "terminal": False, "winner": 0})
    s.apply(take(0, 1))
    assert s.winner == 0


def test_the_game_is_a_draw_when_the_last_turn_ends() -> None:
    s = Game("nim", {"turn_limit": 2}).new_state(seed=1)
    s.apply(END)
    s.apply(END)
    assert s.is_terminal and s.winner == -1 and s.evaluate(0) == 0.0


def test_json_round_trips_for_states_and_observations() -> None:
    s = position(taken=[False, True, False], ap=1, piles=[3, 1, 5])
    again = s.game.state_from_json(s.to_json())
    assert again == s
    obs = s.observation(1)
    assert obs.to_json()["observer"] == 2 and obs.observer == 1
    assert s.game.state_from_json(obs.to_json()).to_bytes() == obs.to_bytes()
    full = obs.determinize(5)
    assert full.observer is None and full.to_json() == s.to_json()


@pytest.mark.parametrize(("fields", "message"), [
    ({"piles": [16]}, "piles"),
    ({"piles": []}, "piles"),
    ({"taken": [True]}, "taken"),
    ({"ap": 3}, "ap"),
    ({"ap": 2, "taken": [True, False, False]}, "disagree"),
    ({"current": 3}, "current"),
    ({"winner": 1}, "winner"),
    ({"piles": [0, 0, 0]}, "empty"),
    ({"terminal": True}, "objects are left"),
    ({"observer": 0}, "observer"),
])
def test_inconsistent_states_are_refused_naming_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(StateError, match=message):
        position(**fields)


@pytest.mark.parametrize(("options", "message"), [
    ({"piles": "1,x"}, "piles"), ({"piles": "0,0"}, "at least one object"), ({"piles": [1] * 9}, "1 to 8"),
    ({"ap": 0}, "ap"), ({"ap": "9"}, "ap"), ({"misere": "maybe"}, "misere"), ({"colour": "red"}, "unknown"),
])
def test_bad_options_are_refused_naming_the_option(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Game("nim", options)


def test_options_given_as_text_on_a_command_line_are_read() -> None:
    assert Game("nim", {"piles": "2, 7", "ap": "3", "misere": "true"}).config == \
        {"piles": [2, 7], "ap": 3, "misere": True, "turn_limit": 100}


def test_the_c_core_checks_the_configuration_too() -> None:
    g = Game("nim", {})
    g.config["turn_limit"] = 0  # past the Python checks: the C init refuses it
    g.spec.fill_config(g.config, g._cfg)
    with pytest.raises(ConfigError, match="turn_limit"):
        g.new_state(seed=1)


def test_mcts_finds_the_win_in_one_turn() -> None:
    # Two piles left, two actions: taking both wins now; anything else lets the opponent win.
    s = position(piles=[0, 3, 2])
    plan = search(s, "mcts", iterations=3000, seed=1).plan
    assert [a.to_dict() for a in plan] in ([take(1, 3), take(2, 2)], [take(2, 2), take(1, 3)])


@pytest.mark.parametrize("algo", ["mcts", "oep", "greedy-turn", "greedy-action", "ucb", "policy"])
def test_every_kernel_returns_a_legal_plan(algo: str) -> None:
    s = Game("nim", {"piles": "3,4,5,6", "ap": 3}).new_state(seed=1)
    plan = search(s, algo, iterations=300, seed=2).plan
    for a in plan:
        s.apply(a)
    assert plan[-1].to_dict() == END or s.is_terminal


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=1, max_size=8).filter(lambda p: sum(p) > 0),
       st.integers(1, 8), st.integers(0, 2**32))
def test_random_play_ends_and_equal_states_hash_alike(piles: list[int], ap: int, seed: int) -> None:
    g = Game("nim", {"piles": piles, "ap": ap, "turn_limit": 40})
    s = g.new_state(seed=seed)
    s.seed_rng(seed)
    n = s.clone().random_playout()
    assert 0 < n <= 40 * (ap + 1)
    twin = g.state_from_json(s.to_json())
    assert twin.hash() == s.hash()
