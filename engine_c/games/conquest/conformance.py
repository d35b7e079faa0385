"""Replaying the conquest traces (../shared/conformance/conquest-README.md). Each record starts
from the state the previous one left, so the replayer keeps the engine's state between calls
(records come in file order). A MOVE of several units is the same path for each unit in a
row, all or nothing: it is tried on a copy and kept only if every unit's move is legal. An
END_PHASE that ends a combat move takes exactly the recorded dice. The seven fields of the
README are compared; after a mismatch the replay goes on from the recorded state."""

from __future__ import annotations

from typing import Any

from ..._lowlevel import ffi, lib
from ...game import Game, State

FIELDS = ("round", "player", "phase", "owner", "units", "moved", "result")
_NOW: dict[str, Any] = {"game": None, "state": None}


def _diff(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    return [f"{k}: recorded {want.get(k)!r}, engine {got.get(k)!r}"
            for k in FIELDS if want.get(k) != got.get(k)]


def _codes(game: Game, action: dict[str, Any]) -> list[int] | None:
    """The engine's codes of a recorded action, or None if it cannot even be written."""
    if action.get("type") == "END_PHASE":
        return [0]
    units, path = action.get("units"), action.get("path")
    if not isinstance(units, list) or not units or len(set(units)) != len(units):
        return None  # empty_unit_list, duplicate_unit
    try:
        return [game.action({"type": "move", "unit": u, "path": path}).code for u in units]
    except ValueError:
        return None  # an unknown territory, a unit id out of range, a path of 1 or 4 territories


def _joined(st: State, codes: list[int]) -> list[int]:
    """The record's codes with the units after the first as joins when the first move took
    its empty end territory (then the end is theirs already, and only a join may follow)."""
    if len(codes) < 2:
        return codes
    trial = st.clone()
    moved = lib.cq_apply_dice(ffi.cast("cq_state *", trial._buf), codes[0], ffi.NULL) == 0
    if not moved or trial.to_json()["join"] is None:
        return codes
    return codes[:1] + [c & ~1 for c in codes[1:]]


def _apply(st: State, codes: list[int], dice: list[int] | None) -> tuple[bool, int]:
    """Apply on `st` in place if every code is legal in a row; (accepted, dice used)."""
    trial = st.clone()
    seq = ffi.new("uint8_t[]", dice or [0])
    d = ffi.new("cq_dice *", {"rng": trial._rng, "seq": seq if dice is not None else ffi.NULL,
                              "n": len(dice or []), "used": 0})
    s = ffi.cast("cq_state *", trial._buf)
    for code in codes:
        if lib.cq_apply_dice(s, code, d) != 0:
            return False, d.used
    ffi.memmove(st._buf, trial._buf, len(st.to_bytes()))
    return True, d.used


def check_record(rec: dict[str, Any]) -> list[str]:
    setup = rec.get("setup")
    if setup is not None:
        game = Game("conquest", {"map": setup["map"], "rounds": setup["rounds"], "victory": setup["victory"]})
        st = game.new_state(seed=setup.get("seed", 0))
        _NOW.update(game=game, state=st)
        problems = _diff(setup["state"], st.to_json())
        if st.to_json()["roster"] != setup["roster"]:
            problems.append(f"roster: recorded {setup['roster']}, engine {st.to_json()['roster']}")
        if problems:
            _NOW["state"] = game.state_from_json(setup["state"])
            return ["the initial state differs: " + p for p in problems]
    game, st = _NOW["game"], _NOW["state"]
    if game is None:
        return ["a record before any setup"]
    before = st.to_bytes()
    codes = _codes(game, rec["action"])
    codes = _joined(st, codes) if codes else codes
    if not rec["legal"]:
        if codes is not None:
            accepted, _ = _apply(st, codes, None if codes != [0] else [])
            if accepted:
                _NOW["state"] = game.state_from_json(st.to_json())  # the state moved on anyway
                return [f"the engine accepts an illegal attempt ({rec.get('attempt')})"]
        return [] if st.to_bytes() == before else ["a refused attempt changed the state"]
    if codes is None:
        _NOW["state"] = game.state_from_json(rec["next"])
        return ["the engine cannot read a legal action"]
    dice = rec.get("dice") if codes == [0] and "dice" in rec else None
    accepted, used = _apply(st, codes, dice if dice is not None else ([] if codes == [0] else None))
    problems = []
    if not accepted:
        problems.append("the engine refuses a legal action" + (" (or its dice ran out)" if dice else ""))
    elif dice is not None and used != len(dice):
        problems.append(f"the battles used {used} dice, {len(dice)} recorded")
    problems += _diff(rec["next"], st.to_json())
    if problems:
        _NOW["state"] = game.state_from_json(rec["next"])
    return problems
