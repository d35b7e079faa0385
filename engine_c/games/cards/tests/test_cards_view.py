"""The text view of the card game (view.py): a position and actions in words, what `maag
replay ID --show` prints (tests/e2e/test_replay_show.py runs that command on a real match)."""

from __future__ import annotations

from cards_position import attack, minion, play, player, position, ref
from maag.engine.games.cards.view import describe, render


def test_a_position_and_actions_read_as_words() -> None:
    st = position(player(hand=["M08"], board=[minion("N24")]), p2=player("paladin", board=[minion("N01")]))
    text = render(st.to_json())
    assert "seat 1 mage" in text and "[Chillwind Yeti 4/5]" in text and "[Argent Squire 1/1 shield]" in text
    assert "Fireball (4)" in text
    js = st.to_json()
    assert describe(js, play(0, "M08", ref(2))) == "play Fireball (4) -> seat 2 hero"
    assert describe(js, attack(0, ref(2, 0))) == "attack with Chillwind Yeti -> seat 2 Argent Squire"
    assert describe(js, {"type": "end_turn"}) == "end turn"
