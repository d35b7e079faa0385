"""The JSON Schema of the card game's actions and observations (docs/protocol.md §6)."""

from __future__ import annotations

from ...jsonshape import array, boolean, enum, integer, map_of, nat, nullable, obj, one_of, seat
from .codec import CARDS, DECK_NAMES, ENCH_KINDS, HEROES, KW

CARD = enum(*CARDS)
REF = one_of(obj({"player": seat(), "hero": enum(True)}), obj({"player": seat(), "pos": nat(6)}),
             description="a target: a player's hero, or its minion at board index `pos`")
COUNTS = map_of(integer(1, 30), CARD, description="card -> count")

ACTION = one_of(
    obj({"type": enum("play"), "hand_index": nat(9), "card": enum(*CARDS, "secret"), "target": nullable(REF)},
        description="play the card in hand slot hand_index (the opponent sees a secret as \"secret\")"),
    obj({"type": enum("attack"),
         "attacker": one_of(obj({"pos": nat(6), "player": seat()}, optional=("player",)),
                            obj({"hero": enum(True), "player": seat()}, optional=("player",))),
         "target": REF}, description="attack with an own minion or the hero"),
    obj({"type": enum("power"), "target": nullable(REF)}, description="the hero power"),
    obj({"type": enum("end_turn")}, description="end the turn (always legal)"),
)

MINION = obj({
    "card": CARD, "eid": nat(), "atk": integer(), "hp": integer(), "max_hp": integer(),
    **{k: boolean() for k in KW}, "frozen": boolean(), "silenced": boolean(), "sick": boolean(),
    "fresh": boolean(), "attacks_used": nat(), "can_attack": boolean(),
    "ench": array(obj({"src": CARD, "kind": enum(*ENCH_KINDS.values(), "aura"), "atk": integer(),
                       "hp": integer()})),
})

PLAYER = obj({
    "hero": obj({"class": enum(*HEROES), "hp": integer(), "max_hp": nat(), "armor": nat(), "atk": nat(),
                 "frozen": boolean(), "immune": boolean(), "attacks_used": nat(), "can_attack": boolean()}),
    "weapon": nullable(obj({"card": CARD, "atk": integer(), "durability": integer(), "eid": nat()})),
    "mana": nat(), "max_mana": nat(), "overload_locked": nat(), "overload_pending": nat(),
    "power_used": boolean(), "cards_played_this_turn": nat(), "fatigue": nat(),
    "deck_list": enum(*DECK_NAMES), "hand_count": nat(10), "deck_count": nat(), "secret_count": nat(),
    "secret_eids": array(nat()),
    "hand": array(CARD, 0, 10, description="only in the observer's own entry"),
    "secrets": array(CARD, description="only in the observer's own entry"),
    "deck": COUNTS,
    "board": array(MINION, 0, 7, description="left to right"),
    "revealed": COUNTS,
}, optional=("hand", "secrets", "deck"))

OBSERVATION = obj({
    "ply": nat(), "current": seat(), "first": seat(), "terminal": boolean(), "winner": enum(0, 1, 2),
    "capped": boolean(), "ply_limit": nat(), "next_eid": nat(),
    "players": array(PLAYER, 2, 2, description="seat 1's, then seat 2's"),
    "observer": seat(),
}, description="cards: State.observation(seat).to_json()")

__all__ = ["ACTION", "OBSERVATION"]
