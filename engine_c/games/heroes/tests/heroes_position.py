"""Build heroes positions from a compact description, and small helpers for rule tests.

    s = pos("1 wizard 2,2", "2 knight 4,2 hp=700 scroll helm", hands={1: ["inferno"]})

Each unit is "OWNER KIND X,Y [hp=N] [ITEM ...]" (items: dragonscale, runemetal, scroll,
shining_helmet or helm). The map's crystals (4500 hp) are added unless a unit names their
square (e.g. "2 crystal 6,1 hp=300") or `without` lists it. Decks default to the rest of
the deck composition (minus the hand and the player's units on the board). The state is
imported through the conformance JSON format, so every position is a validated state.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from maag.engine import Game, IllegalActionError, State

CARDS = ["knight", "archer", "cleric", "wizard", "ninja", "inferno", "potion", "runemetal", "scroll",
         "dragonscale", "shining_helmet"]
UNIT_CARDS = CARDS[:5]
DECKS = {
    "standard": [3, 3, 3, 3, 1, 2, 2, 3, 2, 3, 3],
    "small": [2, 2, 2, 2, 1, 1, 1, 2, 1, 2, 2],
    "tiny": [1] * 11,
}
MAP_DECK = {"a": "standard", "a-small": "small", "a-tiny": "tiny"}
MAP_SIZE = {"a": (9, 5), "a-small": (7, 4), "a-tiny": (5, 3)}
CRYSTALS = {
    "a": {(2, 1): 1, (1, 3): 1, (6, 1): 2, (7, 3): 2},
    "a-small": {(2, 1): 1, (1, 2): 1, (4, 1): 2, (5, 2): 2},
    "a-tiny": {(0, 1): 1, (4, 1): 2},
}
BASE_HP = {"knight": 1000, "archer": 800, "cleric": 800, "wizard": 800, "ninja": 800, "crystal": 4500}
ITEM_ALIASES = {"helm": "shining_helmet", "shining_helmet": "shining_helmet", "dragonscale": "dragonscale",
                "runemetal": "runemetal", "scroll": "scroll"}

Square = tuple[int, int]

_GAMES: dict[tuple[str, str], Game] = {}


def game(map_name: str = "a", draws: str = "seeded") -> Game:
    key = (map_name, draws)
    if key not in _GAMES:
        _GAMES[key] = Game("heroes", {"map": map_name, "draws": draws})
    return _GAMES[key]


def parse_unit(spec: str) -> dict[str, Any]:
    """'2 knight 4,2 hp=700 scroll' -> a board entry of the JSON state format."""
    owner, kind, square, *rest = spec.split()
    x, y = (int(v) for v in square.split(","))
    hp = None
    items = []
    for word in rest:
        if word.startswith("hp="):
            hp = int(word[3:])
        else:
            items.append(ITEM_ALIASES[word])
    if hp is None:
        hp = max_hp(kind, items)
    return {"x": x, "y": y, "kind": kind, "owner": int(owner), "hp": hp, "items": sorted(items)}


def max_hp(kind: str, items: list[str] | tuple[str, ...] = ()) -> int:
    base = BASE_HP[kind]
    return base + sum(base // 10 for i in items if i in ("dragonscale", "shining_helmet"))


def state_json(*units: str, map: str = "a", current: int = 1, ap: int = 5, turn: int | None = None,
               hands: dict[int, list[str]] | None = None, decks: dict[int, dict[str, int]] | None = None,
               seeds: tuple[int, int] = (0, 0), without: tuple[Square, ...] = (), draws: str = "seeded",
               turn_limit: int = 100) -> dict[str, Any]:
    """The JSON form of a position (see the module docstring)."""
    board = {(u["x"], u["y"]): u for u in map_units(units)}
    for (x, y), owner in CRYSTALS[map].items():
        if (x, y) not in board and (x, y) not in without:
            board[(x, y)] = {"x": x, "y": y, "kind": "crystal", "owner": owner, "hp": 4500, "items": []}
    hands = {p: list((hands or {}).get(p, [])) for p in (1, 2)}
    full = dict(zip(CARDS, DECKS[MAP_DECK[map]], strict=True))
    out_decks: dict[str, dict[str, int]] = {}
    for p in (1, 2):
        if decks is not None and p in decks:
            out_decks[str(p)] = {c: n for c, n in decks[p].items() if n}
            continue
        used = Counter(hands[p]) + Counter(u["kind"] for u in board.values()
                                           if u["owner"] == p and u["kind"] != "crystal")
        out_decks[str(p)] = {c: full[c] - used[c] for c in CARDS if full[c] - used[c] > 0}
    if turn is None:
        turn = 3 if current == 1 else 2
    return {
        "turn": turn, "current": current, "ap": ap, "terminal": False, "winner": 0,
        "board": sorted(board.values(), key=lambda u: (u["y"], u["x"])),
        "hands": {str(p): sorted(hands[p]) for p in (1, 2)},
        "decks": out_decks,
        "deck_seed": {"1": seeds[0], "2": seeds[1]},
        "map": map, "deck": MAP_DECK[map], "draws": draws, "ap_per_turn": 5, "turn_limit": turn_limit,
    }


def map_units(units: tuple[str, ...]) -> list[dict[str, Any]]:
    return [parse_unit(u) for u in units]


def pos(*units: str, **kw: Any) -> State:
    """A validated state from a compact description (see state_json for the keywords)."""
    obj = state_json(*units, **kw)
    return game(obj["map"], obj["draws"]).state_from_json(obj, rng_seed=1)


# ---- actions -------------------------------------------------------------------------------------

END: dict[str, Any] = {"type": "end_turn"}


def move(f: Square, t: Square) -> dict[str, Any]:
    return {"type": "move", "from": list(f), "to": list(t)}


def attack(f: Square, t: Square) -> dict[str, Any]:
    return {"type": "attack", "from": list(f), "to": list(t)}


def heal(f: Square, t: Square) -> dict[str, Any]:
    return {"type": "heal", "from": list(f), "to": list(t)}


def teleport(f: Square, t: Square) -> dict[str, Any]:
    return {"type": "teleport", "from": list(f), "to": list(t)}


def deploy(card: str, t: Square) -> dict[str, Any]:
    return {"type": "deploy", "card": card, "to": list(t)}


def equip(card: str, t: Square) -> dict[str, Any]:
    return {"type": "equip", "card": card, "to": list(t)}


def spell(t: Square) -> dict[str, Any]:
    return {"type": "spell", "card": "inferno", "to": list(t)}


def swap(card: str) -> dict[str, Any]:
    return {"type": "swap_card", "card": card}


# ---- queries and assertions ----------------------------------------------------------------------

def at(s: State, sq: Square) -> dict[str, Any] | None:
    """The board entry on a square, or None."""
    for u in s.to_json()["board"]:
        if (u["x"], u["y"]) == tuple(sq):
            return u  # type: ignore[no-any-return]
    return None


def hp(s: State, sq: Square) -> int | None:
    u = at(s, sq)
    return None if u is None else int(u["hp"])


def legal(s: State) -> list[dict[str, Any]]:
    return [a.to_dict() for a in s.legal_actions()]


def play(s: State, action: dict[str, Any]) -> None:
    """Apply an action after checking that the enumeration lists it and check accepts it;
    every applied non-end_turn action costs exactly 1 AP."""
    code = s.game.action(action).code
    assert code in s.legal_codes(), f"{action} not in the legal list {legal(s)}"
    assert s.is_legal(code)
    ap = s.to_json()["ap"]
    s.apply(action)
    if action["type"] != "end_turn" and not s.is_terminal:
        assert s.to_json()["ap"] == ap - 1


def assert_illegal(s: State, action: dict[str, Any] | int, exc: type[Exception] = IllegalActionError,
                   match: str | None = None) -> None:
    """The action is refused with `exc`, is not in the legal list, and the state (bytes) is
    unchanged."""
    code = action if isinstance(action, int) else s.game.action(action).code
    before = s.to_bytes()
    assert code not in s.legal_codes()
    assert not s.is_legal(code)
    with pytest.raises(exc, match=match):
        s.apply(action)
    assert s.to_bytes() == before


def hand(s: State, player: int) -> Counter[str]:
    return Counter(s.to_json()["hands"][str(player)])


def deck(s: State, player: int) -> Counter[str]:
    return Counter(s.to_json()["decks"][str(player)])
