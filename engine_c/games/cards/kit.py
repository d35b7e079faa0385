"""The card game's situations for the bot kit (`maag bot check --game cards`). Each one puts
a bot before something the card game does and heroes does not: chance in the middle of a
turn (a draw, random missiles), a hidden secret that changes what its attack does, a full
hand that burns a drawn card, The Coin, a win that ends the game in the middle of its turn.
Each start is built from the configuration's opening deal (whatever its decks), edited the
way a player could meet it, and checked by the engine before it is offered."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ...game import Game
from ...registry import Situation

Edit = Callable[[dict[str, Any]], None]


def situations(config: dict[str, Any], seed: int) -> list[Situation]:
    game = Game("cards", config)
    base = game.new_state(seed).to_json()
    out = [Situation(f"opening-seat{s}", f"four turns each from the opening deal, as seat {s}"
                     + (" (first to play)" if base["first"] == s else " (second, with The Coin)"), s,
                     dict(base, ply_limit=8))
           for s in (1, 2)]
    made: list[tuple[str, str, Edit, Callable[[Mapping[str, Any]], str] | None]] = [
        ("only-end-turn", "no mana, the hero power used, nothing on the board: only end_turn is legal",
         _only_end_turn, None),
        ("lethal", "the enemy hero has 1 health and the bot a minion ready to attack and 2 mana: "
         "the game ends in the middle of its turn", _lethal, _found_win),
        ("hidden-secret", "the enemy has a secret the bot cannot see (Noble Sacrifice): attacking "
         "summons a Defender that takes the blow, and the rest of a planned turn may no longer fit",
         _hidden_secret, None),
        ("full-hand", "ten cards in hand at the start of the bot's turns: each draw burns a card, shown "
         "to both", _full_hand, None),
        ("random-missiles", "Arcane Missiles in hand (three random hits) before a board of small "
         "minions: what the bot planned after it may have become illegal", _random_missiles, None),
    ]
    return out + [Situation(name, what, 1, _edited(game, base, edit), check)
                  for name, what, edit, check in made]


def _edited(game: Game, base: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """`base` with seat 1 to move after `edit`, for four turns each. The engine checks the
    result: every edit fits any deal, so a refusal is a bug of this file."""
    st = json.loads(json.dumps(base))
    st["current"] = 1
    st["ply_limit"] = st["ply"] + 7
    edit(st)
    game.state_from_json(st)
    return st


def _minion(card: str, eid: int) -> dict[str, Any]:
    """A minion without keywords at full health, on the board since its controller's last turn."""
    from .pool import POOL

    hp = {c.id: c.hp for c in POOL}[card]
    return {"card": card, "eid": eid, "hp": hp, "attacks_used": 0}


def _only_end_turn(st: dict[str, Any]) -> None:
    me = st["players"][0]
    me.update(mana=0, power_used=True)
    if "T_COIN" in me["hand"]:  # the one card that costs nothing
        me["hand"].remove("T_COIN")


def _lethal(st: dict[str, Any]) -> None:
    me, foe = st["players"]
    me.update(mana=2, max_mana=2)
    me["board"] = [_minion("N09", 3)]  # Bloodfen Raptor, 3 attack
    foe["hero"]["hp"] = 1
    st["next_eid"] = 4


def _hidden_secret(st: dict[str, Any]) -> None:
    me, foe = st["players"]
    me.update(mana=3, max_mana=3)
    me["board"] = [_minion("N09", 3), _minion("N09", 4)]
    foe["secrets"], foe["secret_eids"] = ["P03"], [5]
    foe["hero"]["hp"] = 12
    st["next_eid"] = 6


def _full_hand(st: dict[str, Any]) -> None:
    for p in st["players"]:
        while len(p["hand"]) < 10 and p["deck"]:
            p["hand"].append(p["deck"].pop(0))
        p["hand_count"], p["deck_count"] = len(p["hand"]), len(p["deck"])
    st["players"][0].update(mana=3, max_mana=3)


def _random_missiles(st: dict[str, Any]) -> None:
    me, foe = st["players"]
    me.update(mana=4, max_mana=4)
    me["hand"] = (["M01"] + me["hand"])[:10]
    foe["board"] = [_minion("N03", 3), _minion("N12", 4), _minion("N14", 5)]  # 1 health each
    st["next_eid"] = 6


def _found_win(outcome: Mapping[str, Any]) -> str:
    if outcome["winner"] == outcome["seat"] and outcome["reason"] == "rules" and outcome["prompts"] == 1:
        return "found the winning blow at once"
    return "did not win in its first turn"
