"""Replaying heroes' reference traces (../shared/conformance/README.md): for one record,
load the recorded state, compare the engine's legal-action count with `n_legal` as the
traces' README defines it (the reference lists end_turn only at AP 0), apply the recorded
action and compare the whole resulting state with the recorded `next`, exactly (random
steps too: the engine implements the reference's seeded draw rule)."""

from __future__ import annotations

import json
from typing import Any

from ..._lowlevel import EngineError, ffi, lib
from ...game import Game

_GAMES: dict[tuple[str, str], Game] = {}


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Path -> leaf value; board units are keyed by their square so diffs read well."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list) and obj and all(isinstance(u, dict) and "x" in u for u in obj):
        for u in obj:
            out.update(_flatten({k: v for k, v in u.items() if k not in ("x", "y")},
                                f"{prefix}[{u['x']},{u['y']}]"))
    else:
        out[prefix] = obj
    return out


def diff_states(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Readable differences, comparing only the keys the recorded state has."""
    exp = _flatten(expected)
    act = _flatten({k: v for k, v in actual.items() if k in expected})
    lines = []
    for path in sorted(set(exp) | set(act)):
        if exp.get(path, "<absent>") != act.get(path, "<absent>"):
            want, got = exp.get(path, "<absent>"), act.get(path, "<absent>")
            lines.append(f"  {path}: expected {want!r}, got {got!r}")
    return lines


def check_record(rec: dict[str, Any]) -> list[str]:
    """The differences between one recorded step and the engine's (empty: it matches)."""
    key = (rec["map"], rec["deck_size"])
    if key not in _GAMES:
        _GAMES[key] = Game("heroes", {"map": rec["map"], "deck": rec["deck_size"], "draws": "seeded"})
    game = _GAMES[key]
    try:
        st = game.state_from_json(rec["state"], rng_seed=0)
    except EngineError as e:
        return [f"  recorded state rejected: {e}"]
    problems = []
    n_legal = lib.hr_reference_legal_count(ffi.cast("hr_state *", st._buf))
    if n_legal != rec["n_legal"]:
        problems.append(f"  n_legal: expected {rec['n_legal']}, got {n_legal}")
    action = {k: v for k, v in rec["action"].items() if k != "engine_label"}
    try:
        st.apply(action)
    except (EngineError, ValueError) as e:
        return problems + [f"  action {json.dumps(rec['action'])} rejected: {e}"]
    return problems + diff_states(rec["next"], st.to_json())
