"""Hand-built heroes positions for the search tests, written in the conformance JSON format
(../shared/conformance/README.md) and imported through Game.state_from_json, so each is a
validated state. Coordinates are 0-based; map a is

      x=0 1 2 3 4 5 6 7 8
y=0     d . . . S . . . D        d/D deploy squares of P1/P2, S defense, A assault,
y=1     . . c . . . C . .        P power, c/C crystals of P1/P2
y=2     . . P . . . P . .
y=3     . c . . . . . C .
y=4     d . . . A . . . D
"""

from __future__ import annotations

from typing import Any

from maag.engine import Game, State

GAME = Game("heroes", {"map": "a", "draws": "seeded"})
BASE_HP = {"knight": 1000, "archer": 800, "cleric": 800, "wizard": 800, "ninja": 800, "crystal": 4500}


def unit(owner: int, kind: str, x: int, y: int, hp: int | None = None) -> dict[str, Any]:
    """A board entry without items; hp defaults to full."""
    return {"x": x, "y": y, "kind": kind, "owner": owner, "hp": BASE_HP[kind] if hp is None else hp,
            "items": []}


def position(*units: dict[str, Any], hands: dict[int, list[str]], decks: dict[int, dict[str, int]],
             ap: int = 5, turn: int = 7) -> State:
    """P1 (odd turn) or P2 (even turn) to move with `ap` action points."""
    obj = {
        "turn": turn, "current": 1 if turn % 2 else 2, "ap": ap, "terminal": False, "winner": 0,
        "board": sorted(units, key=lambda u: (u["y"], u["x"])),
        "hands": {str(p): sorted(hands[p]) for p in (1, 2)},
        "decks": {str(p): decks[p] for p in (1, 2)},
        "deck_seed": {"1": 17, "2": 42},
        "map": "a", "draws": "seeded",
    }
    return GAME.state_from_json(obj, rng_seed=1)


P2_ITEMS_ONLY = {"hand": ["potion", "runemetal", "scroll", "dragonscale", "shining_helmet", "inferno"],
                 "deck": {"runemetal": 2, "dragonscale": 2, "shining_helmet": 2, "potion": 1}}


def lethal_strike() -> State:
    """P2's last crystal (6,1) has 850 hp; P1's archer at (3,1) has it in range (3, line of
    sight over the empty (4,1) and (5,1)) and kills it with three hits of 300: a win in
    three of the five actions. A deploy (+1175 on the heuristic) looks better than any
    single hit, and no other P1 unit reaches the crystal this turn."""
    return position(
        unit(1, "crystal", 2, 1), unit(1, "crystal", 1, 3),
        unit(1, "archer", 3, 1), unit(1, "knight", 0, 3),
        unit(2, "crystal", 6, 1, hp=850),
        unit(2, "knight", 7, 2), unit(2, "wizard", 5, 3, hp=500),
        hands={1: ["knight", "dragonscale"], 2: ["archer", "cleric", "potion"]},
        decks={1: {"cleric": 2, "runemetal": 1}, 2: {"wizard": 1, "knight": 1}},
    )


def revive_then_attack() -> State:
    """The paper's Figure 2 idea: P2's last crystal (7,3) has 600 hp; P1's archer at (5,3) is
    knocked out. The cleric at (4,2) revives it (heal range 2; 400 hp), then the archer
    hits twice from range 2 (300 each, line of sight over the empty (6,3)): a win in three
    actions. The cleric cannot reach the crystal itself: its only square in range, the
    power square (6,2), holds a P2 knight."""
    return position(
        unit(1, "crystal", 2, 1), unit(1, "crystal", 1, 3),
        unit(1, "cleric", 4, 2), unit(1, "archer", 5, 3, hp=0), unit(1, "knight", 1, 0),
        unit(2, "crystal", 7, 3, hp=600),
        unit(2, "knight", 6, 2), unit(2, "archer", 7, 0, hp=300),
        hands={1: ["knight", "wizard", "shining_helmet"], 2: ["cleric", "wizard"]},
        decks={1: {"runemetal": 1}, 2: {"knight": 1}},
    )


def stomp() -> State:
    """P2 has no unit card in hand or deck and one unit on the board, a knocked-out knight
    at (5,2). P1's knight at (3,2) moves onto it (a stomp), which removes it for good: at
    the end of P1's turn P2 has no units and loses."""
    return position(
        unit(1, "crystal", 2, 1), unit(1, "crystal", 1, 3),
        unit(1, "knight", 3, 2), unit(1, "archer", 0, 1, hp=500),
        unit(2, "crystal", 6, 1), unit(2, "crystal", 7, 3),
        unit(2, "knight", 5, 2, hp=0),
        hands={1: ["cleric", "runemetal"], 2: P2_ITEMS_ONLY["hand"]},
        decks={1: {"wizard": 1}, 2: P2_ITEMS_ONLY["deck"]},
    )


TACTICS = {"lethal-strike": lethal_strike, "revive-then-attack": revive_then_attack, "stomp": stomp}
