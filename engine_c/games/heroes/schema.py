"""The JSON Schema of heroes' actions and observations (docs/protocol.md §6), for the
protocol's schema (`maag protocol schema`). Tests validate every action and observation of
whole games against them."""

from __future__ import annotations

from ...jsonshape import array, boolean, enum, map_of, nat, obj, one_of, seat
from .codec import CARDS, DECKS, DRAWS, ITEM_BITS, MAPS

UNIT_CARDS = CARDS[:5]
ITEMS = sorted(ITEM_BITS)
SQUARE = array(nat(), 2, 2, description="[x, y], 0-based: x left to right, y top to bottom")
CARD = enum(*CARDS)
_KEYS = enum("1", "2")

ACTION = one_of(
    obj({"type": enum("deploy"), "card": enum(*UNIT_CARDS), "to": SQUARE},
        description="place a unit card on an own deploy square"),
    obj({"type": enum("equip"), "card": enum("potion", *ITEMS), "to": SQUARE},
        description="give an item or a potion to an own unit"),
    obj({"type": enum("spell"), "card": enum("inferno"), "to": SQUARE},
        description="inferno on the 3x3 square centred on `to`"),
    *(obj({"type": enum(t), "from": SQUARE, "to": SQUARE}, description=what) for t, what in (
        ("move", "move a unit"), ("attack", "attack an enemy unit or crystal"),
        ("heal", "a cleric heals or revives a friendly unit"),
        ("teleport", "a ninja swaps places with a friendly unit"))),
    obj({"type": enum("swap_card"), "card": CARD}, optional=("card",),
        description="put a card from the hand back into the deck (the opponent sees no `card`)"),
    obj({"type": enum("end_turn")}, description="end the turn (always legal)"),
)

OBSERVATION = obj({
    "turn": nat(description="player-turn counter from 1"),
    "current": seat("the player to act"),
    "ap": nat(description="action points left this turn"),
    "terminal": boolean(),
    "winner": enum(0, 1, 2, description="0 while the game goes on and for a draw"),
    "board": array(obj({
        "x": nat(), "y": nat(), "kind": enum(*UNIT_CARDS, "crystal"), "owner": seat(),
        "hp": nat(description="0: knocked out"), "max_hp": nat(), "items": array(enum(*ITEMS)),
    }), description="units and crystals sorted by (y, x)"),
    "hands": obj({"1": array(CARD), "2": array(CARD)},
                 description="sorted card names; the opponent's is always []"),
    "decks": obj({"1": map_of(nat(), CARD), "2": map_of(nat(), CARD)},
                 description="card -> count; the opponent's lists every card the observer has not seen"),
    "map": enum(*MAPS), "deck": enum(*DECKS), "draws": enum(*DRAWS),
    "ap_per_turn": nat(), "turn_limit": nat(),
    "observer": seat("the seat this observation is for"),
    "hand_sizes": map_of(nat(), _KEYS), "deck_sizes": map_of(nat(), _KEYS),
}, description="heroes: State.observation(seat).to_json()")

__all__ = ["ACTION", "OBSERVATION"]
