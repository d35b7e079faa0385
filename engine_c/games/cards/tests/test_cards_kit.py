"""The card game's bot-kit situations: each start is what its description says, for fixed
and random decks and either first seat (the whole kit runs against a bot process in
tests/e2e/test_every_game_e2e.py)."""

from __future__ import annotations

from typing import Any

import pytest
from maag.engine import Game, State
from maag.engine.games.cards.kit import situations

CONFIGS = [{}, {"deck1": "random", "deck2": "X"}, {"first": 2}, {"deck1": "P", "deck2": "M", "first": 1}]


def starts(config: dict[str, Any], seed: int) -> dict[str, State]:
    game = Game("cards", config)
    return {s.name: game.state_from_json(s.start) for s in situations(config, seed) if s.start is not None}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", [1, 7])
def test_every_situation_is_what_it_says(config: dict[str, Any], seed: int) -> None:
    st = starts(config, seed)
    assert set(st) == {"opening-seat1", "opening-seat2", "only-end-turn", "lethal", "hidden-secret",
                       "full-hand", "random-missiles"}
    assert [a.to_dict() for a in st["only-end-turn"].legal_actions()] == [{"type": "end_turn"}]

    wins = []
    for a in st["lethal"].legal_actions():
        s = st["lethal"].clone()
        s.apply(a)
        if s.is_terminal and s.winner == 0:
            wins.append(a.to_dict()["type"])
    assert "attack" in wins and not st["lethal"].is_terminal

    s = st["hidden-secret"].clone()
    attack = next(a for a in s.legal_actions()
                  if a.to_dict()["type"] == "attack" and (a.to_dict()["target"] or {}).get("hero"))
    s.apply(attack)
    foe = s.to_json()["players"][1]
    # The Defender (2/1) took the blow for the hero and died; the secret is spent and shown.
    assert foe["secrets"] == [] and foe["revealed"].get("P03") == 1 and foe["hero"]["hp"] == 12
    assert [m["card"] for m in s.to_json()["players"][0]["board"]] == ["N09"]  # 2 damage killed a Raptor

    s = st["full-hand"].clone()
    me = s.to_json()["players"][0]
    assert len(me["hand"]) == 10 and me["hand"][0] not in me["revealed"]
    s.apply({"type": "end_turn"})
    s.apply({"type": "end_turn"})  # seat 2 ends at once; seat 1 draws into a full hand
    after = s.to_json()["players"][0]
    assert len(after["hand"]) == 10 and after["deck_count"] == me["deck_count"] - 1
    assert sum(after["revealed"].values()) == sum(me["revealed"].values()) + 1  # burned, shown to both


def test_the_missiles_land_where_chance_says() -> None:
    start = starts({}, 3)["random-missiles"]
    play = next(a for a in start.legal_actions() if a.to_dict().get("card") == "M01")
    boards = set()
    for seed in range(30):
        s = start.clone()
        s.seed_rng(seed)
        s.apply(play)
        j = s.to_json()
        boards.add((j["players"][1]["hero"]["hp"], tuple(m["card"] for m in j["players"][1]["board"])))
    assert len(boards) > 3  # three hits among the hero and three 1-health minions
