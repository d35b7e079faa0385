"""Nim's Python codec: options, the readable action form and the reading of a JSON state
(README.md). The only writer of that form is C (nim.c's nm_write_msgpack, decoded by
`State.to_json`)."""

from __future__ import annotations

from typing import Any

from ..._lowlevel import StateError, ffi, lib
from ...registry import GameOption

MAX_PILES, MAX_PILE, MAX_AP = 8, 15, 8

OPTIONS = (
    GameOption("piles", str, "3,4,5", "objects in each pile, e.g. 3,4,5 (1 to 8 piles of 0 to 15)"),
    GameOption("ap", int, 2, "actions per turn, 1..8"),
    GameOption("misere", bool, False, "true: taking the last object loses"),
    GameOption("turn_limit", int, 100, "a draw when this turn ends"),
)


def _piles(value: Any) -> list[int]:
    if isinstance(value, str):
        try:
            value = [int(x) for x in value.replace(" ", "").split(",") if x]
        except ValueError:
            raise ValueError(f"piles must be numbers separated by commas, not {value!r}") from None
    if (not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_PILES
            or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_PILE for x in value)
            or sum(value) == 0):
        raise ValueError(f"piles must be 1 to {MAX_PILES} piles of 0 to {MAX_PILE} objects, at least one "
                         f"object in all, not {value!r}")
    return list(value)


def _flag(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise ValueError(f"{key} must be true or false, not {value!r}")


def _number(value: Any, key: str, lo: int, hi: int) -> int:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{key} must be an integer in {lo}..{hi}, not {value!r}")
    return value


def make_config(options: dict[str, Any]) -> dict[str, Any]:
    """Complete a nim config with its defaults, checking every value (values given on a
    command line arrive as text and are read here)."""
    unknown = set(options) - {o.name for o in OPTIONS}
    if unknown:
        raise ValueError(f"unknown nim option(s): {', '.join(sorted(unknown))}")
    cfg = {o.name: options.get(o.name, o.default) for o in OPTIONS}
    cfg["piles"] = _piles(cfg["piles"])
    cfg["ap"] = _number(cfg["ap"], "ap", 1, MAX_AP)
    cfg["misere"] = _flag(cfg["misere"], "misere")
    cfg["turn_limit"] = _number(cfg["turn_limit"], "turn_limit", 1, 10000)
    return cfg


def fill_config(cfg: dict[str, Any], out: Any) -> None:
    c = ffi.cast("nm_config *", out)
    c.npiles = len(cfg["piles"])
    for i, n in enumerate(cfg["piles"]):
        c.piles[i] = n
    c.ap = cfg["ap"]
    c.misere = int(cfg["misere"])
    c.turn_limit = cfg["turn_limit"]


# ---- actions: type in bits 0-3 (0 end_turn, 1 take), pile in bits 4-7, count in 8-11 ----

def action_to_dict(code: int) -> dict[str, Any]:
    if code & 0xF == 1:
        return {"type": "take", "pile": (code >> 4) & 0xF, "count": (code >> 8) & 0xF}
    return {"type": "end_turn"} if code == 0 else {"type": "?", "code": code}


def action_from_dict(d: dict[str, Any]) -> int:
    """The integer code of a readable action; ValueError naming the bad field."""
    if not isinstance(d, dict):
        raise ValueError("an action must be a map with a 'type' field")
    t = d.get("type")
    if t == "end_turn":
        if set(d) - {"type"}:
            extra = ", ".join(sorted(set(d) - {"type"}))
            raise ValueError(f"unexpected field(s) for an end_turn action: {extra}")
        return 0
    if t != "take":
        raise ValueError(f"action type must be take or end_turn, not {t!r}")
    unexpected = set(d) - {"type", "pile", "count"}
    if unexpected:
        raise ValueError(f"unexpected field(s) for a take action: {', '.join(sorted(unexpected))}")
    for key in ("pile", "count"):
        if key not in d:
            raise ValueError(f"missing field {key!r}")
    pile, count = d["pile"], d["count"]
    if isinstance(pile, bool) or not isinstance(pile, int) or not 0 <= pile < MAX_PILES:
        raise ValueError(f"action field 'pile' must be an integer in 0..{MAX_PILES - 1}, not {pile!r}")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PILE:
        raise ValueError(f"action field 'count' must be an integer in 1..{MAX_PILE}, not {count!r}")
    return 1 | pile << 4 | count << 8


# ---- JSON states, read (nim.c writes them) -------------------------------------------------

def _fail(msg: str) -> StateError:
    return StateError(lib.MG_ERR_STATE, msg)


def _int(obj: dict[str, Any], key: str, lo: int, hi: int) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _fail(f"state field {key!r} must be an integer in {lo}..{hi}, not {v!r}")
    return v


def _bool(obj: dict[str, Any], key: str) -> bool:
    v = obj.get(key)
    if not isinstance(v, bool):
        raise _fail(f"state field {key!r} must be true or false, not {v!r}")
    return v


def state_from_json(obj: dict[str, Any], cfg: dict[str, Any], out: Any) -> None:
    """Fill `out` (a zeroed nm_state) from the JSON form, checking every field and their
    agreement; StateError naming the field. Missing ap_per_turn, turn_limit and misere come
    from `cfg`."""
    if not isinstance(obj, dict):
        raise _fail("a state must be a JSON object")
    s = ffi.cast("nm_state *", out)
    piles = obj.get("piles")
    if (not isinstance(piles, list) or not 1 <= len(piles) <= MAX_PILES
            or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_PILE for x in piles)):
        raise _fail(f"state field 'piles' must list 1 to {MAX_PILES} piles of 0 to {MAX_PILE} objects")
    taken = obj.get("taken", [False] * len(piles))
    if not isinstance(taken, list) or len(taken) != len(piles) or not all(isinstance(x, bool) for x in taken):
        raise _fail("state field 'taken' must list one true or false per pile")
    s.npiles = len(piles)
    for i, n in enumerate(piles):
        s.pile[i] = n
    s.taken = sum(1 << i for i, x in enumerate(taken) if x)
    s.ap_per_turn = _int(dict(obj, ap_per_turn=obj.get("ap_per_turn", cfg["ap"])), "ap_per_turn", 1, MAX_AP)
    s.ap = _int(obj, "ap", 0, s.ap_per_turn)
    if s.ap + sum(taken) > s.ap_per_turn:
        raise _fail("state fields 'ap' and 'taken' disagree: more takes than the turn's action points allow")
    s.current = _int(obj, "current", 1, 2) - 1
    limit = obj.get("turn_limit", cfg["turn_limit"])
    s.turn_limit = _int(dict(obj, turn_limit=limit), "turn_limit", 1, 10000)
    s.turn = _int(obj, "turn", 1, s.turn_limit)
    s.misere = _bool(dict(obj, misere=obj.get("misere", cfg["misere"])), "misere")
    terminal = _bool(obj, "terminal")
    winner = _int(obj, "winner", 0, 2)
    if winner and not terminal:
        raise _fail("state field 'winner' must be 0 while the game goes on")
    if sum(piles) == 0 and not (terminal and winner):
        raise _fail("every pile is empty: the game must be over with a winner")
    if sum(piles) and terminal and (winner or s.turn < s.turn_limit):
        raise _fail("objects are left: a finished game is a draw at the turn limit")
    s.terminal = terminal
    s.winner = winner - 1 if terminal else -1
    observer = obj.get("observer")
    if observer is not None and (isinstance(observer, bool) or observer not in (1, 2)):
        raise _fail("state field 'observer' must be 1 or 2 when present")
    s.observer = observer - 1 if observer else -1
