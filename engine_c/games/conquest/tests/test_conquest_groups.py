"""The thesis's action abstraction as grouped legal actions (spec §8, groups.py): which
territories get a decision, the options each offers, and that every option is a sequence of
legal actions moving exactly its units into its territory, over random games (hypothesis)."""

from __future__ import annotations

import random

import pytest
from conquest_position import BLUE_INF, BLUE_TANK, END, RED_ART, RED_INF, RED_TANK, move, position
from hypothesis import given, settings
from hypothesis import strategies as st
from maag.engine import Game, State
from maag.engine.games.conquest.groups import Group, groups, groups_json


def check_group(s: State, g: Group) -> None:
    """Every option of g, played from s, is legal action by action and moves only its own
    units, each into g's territory; no option is empty (SKIP is not listed)."""
    js = s.to_json()
    mine = js["owner"][js["player"]]
    assert (g.territory in mine) == (g.phase == "noncombat") and g.phase == js["phase"]
    assert g.options
    for o in g.options:
        assert o.units and len(o.units) == len(set(o.units)) == len(o.actions)
        c = s.clone()
        for a, u in zip(o.actions, o.units, strict=True):
            d = a.to_dict()
            assert d["unit"] == u and d["path"][-1] == g.territory and u not in js["moved"]
            c.apply(a)  # IllegalActionError if the option were not legal in this order
        here = c.to_json()["units"].get(g.territory, [])
        assert set(o.units) <= set(here)


def test_the_opening_offers_the_thesis_combat_decisions() -> None:
    s = Game("conquest").new_state(seed=1)
    gs = groups(s)
    # B1 and B5 border R1 and R5; R7's two infantry fail the strength test against B7's two
    assert [(g.territory, g.phase) for g in gs] == [("B1", "combat"), ("B5", "combat")]
    for g in gs:
        check_group(s, g)
        sizes = [len(o.units) for o in g.options]
        assert sizes == sorted(sizes, reverse=True) and sizes[0] == 4  # C (R1's and R5's 4) first


def test_an_empty_enemy_territory_is_offered_the_cheapest_unit() -> None:
    s = position({"R1": [RED_TANK[0], RED_INF[0]], "B3": BLUE_INF[:1]})
    by = {g.territory: g for g in groups(s)}
    assert [o.units for o in by["B1"].options] == [(RED_INF[0],)]
    assert [o.units for o in by["B5"].options] == [(RED_INF[0],)]


def test_a_target_that_fails_the_strength_test_gets_no_group() -> None:
    # one infantry (attack 1) against a tank (defense 3) in B1
    s = position({"R1": [RED_INF[0]], "B1": [BLUE_TANK[0]]})
    assert "B1" not in {g.territory for g in groups(s)}


def test_a_territory_taken_this_phase_opens_no_new_target() -> None:
    # The infantry takes empty B1; B6 then borders Red's B1 and is in the tank's reach (through
    # B1), but the combat list was fixed at the phase's start (§8.1): B6 gets no decision.
    s = position({"R1": [RED_INF[0], RED_TANK[0]], "B6": BLUE_INF[:1]})
    s.apply(move(RED_INF[0], "R1", "B1"))
    gs = groups(s)
    assert "B6" not in {g.territory for g in gs} and "B1" not in {g.territory for g in gs}
    assert [(g.territory, [o.units for o in g.options]) for g in gs] == [("B5", [(RED_TANK[0],)])]


def test_non_combat_groups_put_the_capital_first_with_none_half_or_all_of_each_source() -> None:
    four = [*RED_INF[:3], RED_ART[0]]
    s = position({"R2": four, "B3": BLUE_INF[:1]}, phase="noncombat")
    gs = groups(s)
    assert gs[0].territory == "R3" and all(g.phase == "noncombat" for g in gs)
    # R2 is the only source: all four, or the first half by (type, id), never SKIP
    assert [o.units for o in gs[0].options] == [tuple(four), tuple(RED_INF[:2])]
    assert "R2" not in {g.territory for g in gs}  # nothing can reach it
    for g in gs:
        check_group(s, g)


def test_units_that_moved_are_not_offered_and_a_finished_game_has_no_groups() -> None:
    s = position({"R1": RED_INF[:2], "B3": BLUE_INF[:1]})
    s.apply(move(RED_INF[0], "R1", "B1"))
    assert all(RED_INF[0] not in o.units for g in groups(s) for o in g.options)
    s = position({"R3": RED_INF[:1]})  # Blue has no unit left: the game is over at once or soon
    while not s.is_terminal:
        s.apply(END)
    assert groups(s) == [] and groups_json(s) == []


def test_the_observation_gives_the_same_groups_and_other_games_are_refused() -> None:
    s = Game("conquest").new_state(seed=3)
    assert groups_json(s.observation(1)) == groups_json(s) == groups_json(s.observation(0))
    with pytest.raises(ValueError, match="conquest"):
        groups(Game("heroes").new_state(seed=1))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 60))
def test_every_option_is_legal_along_random_games(seed: int, plies: int) -> None:
    # Random play that mixes group options with single legal actions and phase ends.
    rng = random.Random(seed)
    s = Game("conquest").new_state(seed=seed)
    for _ in range(plies):
        if s.is_terminal:
            break
        gs = groups(s)
        r = rng.random()
        if gs and r < 0.5:
            for a in rng.choice(rng.choice(gs).options).actions:
                s.apply(a)
        elif r < 0.8:
            s.apply(rng.choice(s.legal_actions()))
        else:
            s.apply(END)
    for g in groups(s):
        check_group(s, g)
