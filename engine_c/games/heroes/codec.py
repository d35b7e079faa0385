"""Heroes' Python codec: configuration, the readable action form, the reading of a JSON state
(the format of ../shared/conformance/README.md), and what an opponent sees. No rules here:
those are in C, and so is the only writer of a state's JSON form (heroes_wire.c, decoded by
`State.to_json`)."""

from __future__ import annotations

from typing import Any

from ..._lowlevel import StateError, ffi, lib
from ...registry import GameOption

CARDS = ["knight", "archer", "cleric", "wizard", "ninja", "inferno", "potion", "runemetal", "scroll",
         "dragonscale", "shining_helmet"]
KINDS = CARDS[:5] + ["", "", "", "", "", "", "crystal"]  # board kinds by index (11 = crystal)
CRYSTAL = 11
MAPS = ["a", "a-small", "a-tiny"]
DECKS = ["standard", "small", "tiny"]
DRAWS = ["seeded", "random"]
MAP_DECK = {"a": "standard", "a-small": "small", "a-tiny": "tiny"}
ITEM_BITS = {"dragonscale": 1, "runemetal": 2, "shining_helmet": 4, "scroll": 8}
ACTION_TYPES = ["end_turn", "deploy", "equip", "spell", "move", "attack", "heal", "teleport",
                "swap_card"]
CARD_TYPES = {"deploy", "equip", "spell"}
UNIT_TYPES = {"move", "attack", "heal", "teleport"}


OPTIONS = (
    GameOption("map", str, "a", "the board: a (9x5), a-small (7x4) or a-tiny (5x3)", tuple(MAPS)),
    GameOption("deck", str, None, "the deck (default: the map's own)", tuple(DECKS)),
    GameOption("ap", int, 5, "action points per turn, 1..25"),
    GameOption("start_ap", int, None, "action points of the first turn (default 3 for ap 5, else "
               "max(1, ap-1))"),
    GameOption("turn_limit", int, None, "a draw after this many turns (default 100 for ap 5, else "
               "100*max(1, 6-ap))"),
    GameOption("draws", str, "random", "random: true random draws; seeded: the reference's deterministic "
               "rule", tuple(DRAWS)),
)


def make_config(options: dict[str, Any]) -> dict[str, Any]:
    """Complete a heroes config with its defaults and check names (ranges are checked in C).

    Keys: map (a, a-small, a-tiny), deck (standard, small, tiny; default: the map's own),
    ap (1..25, default 5), start_ap (default 3 for ap 5, else max(1, ap-1), as the
    reference), turn_limit (default 100 for ap 5, else 100*max(1, 6-ap)), draws (seeded:
    the reference's deterministic rule; random: true random draws, the default)."""
    unknown = set(options) - {o.name for o in OPTIONS}
    if unknown:
        raise ValueError(f"unknown heroes option(s): {', '.join(sorted(unknown))}")
    cfg = dict(options)
    cfg.setdefault("map", "a")
    if cfg["map"] not in MAPS:
        raise ValueError(f"map must be one of {', '.join(MAPS)}, not {cfg['map']!r}")
    cfg.setdefault("deck", MAP_DECK[cfg["map"]])
    if cfg["deck"] not in DECKS:
        raise ValueError(f"deck must be one of {', '.join(DECKS)}, not {cfg['deck']!r}")
    cfg.setdefault("draws", "random")
    if cfg["draws"] not in DRAWS:
        raise ValueError(f"draws must be one of {', '.join(DRAWS)}, not {cfg['draws']!r}")
    ap = int(cfg.setdefault("ap", 5))
    cfg.setdefault("start_ap", 3 if ap == 5 else max(1, ap - 1))
    cfg.setdefault("turn_limit", 100 if ap == 5 else 100 * max(1, 6 - ap))
    for key in ("ap", "start_ap", "turn_limit"):
        if isinstance(cfg[key], bool) or not isinstance(cfg[key], int):
            raise ValueError(f"{key} must be an integer")
    return cfg


def fill_config(cfg: dict[str, Any], out: Any) -> None:
    c = ffi.cast("hr_config *", out)
    c.map = MAPS.index(cfg["map"])
    c.deck = DECKS.index(cfg["deck"])
    c.ap = cfg["ap"]
    c.start_ap = cfg["start_ap"]
    c.turn_limit = cfg["turn_limit"]
    c.draws = DRAWS.index(cfg["draws"])


# ---- actions -------------------------------------------------------------------------------

def _pack(t: int, card: int = 0, fx: int = 0, fy: int = 0, tx: int = 0, ty: int = 0) -> int:
    return t | card << 4 | fx << 8 | fy << 12 | tx << 16 | ty << 20


def action_to_dict(code: int) -> dict[str, Any]:
    t = ACTION_TYPES[code & 0xF] if (code & 0xF) < len(ACTION_TYPES) else "?"
    card, fx, fy, tx, ty = (code >> 4) & 0xF, (code >> 8) & 0xF, (code >> 12) & 0xF, (code >> 16) & 0xF, (
        code >> 20) & 0xF
    if t in CARD_TYPES:
        return {"type": t, "card": CARDS[card], "to": [tx, ty]}
    if t in UNIT_TYPES:
        return {"type": t, "from": [fx, fy], "to": [tx, ty]}
    if t == "swap_card":
        return {"type": t, "card": CARDS[card]}
    return {"type": t}


def _square(d: dict[str, Any], key: str) -> tuple[int, int]:
    if key not in d:
        raise ValueError(f"missing field {key!r} (a square [x, y])")
    v = d[key]
    if (not isinstance(v, (list, tuple)) or len(v) != 2
            or not all(isinstance(c, int) and not isinstance(c, bool) for c in v)):
        raise ValueError(f"action field {key!r} must be a pair of integers [x, y]")
    x, y = v
    if not (0 <= x < 16 and 0 <= y < 16):
        raise ValueError(f"action field {key!r} is off any board: {[x, y]}")
    return x, y


def _card(d: dict[str, Any]) -> int:
    if "card" not in d:
        raise ValueError("missing field 'card'")
    c = d["card"]
    if c not in CARDS:
        raise ValueError(f"action field 'card' must be one of {', '.join(CARDS)}, not {c!r}")
    return CARDS.index(c)


def action_from_dict(d: dict[str, Any]) -> int:
    """The integer code of a readable action; ValueError naming the bad field."""
    if not isinstance(d, dict):
        raise ValueError("an action must be a map with a 'type' field")
    t = d.get("type")
    if t not in ACTION_TYPES:
        raise ValueError(f"action type must be one of {', '.join(ACTION_TYPES)}, not {t!r}")
    allowed = {"type", "engine_label"} | ({"card", "to"} if t in CARD_TYPES else {"from", "to"}
                                           if t in UNIT_TYPES else {"card"} if t == "swap_card" else set())
    extra = set(d) - allowed
    if extra:
        raise ValueError(f"unexpected field(s) for a {t} action: {', '.join(sorted(extra))}")
    ti = ACTION_TYPES.index(t)
    if t in CARD_TYPES:
        return _pack(ti, _card(d), 0, 0, *_square(d, "to"))
    if t in UNIT_TYPES:
        return _pack(ti, 0, *_square(d, "from"), *_square(d, "to"))
    if t == "swap_card":
        return _pack(ti, _card(d))
    return 0


# ---- the board to draw, and JSON states read (heroes_wire.c writes them) -------------------

SQUARE_KINDS = ["", "deploy1", "deploy2", "defense", "assault", "power"]  # HR_SQ_* (mg_heroes.h)


def layout(cfg: dict[str, Any]) -> dict[str, Any]:
    """The configuration's board for drawing: its size and its special squares (deploy
    squares of seat 1 and 2, defense, assault and power squares; the crystals are units of
    the state), read from the C map table."""
    m = lib.hr_maps[MAPS.index(cfg["map"])]
    squares = [{"x": x, "y": y, "kind": SQUARE_KINDS[m.sq[x * m.h + y]]}
               for y in range(m.h) for x in range(m.w) if m.sq[x * m.h + y]]
    return {"width": m.w, "height": m.h, "squares": squares}


def _int(obj: dict[str, Any], key: str, lo: int, hi: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise StateError(lib.MG_ERR_STATE, f"state field {key!r} must be an integer in {lo}..{hi}, not {v!r}")
    return v


def _fail(msg: str) -> StateError:
    return StateError(lib.MG_ERR_STATE, msg)


def state_from_json(obj: dict[str, Any], cfg: dict[str, Any], out: Any) -> None:
    """Fill `out` (a zeroed hr_state) from the JSON form, validating every field; the C side
    then checks the whole (hr_finish_import). Keys map/deck/draws/ap_per_turn/turn_limit in
    `obj` override `cfg`. With `observer` it is an observation (as `State.to_json` gives
    one). Raises StateError naming the field."""
    if not isinstance(obj, dict):
        raise _fail("a state must be a JSON object")
    s = ffi.cast("hr_state *", out)
    mp = obj.get("map", cfg["map"])
    deck = obj.get("deck", obj.get("deck_size", cfg["deck"]))
    draws = obj.get("draws", cfg["draws"])
    if mp not in MAPS or deck not in DECKS or draws not in DRAWS:
        raise _fail(f"unknown map {mp!r}, deck {deck!r} or draws {draws!r}")
    s.map, s.deck_kind, s.draws = MAPS.index(mp), DECKS.index(deck), DRAWS.index(draws)
    dims = {"a": (9, 5), "a-small": (7, 4), "a-tiny": (5, 3)}[mp]
    s.w, s.h = dims
    s.turn = _int(obj, "turn", 1, 30000)
    s.current = _int(obj, "current", 1, 2) - 1
    s.ap = _int(obj, "ap", 0, 25)
    s.ap_per_turn = _int(obj, "ap_per_turn", 1, 25) if "ap_per_turn" in obj else cfg["ap"]
    s.turn_limit = _int(obj, "turn_limit", 1, 30000) if "turn_limit" in obj else cfg["turn_limit"]
    term = obj.get("terminal")
    if not isinstance(term, bool):
        raise _fail("state field 'terminal' must be true or false")
    s.terminal = term
    winner = _int(obj, "winner", 0, 2)
    s.winner = (winner - 1) if term else -1
    observer = obj.get("observer")
    if observer is not None and observer not in (1, 2):
        raise _fail("state field 'observer' must be 1 or 2 when present")
    s.observer = observer - 1 if observer else -1
    board = obj.get("board")
    if not isinstance(board, list):
        raise _fail("state field 'board' must be a list")
    seen = set()
    for u in board:
        if not isinstance(u, dict):
            raise _fail("board entries must be objects")
        x, y = _int(u, "x", 0, dims[0] - 1), _int(u, "y", 0, dims[1] - 1)
        if (x, y) in seen:
            raise _fail(f"two units on square [{x}, {y}]")
        seen.add((x, y))
        kind = u.get("kind")
        if kind not in KINDS or kind == "":
            raise _fail(f"unknown unit kind {kind!r}")
        items = u.get("items", [])
        if (not isinstance(items, list) or any(not isinstance(i, str) or i not in ITEM_BITS for i in items)
                or len(set(items)) != len(items)):
            raise _fail(f"bad items {items!r} on [{x}, {y}]")
        cell = s.board[x * dims[1] + y]
        cell.kind = KINDS.index(kind)
        cell.owner = _int(u, "owner", 1, 2)
        cell.hp = _int(u, "hp", 0, 30000)
        cell.items = sum(ITEM_BITS[i] for i in items)
        if "max_hp" in u and u["max_hp"] != lib.hr_max_hp(ffi.addressof(cell)):
            raise _fail(f"max_hp of the unit on [{x}, {y}] does not follow from its kind and items")
    hands, decks, seeds = obj.get("hands"), obj.get("decks"), obj.get("deck_seed", {"1": 0, "2": 0})
    if not isinstance(hands, dict) or not isinstance(decks, dict) or not isinstance(seeds, dict):
        raise _fail("state fields 'hands', 'decks' and 'deck_seed' must be objects keyed by '1' and '2'")
    for p in (0, 1):
        key = str(p + 1)
        hand, dk = hands.get(key), decks.get(key)
        if not isinstance(hand, list) or not isinstance(dk, dict):
            raise _fail(f"hands[{key!r}] must be a list and decks[{key!r}] an object")
        for c in hand:
            if c not in CARDS:
                raise _fail(f"unknown card {c!r} in hand {key}")
            s.hand[p][CARDS.index(c)] += 1
        for c, n in dk.items():
            if c not in CARDS or isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 60:
                raise _fail(f"bad deck entry {c!r}: {n!r} for player {key}")
            s.deck[p][CARDS.index(c)] = n
        s.hand_n[p] = len(hand)
        s.deck_n[p] = sum(dk.values())
        s.deck_seed[p] = _int(seeds, key, 0, 2**31 - 1)
        if observer is not None:
            sizes = (obj.get("hand_sizes"), obj.get("deck_sizes"))
            if not all(isinstance(z, dict) for z in sizes):
                raise _fail("an observation needs 'hand_sizes' and 'deck_sizes' objects")
            s.hand_n[p] = _int(sizes[0], key, 0, 60)  # type: ignore[arg-type]
            s.deck_n[p] = _int(sizes[1], key, 0, 60)  # type: ignore[arg-type]
    err = ffi.new("char[]", lib.MG_ERR_LEN)
    rc = lib.hr_finish_import(s, err)
    if rc != lib.MG_OK:
        raise StateError(rc, ffi.string(err).decode())


def public_action(action: dict[str, Any]) -> dict[str, Any]:
    """What the opponent sees of an action: all of it, except a swapped card's identity (the
    card goes back into the hidden deck: only the fact of the swap is seen)."""
    if action["type"] == "swap_card":
        return {"type": "swap_card"}
    return action


def unseen(observation: dict[str, Any]) -> dict[str, int]:
    """The cards the observer has not seen (the opponent's hand and deck together), by name."""
    return dict(observation["decks"][str(3 - observation["observer"])])
