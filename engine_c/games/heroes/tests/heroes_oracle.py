"""Plain-Python transcriptions of spec/heroes.md formulas, used as oracles for the C core:
seeded draws and opening deals (§4), the heuristic (§14), action ratings (§16.1) and the
pruner (§15). They work on the JSON state format and the action dicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from heroes_position import CARDS, DECKS, MAP_DECK

MAP_ROWS = {
    "a": ["d000S000D", "00c000C00", "00P000P00", "0c00000C0", "d000A000D"],
    "a-small": ["d00S00D", "00c0C00", "0c0P0C0", "d00A00D"],
    "a-tiny": ["d0S0P", "c0A0C", "P0S0D"],
}
CLASS_POWER = {"knight": 200, "archer": 300, "cleric": 200, "wizard": 200, "ninja": 200, "crystal": 0}
BASE_HP = {"knight": 1000, "archer": 800, "cleric": 800, "wizard": 800, "ninja": 800, "crystal": 4500}
SQ_VALUE = {  # §14.2: ASSAULT, DEFENSE, POWER
    "archer": (40, 80, 120), "wizard": (40, 70, 100), "cleric": (10, 20, 40), "knight": (120, 30, 30),
    "ninja": (50, 60, 70), "crystal": (0, 0, 0),
}
EQ_VALUE = {  # §14.2: dragonscale, runemetal, shining_helmet, scroll
    "archer": (60, 60, 40, 80), "cleric": (30, 20, 20, 30), "knight": (60, -30, 20, -10),
    "ninja": (30, 20, 30, 70), "wizard": (50, 60, 40, 80), "crystal": (0, 0, 0, 0),
}
ITEMS = ["dragonscale", "runemetal", "shining_helmet", "scroll"]


def square(map_name: str, x: int, y: int) -> str:
    """Square type letter: d/D deploy, S defense, A assault, P power, anything else NONE."""
    c = MAP_ROWS[map_name][y][x]
    return c if c in "dDSAP" else "0"


# ---- draws (§4.3, §4.2) --------------------------------------------------------------------------

def next_seed(seed: int) -> int:
    return seed // 10 if seed > 100000 else (13 * seed) // 10 + 7


def draw_one(deck: list[int], seed: int) -> tuple[int, int]:
    """(card index, new seed) of one seeded draw from a deck of counts; the card is removed."""
    seed = next_seed(seed)
    r = seed % sum(deck)
    for c, n in enumerate(deck):
        if r < n:
            deck[c] -= 1
            return c, seed
        r -= n
    raise AssertionError("unreachable")


def draw_up(deck: list[int], hand: list[int], seed: int) -> int:
    while sum(deck) > 0 and sum(hand) < 6:
        c, seed = draw_one(deck, seed)
        hand[c] += 1
    return seed


def opening_deal(deck_kind: str, seed: int) -> tuple[list[int], int, int]:
    """(hand counts, deck seed afterwards, number of deals) for a full deck and empty hand."""
    deck = list(DECKS[deck_kind])
    hand = [0] * 11
    deals = 0
    while not (sum(hand) == 6 and sum(hand[:5]) == 3):
        deck = [d + h for d, h in zip(deck, hand, strict=True)]
        hand = [0] * 11
        seed = draw_up(deck, hand, seed)
        deals += 1
    return hand, seed, deals


# ---- heuristic (§14) -----------------------------------------------------------------------------

def _unit_value(map_name: str, u: dict[str, Any]) -> int:
    up = u["hp"] > 0
    kind = u["kind"]
    sq = square(map_name, u["x"], u["y"])
    table = {"A": SQ_VALUE[kind][0], "S": SQ_VALUE[kind][1], "P": SQ_VALUE[kind][2], "d": -75, "D": -75}
    sqv = table.get(sq, 0)
    eq = sum(EQ_VALUE[kind][ITEMS.index(i)] for i in u["items"])
    return int(u["hp"] + BASE_HP[kind] * (2 if up else 1) + (sqv if up else 0) + eq * (2 if up else 1))


def evaluate(st: dict[str, Any], player: int) -> float:
    """HeuristicEvaluator with winVal = false for player 0 (P1) or 1 (P2)."""
    if st["terminal"]:
        w = st["winner"]  # JSON: 1, 2, or 0 for a draw
        return 0.0 if w == 0 else (60000.0 if w == player + 1 else -60000.0)
    b = {1: 0, 2: 0}
    inf = {1: 0, 2: 0}
    for u in st["board"]:
        b[u["owner"]] += _unit_value(st["map"], u)
    for p in (1, 2):
        cards = Counter(st["hands"][str(p)]) + Counter(st["decks"][str(p)])
        b[p] += sum(cards[c] * (1750 if c == "knight" else 1400) for c in CARDS[:5])
        inf[p] = 750 * cards["inferno"]
    if player == 0:
        return float((b[1] + inf[1]) - (b[2] + inf[2]))
    return float((b[2] + inf[1]) - (b[1] + inf[2]))


# ---- ratings (§16.1) -----------------------------------------------------------------------------

def _board(st: dict[str, Any]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(u["x"], u["y"]): u for u in st["board"]}


def power(st: dict[str, Any], u: dict[str, Any], x: int, y: int) -> int:
    p = CLASS_POWER[u["kind"]]
    if "runemetal" in u["items"]:
        p += p // 2
    if square(st["map"], x, y) == "P":
        p += 100
    if "scroll" in u["items"]:
        p *= 3
    return p


def spell_targets(st: dict[str, Any], tx: int, ty: int) -> frozenset[tuple[int, int]]:
    board = _board(st)
    return frozenset((x, y) for x in range(tx - 1, tx + 2) for y in range(ty - 1, ty + 2)
                     if (x, y) in board and board[(x, y)]["owner"] != st["current"])


def rate(st: dict[str, Any], a: dict[str, Any]) -> int:
    """ComplexActionComparator value, with the reference's labels: a cleric's move onto a
    knocked-out unit within 2 is labelled HEAL (§8.1)."""
    t = a["type"]
    board = _board(st)
    if t == "end_turn":
        return 10000 if st["ap"] == 0 else 0
    if t in ("swap_card", "teleport"):
        return 0
    if t == "deploy":
        return 200
    tx, ty = a["to"]
    v = board.get((tx, ty))
    if t == "spell":
        targets = spell_targets(st, tx, ty)
        return -500 + sum(2 * board[q]["max_hp"] if board[q]["hp"] == 0 else 300 for q in targets)
    assert v is not None or t == "move"
    if t == "equip":
        assert v is not None
        if a["card"] == "potion":
            return int(v["max_hp"] + 200 * len(v["items"]) if v["hp"] == 0 else v["max_hp"] - v["hp"] - 300)
        return power(st, v, tx, ty) * (v["hp"] // v["max_hp"])
    fx, fy = a["from"]
    u = board[(fx, fy)]
    d = abs(fx - tx) + abs(fy - ty)
    if t == "move" and v is not None and u["kind"] == "cleric" and d <= 2:
        t = "heal"  # the reference's label
    if t == "attack":
        return power(st, u, fx, fy) + (200 if u["kind"] == "wizard" else 0)
    if t == "heal":
        assert v is not None
        return 1400 if v["hp"] == 0 else int(v["max_hp"] - v["hp"])
    if v is not None:
        return 2 * int(v["max_hp"])
    return 0 if square(st["map"], tx, ty) == "0" else 30


# ---- pruner (§15) --------------------------------------------------------------------------------

def prune(st: dict[str, Any], actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ActionPruner, keeping the last inferno (in list order) among equal maximal target sets."""
    hand = Counter(st["hands"][str(st["current"])])
    pruned: set[int] = set()
    infernos: dict[int, frozenset[tuple[int, int]]] = {}
    for i, a in enumerate(actions):
        if a["type"] == "spell":
            infernos[i] = spell_targets(st, *a["to"])
        if a["type"] == "swap_card" and hand[a["card"]] == 1:
            pruned.add(i)
    pruned |= {i for i, tg in infernos.items() if not tg}
    for i, tg in infernos.items():
        if i not in pruned and any(j != i and j not in pruned and tg <= tj for j, tj in infernos.items()):
            pruned.add(i)
    return [a for i, a in enumerate(actions) if i not in pruned]


def full_deck(map_name: str) -> Counter[str]:
    return Counter(dict(zip(CARDS, DECKS[MAP_DECK[map_name]], strict=True)))
