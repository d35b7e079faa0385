"""The bot kit's conquest situations (kit.py): each start is a legal state that does what its
name says."""

from __future__ import annotations

from maag.engine import Game, registry
from maag.engine.games.conquest.agents import plan

END = {"type": "end_phase"}


def _starts() -> dict[str, dict]:
    return {s.name: s.start for s in registry.get("conquest").situations({}, 3) if s.start is not None}


def test_every_situation_is_a_legal_start() -> None:
    names = [s.name for s in registry.get("conquest").situations({}, 3)]
    assert names == ["opening-seat1", "opening-seat2", "noncombat-move", "only-end-phase", "empty-capital"]
    for start in _starts().values():
        Game("conquest").state_from_json(start)


def test_only_end_phase_is_legal_when_every_unit_moved() -> None:
    st = Game("conquest").state_from_json(_starts()["only-end-phase"])
    assert [a.to_dict() for a in st.legal_actions()] == [END]


def test_the_noncombat_start_is_a_noncombat_move() -> None:
    st = Game("conquest").state_from_json(_starts()["noncombat-move"])
    assert st.to_json()["phase"] == "noncombat" and st.current_player == 0


def test_the_empty_capital_is_a_win_for_the_bot_that_takes_it() -> None:
    st = Game("conquest").state_from_json(_starts()["empty-capital"])
    for a in plan(st, "heuristic").plan:  # Red blitzes B7 -> B2 -> B3
        st.apply(a)
    st.apply(END)  # Red's non-combat move
    while not st.is_terminal:  # Blue cannot reach B3 in one turn
        st.apply(END)
    assert st.winner == 0 and st.to_json()["result"]["by"] == "capital"
