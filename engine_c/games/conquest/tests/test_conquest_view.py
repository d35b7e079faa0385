"""The text view of conquest (view.py): what `maag replay ID --show` prints."""

from __future__ import annotations

from conquest_position import BLUE_INF, RED_ART, RED_INF, RED_TANK, position
from maag.engine import Game, registry
from maag.engine.games.conquest.view import describe, render


def test_a_new_game_shows_every_territory_and_army() -> None:
    text = render(Game("conquest").new_state(seed=1).to_json())
    lines = text.splitlines()
    assert lines[0] == "round 1 of 35: Red, combat move"
    assert len(lines) == 15
    assert "  R3    Red    Red: 7 infantry, 3 artillery, 3 tank" in lines
    assert "  B7    Blue   Blue: 2 infantry" in lines


def test_an_attack_shows_both_armies_and_a_taken_territory() -> None:
    st = position({"R1": [RED_ART[0]], "B1": BLUE_INF[:2], "B3": BLUE_INF[2:3]})
    st.apply({"type": "move", "unit": RED_ART[0], "path": ["R1", "B1"]})
    text = render(st.to_json())
    assert "B1    Blue   Red: 1 artillery; Blue: 2 infantry" in text
    st2 = position({"R5": RED_INF[:1], "B3": BLUE_INF[:1]})
    st2.apply({"type": "move", "unit": RED_INF[0], "path": ["R5", "B5"]})
    assert "B5    Red    Red: 1 infantry (taken this turn)" in render(st2.to_json())


def test_actions_in_words() -> None:
    red = [f"R{i}" for i in range(1, 8)]
    st = position({"R3": RED_TANK[:1], "B3": BLUE_INF[:1]}, red=red)
    js = st.to_json()
    assert describe(js, {"type": "end_phase"}) == "Red ends the combat move (battles follow)"
    assert describe(js, {"type": "move", "unit": RED_TANK[0], "path": ["R3", "R4", "R5"]}) == \
        f"Red moves tank {RED_TANK[0]} R3 -> R4 -> R5"
    blitz = position({"R5": RED_TANK[:2], "B3": BLUE_INF[:1]}).to_json()
    joined = {"type": "move", "unit": RED_TANK[1], "path": ["R5", "B5", "B4"], "join": True}
    assert describe(blitz, joined) == \
        f"Red moves tank {RED_TANK[1]} R5 -> B5 -> B4 (blitz through B5) (joining the move before)"


def test_the_registry_offers_the_view() -> None:
    spec = registry.get("conquest")
    assert spec.render is render and spec.describe is describe
